package hnsw

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestOptionsValidate(t *testing.T) {
	err := Options{Dim: 0, Metric: 9, M: 1, EfConstruction: -1, InitialCapacity: -2}.Validate()
	if err == nil {
		t.Fatal("want error")
	}
	for _, want := range []string{"Dim", "Metric", "M 1", "EfConstruction", "InitialCapacity"} {
		if !contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	if err := (Options{Dim: 8}).EnsureDefaults().Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without Dim succeeded")
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestEmptyAndErrors(t *testing.T) {
	ix, err := New(Options{Dim: 4})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ix.Search([]float32{1, 2, 3, 4}, 5, SearchParams{})
	if err != nil || len(res) != 0 {
		t.Fatalf("empty search: %v %v", res, err)
	}
	if _, err := ix.Add(1, []float32{1}); !errors.Is(err, ErrDimension) {
		t.Fatalf("Add wrong dim: %v", err)
	}
	if _, err := ix.Search([]float32{1}, 1, SearchParams{}); !errors.Is(err, ErrDimension) {
		t.Fatalf("Search wrong dim: %v", err)
	}
	if _, err := ix.Add(1, []float32{1, float32(math.NaN()), 0, 0}); !errors.Is(err, ErrInvalidVector) {
		t.Fatalf("Add NaN: %v", err)
	}
	if _, err := ix.AddBatch([]uint64{1, 2}, []float32{1, 2, 3, 4, 1, 2, float32(math.Inf(1)), 4}, 1); !errors.Is(err, ErrInvalidVector) {
		t.Fatalf("AddBatch Inf: %v", err)
	}
	if ix.Len() != 0 {
		t.Fatalf("rejected vectors were inserted: Len %d", ix.Len())
	}
	if err := ix.Delete(3); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Delete missing: %v", err)
	}
	id, err := ix.Add(77, []float32{1, 0, 0, 0})
	if err != nil || id != 0 {
		t.Fatal(id, err)
	}
	res, err = ix.Search([]float32{1, 0, 0, 0}, 3, SearchParams{})
	if err != nil || len(res) != 1 || res[0].ID != 0 || res[0].Label != 77 || res[0].Distance != 0 {
		t.Fatalf("one-element search: %+v %v", res, err)
	}
}

// TestExactOnTinySets: with ef ≥ n the search must return the exact
// top-k (every node is reachable and gets scored).
func TestExactOnTinySets(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, m := range []Metric{L2, IP, Cosine} {
		for _, n := range []int{1, 2, 3, 10, 57} {
			d := 5
			base := randVecs(rng, n, d)
			ix := build(t, Options{Dim: d, Metric: m, M: 4, EfConstruction: 16, Seed: 3}, base)
			for qi := 0; qi < 5; qi++ {
				q := randVecs(rng, 1, d)
				k := min(4, n)
				want := bruteForce(m, base, d, q, k, nil)
				got, err := ix.Search(q, k, SearchParams{EfSearch: n})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want.ids) {
					t.Fatalf("%v n=%d: %d results, want %d", m, n, len(got), len(want.ids))
				}
				for j := range got {
					if got[j].ID != want.ids[j] && absf(got[j].Distance-want.dists[j]) > 1e-4 {
						t.Fatalf("%v n=%d rank %d: got %d (%.6f) want %d (%.6f)", m, n, j, got[j].ID, got[j].Distance, want.ids[j], want.dists[j])
					}
					if got[j].Label != 1000+uint64(got[j].ID) {
						t.Fatalf("label %d for id %d", got[j].Label, got[j].ID)
					}
				}
			}
		}
	}
}

func absf(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

// TestRecallRandom is the -short recall check on seeded synthetic data,
// for every metric and every heuristic option.
func TestRecallRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const d, nq, k = 32, 50, 10
	n, efc, ef := 3000, 100, 128
	type combo struct{ ext, keep bool }
	combos := []combo{{false, false}, {true, false}, {false, true}, {true, true}}
	if testing.Short() {
		// ef well below n, so that the walk (not exhaustion) is tested.
		n, efc, ef, combos = 1000, 48, 64, []combo{{false, false}, {true, true}}
	}
	base := clustered(rng, n, d, 40)
	qs := rows(clustered(rng, nq, d, 40), d)
	for _, m := range []Metric{L2, IP, Cosine} {
		truth := make([]gt, nq)
		for i, q := range qs {
			truth[i] = bruteForce(m, base, d, q, k, nil)
		}
		for _, opt := range combos {
			ix := build(t, Options{Dim: d, Metric: m, M: 12, EfConstruction: efc, Seed: 1, ExtendCandidates: opt.ext, KeepPrunedConnections: opt.keep}, base)
			r := meanRecall(t, m, base, d, qs, truth, k, func(q []float32) []Result {
				res, err := ix.Search(q, k, SearchParams{EfSearch: ef})
				if err != nil {
					t.Fatal(err)
				}
				return res
			})
			t.Logf("metric=%v ext=%v keep=%v recall@10=%.4f", m, opt.ext, opt.keep, r)
			// Inner product over vectors of varying norm is not a metric
			// and the graph heuristics (which assume one) are known to do
			// worse there; USE vectors are near unit length, where ip ≈
			// cosine and the real-data tests demand 0.99.
			floor := 0.97
			if m == IP {
				floor = 0.93
			}
			if r < floor {
				t.Errorf("metric=%v ext=%v keep=%v: recall@10 %.4f < %.2f", m, opt.ext, opt.keep, r, floor)
			}
		}
	}
}

// TestDeterministicBuild: a single-threaded build with the same seed gives
// the same graph.
func TestDeterministicBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	base := randVecs(rng, 500, 8)
	a := build(t, Options{Dim: 8, M: 6, EfConstruction: 32, Seed: 5}, base)
	b := build(t, Options{Dim: 8, M: 6, EfConstruction: 32, Seed: 5}, base)
	for id := uint32(0); id < 500; id++ {
		if a.levels[id] != b.levels[id] {
			t.Fatalf("level of %d differs", id)
		}
		for lc := 0; lc <= int(a.levels[id]); lc++ {
			la, lb := a.links(id, lc), b.links(id, lc)
			for i := 0; i <= int(la[0]); i++ {
				if la[i] != lb[i] {
					t.Fatalf("links of %d at %d differ", id, lc)
				}
			}
		}
	}
}

func TestSearchRejectsBadQuery(t *testing.T) {
	ix, err := New(Options{Dim: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Add(1, []float32{1, 0}); err != nil {
		t.Fatal(err)
	}
	for _, q := range [][]float32{{float32(math.NaN()), 0}, {0, float32(math.Inf(-1))}} {
		if _, err := ix.Search(q, 1, SearchParams{}); !errors.Is(err, ErrInvalidVector) {
			t.Errorf("query %v: err %v, want ErrInvalidVector", q, err)
		}
	}
	if _, err := ix.Search([]float32{1, 0}, -1, SearchParams{}); !errors.Is(err, ErrInvalidK) {
		t.Errorf("k=-1: err %v, want ErrInvalidK", err)
	}
	if r, err := ix.Search([]float32{1, 0}, 0, SearchParams{}); err != nil || len(r) != 0 {
		t.Errorf("k=0: %v %v, want no results", r, err)
	}
}
