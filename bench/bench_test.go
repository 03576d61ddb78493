package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	if len(res.ANN) != 1+len(ANNPeers) {
		t.Fatalf("%d runs, want Strata + %d peers", len(res.ANN), len(ANNPeers))
	}
	for _, p := range ANNPeers {
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
		if len(r.Points) != len(r.Params.EfSearch) {
			t.Errorf("%s: %d points for %d efSearch values", r.Engine, len(r.Points), len(r.Params.EfSearch))
		}
		if r.BuildWallS <= 0 || r.BuildCPUS <= 0 {
			t.Errorf("%s: build %g s wall, %g s cpu", r.Engine, r.BuildWallS, r.BuildCPUS)
		}
		last := r.Points[len(r.Points)-1]
		// Every engine is an HNSW with M=16, efC=200: at ef=80 on 2,000
		// clustered 24-d points recall must be near 1. This proves the ids
		// came back in the base order and the ground truth is shared.
		if last.Recall < 0.95 {
			t.Errorf("%s: recall@10 %.3f at ef=%d, want ≥ 0.95", r.Engine, last.Recall, last.EfSearch)
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
		if s.Engine != EngineStrata || s.Peer || !p.Peer || p.Engine != q.Peer || p.PID <= 0 || len(p.Points) == 0 {
			t.Fatalf("ratio %+v: not Strata (%s) against a real peer run (%s, pid %d)", q, s.Engine, p.Engine, p.PID)
		}
		want := func(r ANNRun) float64 {
			switch q.Figure {
			case "build_wall_s":
				return r.BuildWallS
			case "build_cpu_s":
				return r.BuildCPUS
			case "bytes_per_vector":
				return r.BytesPerVector
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
	}
	for _, p := range ANNPeers {
		if perPeer[p] < 2 {
			t.Errorf("peer %s: %d ratios, want build ratios at least", p, perPeer[p])
		}
	}
	for _, f := range []string{"report.md", "recall-qps-00-synthetic-24.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	rep, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"## Machine", "ratios Strata / peer", "hnswlib-native", "usearch", "faiss-hnswflat"} {
		if !strings.Contains(string(rep), want) {
			t.Errorf("report.md lacks %q", want)
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
