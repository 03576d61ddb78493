package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stratasearch/strata/datasets"
)

func TestExactCosine(t *testing.T) {
	docs := datasets.Matrix[float32]{N: 4, D: 2, Data: []float32{1, 0, 0, 1, 2, 2, -1, 0}}
	qs := datasets.Matrix[float32]{N: 1, D: 2, Data: []float32{1, 0.1}}
	got := exactCosine(docs, qs, 3, nil)
	if want := []int64{0, 2, 1}; !equalIDs(got[0], want) {
		t.Errorf("all: %v, want %v", got[0], want)
	}
	got = exactCosine(docs, qs, 3, func(i int) bool { return i%2 == 1 })
	if want := []int64{1, 3}; !equalIDs(got[0], want) {
		t.Errorf("odd ids: %v, want %v", got[0], want)
	}
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestLanceDBSuite runs LanceDB (tools/lancedb-peer) and Strata on a tiny
// seeded set. LanceDB's last sweep point probes every partition with a
// refine factor of 20, so its recall@10 there is exact; Strata's HNSW on
// 300 vectors must be near exact too.
func TestLanceDBSuite(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 21))
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda sigma")
	const n, nq, d = 300, 5, 16
	p := &LanceDBParams{DocVecs: datasets.Matrix[float32]{N: n, D: d, Data: make([]float32, n*d)},
		QueryVecs: datasets.Matrix[float32]{N: nq, D: d, Data: make([]float32, nq*d)}, Sweep: "2:1,17:20"}
	for i := 0; i < n; i++ {
		var ws []string
		for j := 0; j < 6; j++ {
			ws = append(ws, words[rng.IntN(len(words))])
		}
		p.Docs = append(p.Docs, strings.Join(ws, " "))
	}
	for i := range p.DocVecs.Data {
		p.DocVecs.Data[i] = float32(rng.NormFloat64())
	}
	for i := range p.QueryVecs.Data {
		p.QueryVecs.Data[i] = float32(rng.NormFloat64())
	}
	for i := 0; i < nq; i++ {
		p.Queries = append(p.Queries, words[i])
	}
	cfg := Config{OutDir: t.TempDir(), WorkDir: t.TempDir(), LanceDB: p, Command: "TestLanceDBSuite"}
	if testing.Verbose() {
		cfg.Log = os.Stderr
	}
	r, err := Run(context.Background(), cfg, []string{"lancedb"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.LanceDB) != 1 {
		t.Fatalf("%d runs", len(r.LanceDB))
	}
	run := r.LanceDB[0]
	if run.PeerVersion != LanceDBVersion || run.StrataBytes <= 0 || run.PeerBytes <= 0 || run.PeerIngestS <= 0 || run.StrataIngestS <= 0 || len(run.PeerSweep) != 4 {
		t.Errorf("run %+v", run)
	}
	// The breakdown's files add up to StrataBytes, and the warm segment
	// is broken down by section.
	var files int64
	sections := 0
	for _, l := range run.StrataByteBreakdown {
		name, val, ok := strings.Cut(l, ": ")
		nb, err := strconv.ParseInt(val, 10, 64)
		if !ok || err != nil {
			t.Fatalf("breakdown line %q", l)
		}
		if strings.Contains(name, " ") {
			sections++
		} else {
			files += nb
		}
	}
	if files != run.StrataBytes || sections < 4 {
		t.Errorf("breakdown files sum to %d bytes (store %d), %d section lines: %v", files, run.StrataBytes, sections, run.StrataByteBreakdown)
	}
	modes := map[string]LanceDBMode{}
	for _, m := range run.Modes {
		modes[m.Mode] = m
		if m.StrataP50Ms <= 0 || m.PeerP50Ms <= 0 || m.StrataP99Ms < m.StrataP50Ms || m.PeerP99Ms < m.PeerP50Ms {
			t.Errorf("%s: %+v", m.Mode, m)
		}
	}
	for _, name := range []string{"vector", "filtered"} {
		m, ok := modes[name]
		if !ok {
			t.Fatalf("no %s mode in %+v", name, run.Modes)
		}
		if m.StrataRecall < 0.9 {
			t.Errorf("%s: strata recall@10 %.3f on 300 vectors", name, m.StrataRecall)
		}
		if m.PeerRecall < m.StrataRecall && m.Note == "" {
			t.Errorf("%s: lancedb point below strata's recall without a note: %+v", name, m)
		}
	}
	if len(modes) != 4 {
		t.Errorf("modes %v", run.Modes)
	}
	rep, _ := os.ReadFile(filepath.Join(cfg.OutDir, "report.md"))
	if !strings.Contains(string(rep), "lancedb") {
		t.Errorf("report.md lacks the lancedb ratios")
	}
}

// TestNearestTexts: each query gets the text of its nearest document by
// cosine, checked against a brute-force loop in float64.
func TestNearestTexts(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n, nq, d = 300, 40, 8
	docs := make([]string, n)
	dv := datasets.Matrix[float32]{N: n, D: d, Data: make([]float32, n*d)}
	qv := datasets.Matrix[float32]{N: nq, D: d, Data: make([]float32, nq*d)}
	for i := range dv.Data {
		dv.Data[i] = float32(rng.NormFloat64())
	}
	for i := range qv.Data {
		qv.Data[i] = float32(rng.NormFloat64())
	}
	for i := range docs {
		docs[i] = fmt.Sprintf("w%d", i)
	}
	got := nearestTexts(docs, dv, qv)
	if len(got) != nq {
		t.Fatalf("%d texts for %d queries", len(got), nq)
	}
	for q := 0; q < nq; q++ {
		best, bestCos := -1, math.Inf(-1)
		for i := 0; i < n; i++ {
			var dot, nd, nqq float64
			for j := 0; j < d; j++ {
				a, b := float64(dv.Row(i)[j]), float64(qv.Row(q)[j])
				dot, nd, nqq = dot+a*b, nd+a*a, nqq+b*b
			}
			if c := dot / math.Sqrt(nd*nqq); c > bestCos {
				best, bestCos = i, c
			}
		}
		if got[q] != docs[best] {
			t.Fatalf("query %d: %q, want %q", q, got[q], docs[best])
		}
	}
}
