package tier

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stratasearch/strata/engine/hnsw"
)

// vectorRows returns n rows (ids r00000, r00001, ...) with d-dimensional
// standard normal vectors drawn from rng, each with content.
func vectorRows(rng *rand.Rand, n, d int, content string) []segRow {
	rows := make([]segRow, n)
	for i := range rows {
		v := make([]float32, d)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		rows[i] = segRow{doc: &Document{ID: fmt.Sprintf("r%05d", i), Content: content, Vector: v}, birth: 1}
	}
	return rows
}

// TestSegmentBuildSteps: the HNSW build asks boost once per step of
// vectors (buildStep; 512 under -short); with one goroutine throughout
// the stepped build writes the same bytes every time (boost nil or false
// alike) and the graph one AddBatch builds; with boost true it builds on
// every core and the graph still finds nearly every row's own vector and
// near-exact top 10s.
func TestSegmentBuildSteps(t *testing.T) {
	step := buildStep
	if testing.Short() {
		step = 512 // several steps, small enough for -race
	}
	n := step + step/2
	rows := vectorRows(rand.New(rand.NewPCG(11, 29)), n, testDim, "x")
	o := segBuildOptions{dim: testDim, metric: L2, m: 16, efConstruction: 64, threads: 1, step: step}
	a, err := buildSegment(rows, o)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	o.boost = func() bool { calls++; return false }
	b, err := buildSegment(rows, o)
	if err != nil {
		t.Fatal(err)
	}
	if want := (n + step - 1) / step; calls != want {
		t.Fatalf("boost asked %d times for %d vectors, want %d", calls, n, want)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("two one-goroutine builds of the same rows differ")
	}
	// The stepped one-goroutine graph is the one a single AddBatch builds.
	ref, err := hnsw.New(hnsw.Options{Dim: testDim, Metric: L2, M: 16, EfConstruction: 64, InitialCapacity: n})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	labels := make([]uint64, n)
	vecs := make([]float32, 0, n*testDim)
	for i, r := range rows {
		labels[i] = uint64(i)
		vecs = append(vecs, r.doc.Vector...)
	}
	if _, err := ref.AddBatch(labels, vecs, 1); err != nil {
		t.Fatal(err)
	}
	wa, err := openSegment(slices.Clone(a), "steps.sst", testDim, L2)
	if err != nil {
		t.Fatal(err)
	}
	defer wa.free()
	var refBytes, segBytes bytes.Buffer
	if _, err := ref.WriteTo(&refBytes); err != nil {
		t.Fatal(err)
	}
	if _, err := wa.index.WriteTo(&segBytes); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(refBytes.Bytes(), segBytes.Bytes()) {
		t.Fatalf("stepped segment graph (%d bytes) differs from one AddBatch's (%d bytes)", segBytes.Len(), refBytes.Len())
	}

	o.boost = func() bool { return true }
	c, err := buildSegment(rows, o)
	if err != nil {
		t.Fatal(err)
	}
	w, err := openSegment(slices.Clone(c), "boost.sst", testDim, L2)
	if err != nil {
		t.Fatal(err)
	}
	defer w.free()
	if w.index == nil || w.index.Len() != n {
		t.Fatalf("boosted segment index: %v", w.index)
	}
	r := rand.New(rand.NewPCG(3, 4))
	found, hits := 0, 0
	const queries, k = 200, 10
	for qi := 0; qi < queries; qi++ {
		row := r.IntN(n)
		q := rows[row].doc.Vector
		res, err := w.index.Search(q, k, hnsw.SearchParams{EfSearch: 64})
		if err != nil {
			t.Fatal(err)
		}
		want := exactTopK(rows, q, k)
		for _, h := range res {
			if int(w.vecRow[h.ID]) == row {
				found++
			}
			if want[int(w.vecRow[h.ID])] {
				hits++
			}
		}
	}
	if found < queries*98/100 {
		t.Errorf("a row's own vector was among its hits for %d of %d queries, want >= 98%%", found, queries)
	}
	if recall := float64(hits) / (queries * k); recall < 0.95 {
		t.Errorf("recall@10 %.3f of the boosted build, want >= 0.95", recall)
	}
}

// exactTopK returns the rows of the k vectors nearest q (L2), by brute
// force.
func exactTopK(rows []segRow, q []float32, k int) map[int]bool {
	type hit struct {
		row int
		d   float32
	}
	hs := make([]hit, len(rows))
	for i, r := range rows {
		var d float32
		for j, x := range r.doc.Vector {
			d += (x - q[j]) * (x - q[j])
		}
		hs[i] = hit{i, d}
	}
	slices.SortFunc(hs, func(a, b hit) int {
		if a.d < b.d {
			return -1
		}
		if a.d > b.d {
			return 1
		}
		return a.row - b.row
	})
	out := map[int]bool{}
	for _, h := range hs[:k] {
		out[h.row] = true
	}
	return out
}
