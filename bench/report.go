package bench

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Report renders report.md: the machine header, the ratio tables (the
// headline), then the absolute figures, labelled machine-specific.
func Report(res *Results, plots []string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Strata benchmark report\n\n")
	w("Command: `%s`  \nSuites: %s. Started %s, finished %s. Schema %s (results.json).\n\n", res.Command, strings.Join(res.Suites, ", "), res.Started, res.Finished, res.Schema)
	if res.Emulated {
		w("**EMULATED RUN: every timing below is %s.** The run checks that the suites work on %s.\n\n", EmulatedLabel, res.Machine.GOARCH)
	}
	for _, e := range res.Errors {
		w("**FAILED**:\n\n```\n%s\n```\n\n", strings.TrimSpace(e))
	}
	if res.Quick {
		var q []string
		for _, s := range res.Suites {
			switch s {
			case annSuiteName:
				q = append(q, fmt.Sprintf("real ANN data sets are subsampled to %d base vectors spread evenly over the base and the first %d queries (see the data set table), 6 efSearch points, 2 rounds of 0.1 s", QuickBase, QuickQueries))
			case kernelsSuiteName:
				if res.Emulated {
					q = append(q, "kernels stream 4 MiB inputs for 10 ms per point (emulated)")
				} else {
					q = append(q, "kernels stream 64 MiB inputs for 50 ms per point")
				}
			case "lexical":
				q = append(q, "the lexical suite times 1 round of 1 pass and 200 phrase queries")
			case "hybrid":
				q = append(q, "the hybrid bootstrap uses 2,000 resamples")
			case ingestSuiteName:
				q = append(q, fmt.Sprintf("the ingest suite indexes $(go env GOROOT)/src/{%s} only", strings.Join(IngestQuickRoots, ",")))
			case stalenessSuiteName:
				q = append(q, "the staleness api run lasts 2 s and the watch run makes 15 edits")
			case serverSuiteName:
				q = append(q, "the server load lasts 5 s")
			}
		}
		w("**Quick mode**: %s; figures are indicative only.\n\n", strings.Join(q, "; "))
	}
	if len(res.SuiteSeconds) > 0 {
		total := 0.0
		var parts []string
		for _, st := range res.SuiteSeconds {
			total += st.Seconds
			parts = append(parts, fmt.Sprintf("%s %.0f s", st.Suite, st.Seconds))
		}
		w("Suite wall times: %s; total %.0f s.\n\n", strings.Join(parts, ", "), total)
	}
	m := res.Machine
	w("## Machine\n\n")
	w("| | |\n|---|---|\n")
	host := ""
	if res.Emulated {
		host = " (the host CPU, seen through the emulator)"
	}
	w("| CPU | %s%s |\n| SIMD flags | %s |\n| cores | %d |\n| memory | %.1f GiB |\n", m.CPUModel, host, strings.Join(m.CPUFlags, " "), m.Cores, float64(m.MemoryBytes)/(1<<30))
	w("| Go | %s %s/%s |\n| kernel | %s |\n| asm level | %s (supported: %s) |\n", m.GoVersion, m.GOOS, m.GOARCH, m.Kernel, m.AsmLevel, strings.Join(m.AsmLevels, ", "))
	if m.BandwidthGBs > 0 {
		w("| read bandwidth | %.2f GB/s (asm.Bandwidth, one thread) |\n", m.BandwidthGBs)
	}
	w("| load average at start | %s |\n\n", m.LoadAvg)
	if len(res.Peers) > 0 {
		w("Peers:\n\n| engine | version | driver |\n|---|---|---|\n")
		for _, p := range res.Peers {
			w("| %s | %s | `%s` |\n", p.Engine, p.Version, p.Driver)
		}
		w("\n")
	}
	if len(res.Datasets) > 0 {
		w("Data sets (sha256 prefixes of the base and query files every engine read):\n\n| name | metric | n | nq | d | M / efC | subset | ground truth | sha256 |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, d := range res.Datasets {
			sub := d.Subset
			if sub == "" {
				sub = "full"
			}
			w("| %s | %s | %d | %d | %d | %d / %d | %s | %s | %s |\n", d.Name, d.Metric, d.N, d.NQ, d.D, d.M, d.EfConst, sub, d.GTNote, d.SHA256)
		}
		w("\n")
	}
	if len(res.ANN) > 0 {
		w("## ANN: ratios Strata / peer (the headline)\n\n")
		w("One thread, k = 10, same data files and ground truth for every engine, engines alternated point by point. ")
		w("QPS ratios above 1 mean Strata is faster; build-time and bytes ratios below 1 mean Strata is faster or smaller. ")
		w("`cpu` figures divide by process CPU seconds (robust to other load on a shared machine), `wall` by elapsed seconds. ")
		w("A blank cell: one of the two curves never reached that recall. ")
		w("`*`: a curve starts above that recall, so its first point (efSearch = k) stands in for it.\n\n")
		byDS := map[string][]Ratio{}
		var names []string
		for _, r := range res.Ratios {
			if r.Suite != annSuiteName {
				continue
			}
			if _, ok := byDS[r.Dataset]; !ok {
				names = append(names, r.Dataset)
			}
			byDS[r.Dataset] = append(byDS[r.Dataset], r)
		}
		figs := []string{}
		for _, t := range RecallTargets {
			figs = append(figs, fmt.Sprintf("qps_cpu@recall=%.2f", t), fmt.Sprintf("qps_wall@recall=%.2f", t))
		}
		figs = append(figs, "build_cpu_s", "build_wall_s", "bytes_per_vector")
		ivfFigs := []string{}
		for _, t := range RecallTargets[:2] {
			ivfFigs = append(ivfFigs, fmt.Sprintf("qps_cpu@recall=%.2f", t), fmt.Sprintf("qps_wall@recall=%.2f", t))
		}
		ivfFigs = append(ivfFigs, "train_cpu_s", "add_cpu_s", "train_wall_s", "add_wall_s", "bytes_per_vector")
		flatFigs := []string{"qps_cpu@recall=0.99", "qps_wall@recall=0.99", "bytes_per_vector"}
		// kind: "hnsw", "ivf" or "flat" (the Strata engine strataFor names).
		table := func(ratios []Ratio, figs []string, kind string) {
			var peers []string
			val := map[string]float64{}
			star := map[string]bool{}
			for _, r := range ratios {
				_, isIVF := ivfPairs[r.Peer]
				isFlat := isFlatPeer(r.Peer)
				if (kind == "ivf") != isIVF || (kind == "flat") != isFlat {
					continue
				}
				if !contains(peers, r.Peer) {
					peers = append(peers, r.Peer)
				}
				val[r.Peer+"|"+r.Figure] = r.Value
				star[r.Peer+"|"+r.Figure] = r.Note != ""
			}
			if len(peers) == 0 {
				return
			}
			switch kind {
			case "ivf":
				w("IVF-PQ + refine, Strata engine / FAISS peer (same nlist, M, nbits, k_factor, nprobe sweep):\n\n| Strata / peer |")
			case "flat":
				w("Flat exact search, whole query set in one call, one thread (recall 1 up to ties, so QPS @0.99 is the exact-search QPS):\n\n| Strata / peer |")
			default:
				w("| peer |")
			}
			for _, f := range figs {
				w(" %s |", strings.NewReplacer("@recall=", " @", "_", " ").Replace(f))
			}
			w("\n|---|")
			for range figs {
				w("---|")
			}
			w("\n")
			for _, p := range peers {
				if kind != "hnsw" {
					w("| %s / %s |", strataFor(p), p)
				} else {
					w("| %s |", p)
				}
				for _, f := range figs {
					if v, ok := val[p+"|"+f]; ok {
						mark := ""
						if star[p+"|"+f] {
							mark = "*"
						}
						w(" %.2f×%s |", v, mark)
					} else {
						w(" |")
					}
				}
				w("\n")
			}
			w("\n")
		}
		for _, ds := range names {
			w("### %s\n\n", ds)
			table(byDS[ds], figs, "hnsw")
			table(byDS[ds], ivfFigs, "ivf")
			table(byDS[ds], flatFigs, "flat")
		}
		if len(plots) > 0 {
			w("Recall@10 against QPS per CPU second of the engine's process (log scale; equal to single-thread wall QPS on an idle machine), one figure per data set:\n\n")
			for _, p := range plots {
				w("![%s](%s)\n\n", p, filepath.Base(p))
			}
		}
		w("## ANN: absolute figures (machine-specific)\n\n")
		for _, ds := range res.Datasets {
			if ds.IVF != "" {
				w("IVF-PQ on %s: %s.\n\n", ds.Name, ds.IVF)
			}
		}
		for _, ds := range res.Datasets {
			w("### %s\n\n| engine | build wall s | build cpu s | bytes/vector | QPS cpu @0.90 | @0.95 | @0.99 |\n|---|---|---|---|---|---|---|\n", ds.Name)
			for _, r := range res.ANN {
				if r.Dataset != ds.Name {
					continue
				}
				w("| %s | %.2f | %.2f | %.0f |", r.Engine, r.BuildWallS, r.BuildCPUS, r.BytesPerVector)
				for _, a := range r.At {
					if a.Reached && a.AboveStart {
						w(" ≥%.0f* |", a.QPSCPU)
					} else if a.Reached {
						w(" %.0f |", a.QPSCPU)
					} else {
						w(" – |")
					}
				}
				w("\n")
			}
			ivfHead := false
			for _, r := range res.ANN {
				if r.Dataset != ds.Name || r.Params.Nlist == 0 {
					continue
				}
				if !ivfHead {
					w("\n| IVF-PQ engine | index | train wall s | train cpu s | add wall s | add cpu s | bytes/vector |\n|---|---|---|---|---|---|---|\n")
					ivfHead = true
				}
				w("| %s | %s | %.2f | %.2f | %.2f | %.2f | %.0f |\n", r.Engine, r.Index, r.TrainWallS, r.TrainCPUS, r.AddWallS, r.AddCPUS, r.BytesPerVector)
			}
			w("\n| engine | efSearch / nprobe | recall@10 | QPS wall | QPS cpu |\n|---|---|---|---|---|\n")
			for _, r := range res.ANN {
				if r.Dataset != ds.Name {
					continue
				}
				for _, p := range r.Points {
					par := fmt.Sprintf("ef=%d", p.EfSearch)
					if p.Nprobe > 0 {
						par = fmt.Sprintf("nprobe=%d", p.Nprobe)
					}
					w("| %s | %s | %.4f | %.0f | %.0f |\n", r.Engine, par, p.Recall, p.QPSWall, p.QPSCPU)
				}
			}
			w("\n")
		}
		w("Bytes per vector: HNSW engines: Strata from hnsw.Index.MemoryBytes; peers from the growth of their process RSS over the build (includes allocator slack). IVF-PQ engines: %s.\n\n", ivfBytesMethod)
		reportReferenceChecks(w, res)
	}
	if len(res.Kernels) > 0 {
		w("## Kernels (asm): speed-up over generic and share of memory bandwidth\n\n")
		w("Speed-up = ns/op(generic) / ns/op(level), the headline; ns/op and rates are machine-specific (best of 5 wall-clock runs; on a loaded machine expect noise). ")
		w("Bandwidth fraction = input GB/s / asm.Bandwidth (%.2f GB/s); it is meaningful for the streaming kernels (n ≫ cache), not for single pairs that run in L1.\n\n", res.Machine.BandwidthGBs)
		w("| kernel | shape | level | speed-up vs generic | ns/op | GFLOP/s | codes/s | GB/s | of bandwidth |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, k := range res.Kernels {
			gf, cs := "", ""
			if k.GFLOPs > 0 {
				gf = fmt.Sprintf("%.2f", k.GFLOPs)
			}
			if k.CodesS > 0 {
				cs = fmt.Sprintf("%.3g", k.CodesS)
			}
			w("| %s | %s | %s | %.2f× | %.1f | %s | %s | %.2f | %.0f%% |\n", k.Kernel, k.Shape, k.Level, k.SpeedupVsGeneric, k.NsOp, gf, cs, k.GBs, 100*k.BandwidthFraction)
		}
		w("\n")
	}
	reportOtherRatios(w, res)
	reportIngest(w, res)
	reportStaleness(w, res)
	reportServer(w, res)
	for _, n := range res.Notes {
		w("Note: %s\n\n", n)
	}
	return b.String()
}

// reportOtherRatios renders the ratios of the suites other than ann (the
// lexical suite's headline: Strata / Xapian, FTS5, Bleve).
func reportOtherRatios(w func(string, ...any), res *Results) {
	bySuite := map[string][]Ratio{}
	var suites []string
	for _, r := range res.Ratios {
		if r.Suite == annSuiteName {
			continue
		}
		if _, ok := bySuite[r.Suite]; !ok {
			suites = append(suites, r.Suite)
		}
		bySuite[r.Suite] = append(bySuite[r.Suite], r)
	}
	for _, s := range suites {
		switch s {
		case ripgrepSuiteName, lancedbSuiteName:
			// Latency and byte figures are peer / Strata (above 1: Strata
			// is faster or smaller), success@5 is Strata / peer; each
			// figure names its ratio.
			w("## %s: ratios (the headline)\n\n", s)
			w("Each figure names its ratio: latency, time and bytes as %s / Strata (above 1: Strata is faster or smaller), success@5 as Strata / %s (above 1: Strata finds more). Per-run figures: results.json (%q).\n\n", s, s, s)
			w("| figure | peer | Strata | peer | ratio | note |\n|---|---|---:|---:|---:|---|\n")
		default:
			w("## %s: ratios Strata / peer (the headline)\n\n", s)
			w("QPS ratios above 1: Strata is faster; time and bytes ratios below 1: Strata is faster or smaller; nDCG ratios above 1: Strata ranks better. Full tables in %s/report.md.\n\n", s)
			w("| figure | peer | Strata | peer | Strata / peer | goal |\n|---|---|---:|---:|---:|---|\n")
		}
		for _, r := range bySuite[s] {
			w("| %s | %s | %.4g | %.4g | %.3f | %s |\n", r.Figure, r.Peer, r.Strata, r.PeerVal, r.Value, r.Note)
		}
		w("\n")
	}
}

func reportIngest(w func(string, ...any), res *Results) {
	if len(res.Ingest) == 0 {
		return
	}
	w("## Ingest: `searchd index` end to end (machine-specific)\n\n")
	w("ingest.Index into a collection created as `searchd index` creates it (code analyzer, lexical-only, WAL sync always) but with automatic flushing off, one pass, GOMAXPROCS %d; then one timed Flush (hot → warm) and one Archive (warm → cold). α_storage = tier bytes / raw text bytes read.\n\n", res.Ingest[0].GOMAXPRO)
	w("| tree | files | chunks | raw MB | wall s | cpu s | files/s | MB/s | chunks/s | flush s | hot bytes (α) | warm bytes (α) | cold bytes (α) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range res.Ingest {
		tier := map[string]TierSize{}
		for _, t := range r.Tiers {
			tier[t.Tier] = t
		}
		cold := tier["cold"].Skipped
		if cold == "" {
			cold = fmt.Sprintf("%d (%.3f)", tier["cold"].Bytes, tier["cold"].Alpha)
		}
		w("| %s | %d | %d | %.1f | %.2f | %.2f | %.0f | %.2f | %.0f | %.2f | %d (%.3f) | %d (%.3f) | %s |\n", r.Subset, r.Files, r.Chunks, float64(r.RawBytes)/1e6, r.WallS, r.CPUS, r.FilesS, r.MBs, r.ChunksS, r.FlushS,
			tier["hot"].Bytes, tier["hot"].Alpha, tier["warm"].Bytes, tier["warm"].Alpha, cold)
	}
	w("\n")
	for _, t := range res.Ingest[0].Tiers {
		if t.Method != "" {
			w("- %s: %s\n", t.Tier, t.Method)
		}
	}
	w("\n")
}

func reportStaleness(w func(string, ...any), res *Results) {
	if len(res.Staleness) == 0 {
		return
	}
	w("## Staleness: E_stale under concurrent edits (must be 0)\n\n")
	w("| mode | seconds | docs | writers / readers | writes | queries | overlapping reads | hits checked | **E_stale** | unverified stale | fresh lag p50 / max ms |\n|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range res.Staleness {
		lag := ""
		if r.Mode == "watch" {
			lag = fmt.Sprintf("%.1f / %.1f", r.LagP50Ms, r.LagMaxMs)
		}
		w("| %s | %.1f | %d | %d / %d | %d | %d | %d | %d | **%d** | %d | %s |\n", r.Mode, r.Seconds, r.Docs, r.Writers, r.Readers, r.Writes, r.Queries, r.Overlapping, r.Hits, r.EStale, r.UnverifiedStale, lag)
	}
	w("\n")
	for _, r := range res.Staleness {
		w("- %s: %s\n", r.Mode, r.Note)
	}
	w("\n")
}

func reportServer(w func(string, ...any), res *Results) {
	if len(res.Server) == 0 {
		return
	}
	w("## Server: bounded loopback load (machine-specific)\n\n")
	for _, r := range res.Server {
		w("`%s` (%s); the client and the server share this machine's cores.\n\n", r.Command, r.Params)
		w("| op | count | ops/s | p50 ms | p99 ms | max ms | errors |\n|---|---:|---:|---:|---:|---:|---:|\n")
		for _, o := range r.Ops {
			w("| %s | %d | %.0f | %.2f | %.2f | %.2f | %d |\n", o.Op, o.Count, o.OpsS, o.P50Ms, o.P99Ms, o.MaxMs, o.Errors)
		}
		w("\n")
	}
}
