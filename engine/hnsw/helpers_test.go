package hnsw

import (
	"github.com/stratasearch/strata/internal/testenv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/datasets"
	"github.com/stratasearch/strata/eval"
)

// refDist is the obviously-correct float64 reference distance; for cosine
// both sides are normalised in float64.
func refDist(m Metric, a, b []float32) float64 {
	var s, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		switch m {
		case L2:
			s += (x - y) * (x - y)
		default:
			s += x * y
		}
		na += x * x
		nb += y * y
	}
	switch m {
	case L2:
		return s
	case IP:
		return 1 - s
	}
	if na == 0 || nb == 0 {
		return 1
	}
	return 1 - s/math.Sqrt(na*nb)
}

type gt struct {
	ids   []uint32
	dists []float32
}

// bruteForce returns the exact k nearest of q among rows of base (n×d)
// for which ok(i) holds (nil = all), ties broken by id.
func bruteForce(m Metric, base []float32, d int, q []float32, k int, ok func(uint32) bool) gt {
	n := len(base) / d
	type pair struct {
		d  float64
		id uint32
	}
	ps := make([]pair, 0, n)
	for i := 0; i < n; i++ {
		if ok != nil && !ok(uint32(i)) {
			continue
		}
		ps = append(ps, pair{refDist(m, q, base[i*d:(i+1)*d]), uint32(i)})
	}
	sort.Slice(ps, func(a, b int) bool {
		if ps[a].d != ps[b].d {
			return ps[a].d < ps[b].d
		}
		return ps[a].id < ps[b].id
	})
	var g gt
	for _, p := range ps[:min(k, len(ps))] {
		g.ids = append(g.ids, p.id)
		g.dists = append(g.dists, float32(p.d))
	}
	return g
}

// meanRecall runs every query through search and returns mean recall@k
// against truth, with the tie rule of package eval over exact (float64)
// distances; for a query with fewer than k true neighbours, recall is
// over min(k, |truth|).
func meanRecall(t testing.TB, m Metric, base []float32, d int, queries [][]float32, truth []gt, k int, search func(q []float32) []Result) float64 {
	t.Helper()
	var sum float64
	for i, q := range queries {
		res := search(q)
		kk := min(k, len(truth[i].ids))
		if kk == 0 {
			continue
		}
		ids := make([]uint32, len(res))
		ds := make([]float32, len(res))
		for j, r := range res {
			ids[j] = r.ID
			ds[j] = float32(refDist(m, q, base[int(r.ID)*d:int(r.ID+1)*d]))
		}
		r, err := eval.Recall(ids, ds, truth[i].ids, truth[i].dists, kk, eval.SmallerIsBetter)
		if err != nil {
			t.Fatal(err)
		}
		sum += r
	}
	return sum / float64(len(queries))
}

func randVecs(rng *rand.Rand, n, d int) []float32 {
	v := make([]float32, n*d)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// clustered returns n d-dim vectors around c random centres (more like
// real embeddings than isotropic noise).
func clustered(rng *rand.Rand, n, d, c int) []float32 {
	centres := randVecs(rng, c, d)
	v := make([]float32, n*d)
	for i := 0; i < n; i++ {
		ci := rng.IntN(c)
		for j := 0; j < d; j++ {
			v[i*d+j] = centres[ci*d+j] + 0.35*float32(rng.NormFloat64())
		}
	}
	return v
}

func rows(v []float32, d int) [][]float32 {
	out := make([][]float32, len(v)/d)
	for i := range out {
		out[i] = v[i*d : (i+1)*d]
	}
	return out
}

type useSet struct {
	name    string
	docs    []float32
	queries []float32
	d       int
}

var useCache sync.Map

// loadUSE reads a real USE-512 collection; it skips when the dataset
// directory is absent, except under CI=true where that is a failure.
func loadUSE(t testing.TB, name string) *useSet {
	t.Helper()
	if v, ok := useCache.Load(name); ok {
		return v.(*useSet)
	}
	testenv.SkipIfEmulated(t, "reads a real dataset")
	dir, err := datasets.Dir()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("datasets: %v", err)
		}
		t.Skipf("datasets not available: %v", err)
	}
	docs, err := datasets.ReadFvecs(filepath.Join(dir, name, "use512-docs.fvecs"))
	if err != nil {
		t.Fatal(err)
	}
	qs, err := datasets.ReadFvecs(filepath.Join(dir, name, "use512-queries.fvecs"))
	if err != nil {
		t.Fatal(err)
	}
	s := &useSet{name: name, docs: docs.Data, queries: qs.Data, d: docs.D}
	useCache.Store(name, s)
	return s
}

// build inserts base (n×d) single-threaded with labels = 1000+i.
func build(t testing.TB, o Options, base []float32) *Index {
	t.Helper()
	ix, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	n := len(base) / o.Dim
	labels := make([]uint64, n)
	for i := range labels {
		labels[i] = 1000 + uint64(i)
	}
	if _, err := ix.AddBatch(labels, base, 1); err != nil {
		t.Fatal(err)
	}
	return ix
}

func bitmapOf(ids []uint32) *roaring.Bitmap { return roaring.BitmapOf(ids...) }
