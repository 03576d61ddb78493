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
	if res.Quick {
		w("**Quick mode**: data sets are subsampled (see the data set table); figures are indicative only.\n\n")
	}
	m := res.Machine
	w("## Machine\n\n")
	w("| | |\n|---|---|\n")
	w("| CPU | %s |\n| SIMD flags | %s |\n| cores | %d |\n| memory | %.1f GiB |\n", m.CPUModel, strings.Join(m.CPUFlags, " "), m.Cores, float64(m.MemoryBytes)/(1<<30))
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
		table := func(ratios []Ratio, figs []string, ivf bool) {
			var peers []string
			val := map[string]float64{}
			star := map[string]bool{}
			for _, r := range ratios {
				if _, isIVF := ivfPairs[r.Peer]; isIVF != ivf {
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
			if ivf {
				w("IVF-PQ + refine, Strata engine / FAISS peer (same nlist, M, nbits, k_factor, nprobe sweep):\n\n| Strata / peer |")
			} else {
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
				if ivf {
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
			table(byDS[ds], figs, false)
			table(byDS[ds], ivfFigs, true)
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
	for _, n := range res.Notes {
		w("Note: %s\n\n", n)
	}
	return b.String()
}
