package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratasearch/strata/datasets"
)

// peersMissing reports why the ann peers cannot run here, or "".
func peersMissing() string {
	var why []string
	if _, err := os.Stat(hnswlibInclude); err != nil {
		why = append(why, hnswlibInclude+" missing")
	}
	if _, err := exec.LookPath("g++"); err != nil {
		why = append(why, "g++ missing")
	}
	if _, err := exec.LookPath("node"); err != nil {
		why = append(why, "node missing")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		why = append(why, "npm missing")
	}
	if err := exec.Command(systemPython, "-c", "import numpy, faiss, hnswlib").Run(); err != nil {
		why = append(why, systemPython+" cannot import numpy, faiss, hnswlib")
	}
	return strings.Join(why, "; ")
}

// TestHarnessSynthetic runs the ann suite end to end on a tiny generated
// data set with every peer, then checks the written results.json against
// the schema and that every ratio was computed from a real peer run.
func TestHarnessSynthetic(t *testing.T) {
	if why := peersMissing(); why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("peers missing in CI (make peers): %s", why)
		}
		t.Skipf("peers missing (make peers): %s", why)
	}
	n := 2000
	if testing.Short() {
		n = 500
	}
	out := t.TempDir()
	cfg := Config{
		OutDir:    out,
		WorkDir:   t.TempDir(),
		Synthetic: &SyntheticSpec{N: n, NQ: 50, D: 24, Metric: "l2", Seed: 3},
		Command:   "TestHarnessSynthetic",
	}
	if testing.Verbose() {
		cfg.Log = os.Stderr
	}
	if _, err := Run(context.Background(), cfg, []string{"ann"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkSchema(t, b)
	var res Results
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		t.Fatal(err)
	}
	allPeers := append(append(append([]string(nil), ANNPeers...), ANNIVFPeers...), ANNFlatPeers...)
	// The strong FAISS peers run when make peers-strong has built them.
	hnswPeers, ivfPeers, flatPeers := ANNPeers, ANNIVFPeers, ANNFlatPeers
	strong := strongPeersBuilt(t)
	if strong {
		allPeers = append(allPeers, ANNStrongPeers...)
		hnswPeers = append(append([]string(nil), ANNPeers...), PeerFAISSAVX2HNSW)
		ivfPeers = append(append([]string(nil), ANNIVFPeers...), PeerFAISSAVX2IVFPQ8, PeerFAISSAVX2IVFPQ4)
		flatPeers = append(append([]string(nil), ANNFlatPeers...), PeerFAISSAVX2Flat)
	} else if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "make peers-strong") }) {
		t.Errorf("strong peers absent but no note says so: %q", res.Notes)
	}
	if len(res.ANN) != 4+len(allPeers) {
		t.Fatalf("%d runs, want 4 Strata engines + %d peers", len(res.ANN), len(allPeers))
	}
	for _, p := range allPeers {
		found := false
		for _, r := range res.ANN {
			if r.Engine == p {
				found = true
				if !r.Peer || r.PID <= 0 || r.PID == os.Getpid() {
					t.Errorf("%s: peer %v pid %d: not a separate peer process", p, r.Peer, r.PID)
				}
			}
		}
		if !found {
			t.Errorf("peer %s did not run", p)
		}
		info := false
		for _, pi := range res.Peers {
			info = info || (pi.Engine == p && pi.Version != "")
		}
		if !info {
			t.Errorf("peer %s: no version recorded", p)
		}
	}
	for _, r := range res.ANN {
		sweep := r.Params.EfSearch
		flat := r.Engine == EngineStrataFlat || isFlatPeer(r.Engine)
		switch {
		case r.Params.Nlist > 0:
			sweep = r.Params.Nprobe
			checkIVFRun(t, r)
		case flat:
			// Exact search: one point, recall 1 (checked below), nothing
			// to build on Strata's side.
			sweep = []int{0}
			if r.BytesPerVector != 4*24 {
				t.Errorf("%s: %g bytes/vector, want 4·d = 96", r.Engine, r.BytesPerVector)
			}
		}
		if len(r.Points) != len(sweep) || len(sweep) == 0 {
			t.Fatalf("%s: %d points for %d sweep values", r.Engine, len(r.Points), len(sweep))
		}
		if (r.BuildWallS <= 0 || r.BuildCPUS <= 0) && r.Engine != EngineStrataFlat {
			t.Errorf("%s: build %g s wall, %g s cpu", r.Engine, r.BuildWallS, r.BuildCPUS)
		}
		if flat && r.Points[0].Recall < 0.999 {
			t.Errorf("%s: exact search recall@10 %.4f, want 1", r.Engine, r.Points[0].Recall)
		}
		last := r.Points[len(r.Points)-1]
		// HNSW engines (M=16, efC=200) at ef=80, and IVF-PQ engines at
		// nprobe = nlist (every list) with refinement, on 2,000 clustered
		// 24-d points: recall must be near 1. This proves the ids came back
		// in the base order and the ground truth is shared.
		if last.Recall < 0.95 {
			t.Errorf("%s: recall@10 %.3f at ef=%d nprobe=%d, want ≥ 0.95", r.Engine, last.Recall, last.EfSearch, last.Nprobe)
		}
		for _, p := range r.Points {
			if p.Rounds != 2 || p.Reps < 1 || p.QPSWall <= 0 || p.QPSCPU <= 0 || p.Recall < 0 || p.Recall > 1 {
				t.Errorf("%s ef=%d: bad point %+v", r.Engine, p.EfSearch, p)
			}
		}
	}
	// Every ratio must be recomputable from a Strata run and a peer run.
	if len(res.Ratios) == 0 {
		t.Fatal("no ratios")
	}
	perPeer := map[string]int{}
	for _, q := range res.Ratios {
		if q.StrataRun < 0 || q.StrataRun >= len(res.ANN) || q.PeerRun < 0 || q.PeerRun >= len(res.ANN) {
			t.Fatalf("ratio %+v: run index out of range", q)
		}
		s, p := res.ANN[q.StrataRun], res.ANN[q.PeerRun]
		if s.Engine != strataFor(q.Peer) || s.Engine != q.StrataEngine || s.Peer || !p.Peer || p.Engine != q.Peer || p.PID <= 0 || len(p.Points) == 0 {
			t.Fatalf("ratio %+v: not its Strata engine (%s) against a real peer run (%s, pid %d)", q, s.Engine, p.Engine, p.PID)
		}
		if s.Params.Nlist != p.Params.Nlist || s.Params.M != p.Params.M || s.Params.Nbits != p.Params.Nbits || s.Params.KFactor != p.Params.KFactor {
			t.Errorf("ratio %+v: parameters differ: %+v vs %+v", q, s.Params, p.Params)
		}
		want := func(r ANNRun) float64 {
			switch q.Figure {
			case "build_wall_s":
				return r.BuildWallS
			case "build_cpu_s":
				return r.BuildCPUS
			case "bytes_per_vector":
				return r.BytesPerVector
			case "train_wall_s":
				return r.TrainWallS
			case "train_cpu_s":
				return r.TrainCPUS
			case "add_wall_s":
				return r.AddWallS
			case "add_cpu_s":
				return r.AddCPUS
			}
			for i, tr := range RecallTargets {
				switch q.Figure {
				case fmt.Sprintf("qps_wall@recall=%.2f", tr):
					return r.At[i].QPSWall
				case fmt.Sprintf("qps_cpu@recall=%.2f", tr):
					return r.At[i].QPSCPU
				}
			}
			t.Fatalf("unknown ratio figure %q", q.Figure)
			return 0
		}
		if ws, wp := want(s), want(p); !near(q.Strata, ws) || !near(q.PeerVal, wp) || !near(q.Value, ws/wp) {
			t.Errorf("ratio %+v does not match the runs (strata %g, peer %g)", q, ws, wp)
		}
		perPeer[q.Peer]++
		perPeer[q.Peer+"|"+q.Figure]++
	}
	for _, p := range hnswPeers {
		if perPeer[p] < 2 {
			t.Errorf("peer %s: %d ratios, want build ratios at least", p, perPeer[p])
		}
	}
	for _, p := range flatPeers {
		for _, f := range []string{"qps_cpu@recall=0.99", "bytes_per_vector"} {
			if perPeer[p+"|"+f] != 1 {
				t.Errorf("peer %s: %d %s ratios, want 1", p, perPeer[p+"|"+f], f)
			}
		}
	}
	for _, p := range ivfPeers {
		for _, f := range []string{"train_cpu_s", "build_cpu_s", "bytes_per_vector"} {
			if perPeer[p+"|"+f] != 1 {
				t.Errorf("peer %s: %d %s ratios, want 1", p, perPeer[p+"|"+f], f)
			}
		}
	}
	for _, f := range []string{"report.md", "recall-qps-00-synthetic-24.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	rep, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"## Machine", "ratios Strata / peer", "hnswlib-native", "usearch", "faiss-hnswflat",
		"strata-ivfpq8 / faiss-ivfpq8", "strata-ivfpq4fs / faiss-ivfpq4fs", "strata-flat / faiss-flat", "IndexRefineFlat(IVF16,PQ12x4fs", "nprobe=16"} {
		if !strings.Contains(string(rep), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strong {
		for _, want := range []string{"faiss-avx2-hnswflat", "strata-ivfpq8 / faiss-avx2-ivfpq8", "strata-ivfpq4fs / faiss-avx2-ivfpq4fs",
			"strata-flat / faiss-avx2-flat", "IndexRefineFlat(IVF16,PQ12x4fs, k_factor=10, by_residual=True, spherical=False) [avx2]", "libfaiss_avx2.so"} {
			if !strings.Contains(string(rep), want) {
				t.Errorf("report.md lacks %q", want)
			}
		}
	}
}

// strongPeersBuilt reports whether make peers-strong has built FAISS for
// the strong peers (never in CI: CI does not build FAISS).
func strongPeersBuilt(t *testing.T) bool {
	t.Helper()
	dir, err := FAISSAVX2Dir()
	if err != nil {
		t.Fatal(err)
	}
	ok, _ := faissAVX2Built(dir)
	return ok
}

// TestStrongPeersMissing: without a peers-strong build the strong peers
// are left out with a note naming what is missing and how to build it.
func TestStrongPeersMissing(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{RepoRoot: "/nonexistent"}.EnsureDefaults()
	drivers, note, err := prepareStrongPeers(context.Background(), cfg, dir)
	if err != nil || len(drivers) != 0 {
		t.Fatalf("missing build: %d drivers, err %v; want none, no error", len(drivers), err)
	}
	for _, want := range []string{filepath.Join(dir, "STAMP"), "make peers-strong", PeerFAISSAVX2IVFPQ4} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	// A STAMP alone is not a build: the library is named as missing.
	if err := os.WriteFile(filepath.Join(dir, "STAMP"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, note, _ = prepareStrongPeers(context.Background(), cfg, dir); !strings.Contains(note, "libfaiss_avx2.so missing") {
		t.Errorf("STAMP only: note %q", note)
	}
}

// checkIVFRun checks an IVF-PQ run of the synthetic data set (d = 24:
// nlist 16, M 12) against the configuration and the code sizes.
func checkIVFRun(t *testing.T, r ANNRun) {
	t.Helper()
	p := r.Params
	wantKF := map[int]int{8: ivfKFactor8, 4: ivfKFactor4}[p.Nbits]
	if p.Nlist != 16 || p.M != 12 || wantKF == 0 || p.KFactor != wantKF || !p.ByResidual || len(p.EfSearch) != 0 {
		t.Errorf("%s: params %+v", r.Engine, p)
	}
	if got, want := fmt.Sprint(p.Nprobe), "[1 2 4 8 16]"; got != want {
		t.Errorf("%s: nprobe sweep %s, want %s", r.Engine, got, want)
	}
	if r.TrainCPUS <= 0 || r.TrainWallS <= 0 || r.AddWallS <= 0 || r.AddCPUS < 0 ||
		r.TrainCPUS+r.AddCPUS > r.BuildCPUS*1.001+1e-9 || r.Index == "" {
		t.Errorf("%s: train %g/%g s, add %g/%g s, build %g s cpu, index %q", r.Engine, r.TrainWallS, r.TrainCPUS, r.AddWallS, r.AddCPUS, r.BuildCPUS, r.Index)
	}
	// Code bytes M·nbits/8 plus the id: 4 bytes in Strata, 8 (idx_t) in FAISS.
	id := 4.0
	if r.Peer {
		id = 8
	}
	if want := float64(p.M*p.Nbits)/8 + id; r.BytesPerVector != want {
		t.Errorf("%s: %g bytes per vector, want %g", r.Engine, r.BytesPerVector, want)
	}
	for _, pt := range r.Points {
		if pt.EfSearch != 0 || pt.Nprobe < 1 {
			t.Errorf("%s: point %+v is not an nprobe point", r.Engine, pt)
		}
	}
	if pt := r.Points; len(pt) > 1 && pt[len(pt)-1].Recall < pt[0].Recall {
		t.Errorf("%s: recall falls from %.3f at nprobe 1 to %.3f at nprobe = nlist", r.Engine, pt[0].Recall, pt[len(pt)-1].Recall)
	}
}

// TestIVFSetup checks quick-mode nlist scaling and the nprobe sweep.
func TestIVFSetup(t *testing.T) {
	for _, c := range []struct {
		name          string
		v             ivfSetup
		n, d          int
		metric        datasets.Metric
		quick         bool
		nlist, m8, m4 int
		residual      bool
		sweep         string
	}{
		{"glove quick", ivfSetup{nlist: 1024, m8: 50, m4: 50}, 20000, 100, datasets.InnerProduct, true, 566, 50, 50, false, "[1 2 4 8 16 32 64 128 256]"},
		{"glove full", ivfSetup{nlist: 1024, m8: 50, m4: 50}, 331479, 100, datasets.InnerProduct, false, 1024, 50, 50, false, "[1 2 4 8 16 32 64 128 256]"},
		{"fashion quick", ivfSetup{nlist: 256, m8: 56, m4: 56}, 20000, 784, datasets.L2, true, 256, 56, 56, true, "[1 2 4 8 16 32 64]"},
		{"vaswani quick", ivfSetup{nlist: 64, m8: 64, m4: 128}, 11429, 512, datasets.InnerProduct, true, 64, 64, 128, false, "[1 2 4 8 16 32 64]"},
		{"tiny quick", ivfSetup{nlist: 64, m8: 7, m4: 8}, 400, 16, datasets.L2, true, 64, 16, 8, true, "[1 2 4 8 16 32 64]"},
		{"odd nlist", ivfSetup{nlist: 20, m8: 4, m4: 4}, 5000, 8, datasets.L2, false, 20, 4, 4, true, "[1 2 4 8 16 20]"},
		{"small quick", ivfSetup{nlist: 128, m8: 4, m4: 4}, 400, 8, datasets.L2, true, 80, 4, 4, true, "[1 2 4 8 16 32 64]"},
	} {
		v := c.v
		v.finish(c.n, c.d, c.metric, c.quick)
		if v.nlist != c.nlist || v.m8 != c.m8 || v.m4 != c.m4 || v.residual != c.residual || fmt.Sprint(v.nprobe) != c.sweep {
			t.Errorf("%s: nlist %d m %d/%d residual %v sweep %v; want %d %d/%d %v %s", c.name, v.nlist, v.m8, v.m4, v.residual, v.nprobe, c.nlist, c.m8, c.m4, c.residual, c.sweep)
		}
		if c.quick && v.nlist < v.refNlist && !strings.Contains(v.note, "quick mode") {
			t.Errorf("%s: note %q does not say nlist was scaled", c.name, v.note)
		}
		for _, nb := range []int{8, 4} {
			p := v.params(nb)
			if p.Nbits != nb || p.Nlist != v.nlist || p.K != annK || p.Threads != 1 {
				t.Errorf("%s: params(%d) = %+v", c.name, nb, p)
			}
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// checkSchema checks the required top-level and per-run keys by name, so a
// renamed JSON field fails here even though Go decoding would accept it.
func checkSchema(t *testing.T, b []byte) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["schema"] != SchemaVersion {
		t.Errorf("schema %v, want %s", m["schema"], SchemaVersion)
	}
	for _, k := range []string{"command", "started", "finished", "suites", "quick", "threads", "machine", "peers", "datasets", "ann", "ratios"} {
		if _, ok := m[k]; !ok {
			t.Errorf("results.json lacks %q", k)
		}
	}
	mach, _ := m["machine"].(map[string]any)
	for _, k := range []string{"cpu_model", "cpu_flags", "cores", "memory_bytes", "go_version", "kernel", "asm_level"} {
		if _, ok := mach[k]; !ok {
			t.Errorf("machine lacks %q", k)
		}
	}
	runs, _ := m["ann"].([]any)
	for _, r := range runs {
		rm, _ := r.(map[string]any)
		for _, k := range []string{"engine", "version", "peer", "pid", "dataset", "params", "build_wall_s", "build_cpu_s", "bytes_per_vector", "points", "qps_at_recall"} {
			if _, ok := rm[k]; !ok {
				t.Errorf("ann run lacks %q", k)
			}
		}
		pts, _ := rm["points"].([]any)
		for _, p := range pts {
			pm, _ := p.(map[string]any)
			for _, k := range []string{"efSearch", "recall", "rounds", "reps", "wall_s", "cpu_s", "qps_wall", "qps_cpu"} {
				if _, ok := pm[k]; !ok {
					t.Errorf("ann point lacks %q", k)
				}
			}
		}
	}
	rs, _ := m["ratios"].([]any)
	for _, r := range rs {
		rm, _ := r.(map[string]any)
		for _, k := range []string{"suite", "dataset", "figure", "peer", "strata", "peer_value", "ratio", "strata_run", "peer_run"} {
			if _, ok := rm[k]; !ok {
				t.Errorf("ratio lacks %q", k)
			}
		}
	}
}

// TestQPSAt checks the interpolation against hand-computed values.
func TestQPSAt(t *testing.T) {
	pts := []ANNPoint{{Recall: 0.8, QPSWall: 1000}, {Recall: 0.9, QPSWall: 800}, {Recall: 1.0, QPSWall: 400}}
	w := func(p ANNPoint) float64 { return p.QPSWall }
	for _, c := range []struct {
		r    float64
		want float64
		ok   bool
	}{{0.85, 900, true}, {0.9, 800, true}, {0.95, 600, true}, {0.5, 1000, true}} {
		got, ok := qpsAt(pts, c.r, w)
		if ok != c.ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("qpsAt(%g) = %g, %v; want %g, %v", c.r, got, ok, c.want, c.ok)
		}
	}
	if _, ok := qpsAt(pts[:2], 0.95, w); ok {
		t.Error("qpsAt reached 0.95 on a curve that stops at 0.9")
	}
}

// TestConfigValidate lists all problems at once.
func TestConfigValidate(t *testing.T) {
	err := Config{Threads: -1, Synthetic: &SyntheticSpec{N: 1, Metric: "cos"}}.Validate()
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{"OutDir", "Threads", "Synthetic", "Metric"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := Run(context.Background(), Config{OutDir: t.TempDir()}, []string{"nope"}); err == nil || !strings.Contains(err.Error(), "unknown suite") {
		t.Errorf("unknown suite: %v", err)
	}
}

// TestPeerFailures: a missing or crashing peer is an error carrying the
// peer's stderr, never a silent skip.
func TestPeerFailures(t *testing.T) {
	if _, err := startPeer("x", []string{filepath.Join(t.TempDir(), "no-such-driver")}, nil); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing driver: %v", err)
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	if _, err := startPeer("x", []string{"sh", "-c", "echo boom >&2; exit 3"}, nil); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("crashing driver: %v", err)
	}
	if _, err := startPeer("x", []string{"sh", "-c", `echo '{"engine":"y"}'; exec sleep 5`}, nil); err == nil || !strings.Contains(err.Error(), "introduced itself") {
		t.Errorf("wrong engine name: %v", err)
	}
	// A peer that answers a search with the wrong number of ids.
	p, err := startPeer("x", []string{"sh", "-c", `echo '{"engine":"x"}'; read l; echo '{"ef":10,"reps":1,"wall_s":0.1,"cpu_s":0.1,"ids":[1,2]}'; read l`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	if _, err := p.search(10, 0, 5, 10); err == nil || !strings.Contains(err.Error(), "bad reply") {
		t.Errorf("short search reply: %v", err)
	}
}
