package hnsw

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLinearPool drives the pool with random insertions and expansions
// against a plain model: a slice kept sorted (stable, new entries after
// equal ones), truncated to ef, with a set of expanded ids.
func TestLinearPool(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 300; trial++ {
		ef := 1 + rng.IntN(40)
		if trial%3 == 0 {
			ef = poolScanMax + rng.IntN(100) // insertSearch too
		}
		var p linearPool
		p.reset(ef)
		type ent struct {
			d    float32
			id   uint32
			done bool
		}
		var model []ent
		nextID := uint32(0)
		for step := 0; step < 600; step++ {
			if rng.IntN(3) > 0 {
				// Few distinct values, so that ties occur.
				d := float32(rng.IntN(30)) / 4
				if len(model) == ef && d >= model[len(model)-1].d {
					if !p.full() || d < p.worst() {
						t.Fatalf("trial %d: pool accepts %v, model (full, worst %v) rejects", trial, d, model[len(model)-1].d)
					}
					continue
				}
				id := nextID
				nextID++
				p.add(d, id)
				i := len(model)
				for i > 0 && model[i-1].d > d {
					i--
				}
				model = slices.Insert(model, i, ent{d, id, false})
				if len(model) > ef {
					model = model[:ef]
				}
			} else {
				id, ok := p.next()
				want := -1
				for i, e := range model {
					if !e.done {
						want = i
						break
					}
				}
				if ok != (want >= 0) {
					t.Fatalf("trial %d: next ok=%v, model has unexpanded=%v", trial, ok, want >= 0)
				}
				if ok {
					if id != model[want].id {
						t.Fatalf("trial %d: next = %d, want %d", trial, id, model[want].id)
					}
					model[want].done = true
				}
			}
			if p.n != len(model) {
				t.Fatalf("trial %d: pool holds %d, model %d", trial, p.n, len(model))
			}
		}
		got := p.results()
		for i, e := range model {
			if got[i].id != e.id || got[i].d != e.d {
				t.Fatalf("trial %d: results[%d] = %+v, want {%v %d}", trial, i, got[i], e.d, e.id)
			}
		}
	}
}

// TestPoolMatchesHeap: the linear-pool walk (default unfiltered search)
// returns exactly what the two-heap SEARCH-LAYER returns, ids and
// distances, for both storages, every metric, a dimension with a SIMD
// tail (100) and efSearch from 1 to 300 (over 4,000 vectors; 700 under
// -short, still well above the largest efSearch).
func TestPoolMatchesHeap(t *testing.T) {
	n, nq := 4000, 100
	if testing.Short() {
		n, nq = 700, 25
	}
	for _, st := range []Storage{Float32, SQ8} {
		for _, m := range []Metric{L2, IP, Cosine} {
			for _, d := range []int{100, 16} {
				t.Run(fmt.Sprintf("storage=%v/metric=%v/d=%d", st, m, d), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(d), uint64(m)))
					base := clustered(rng, n, d, 20)
					ix := build(t, Options{Dim: d, Metric: m, M: 8, EfConstruction: 64, Seed: 3, Storage: st}, base)
					qs := rows(clustered(rng, nq, d, 20), d)
					for _, ef := range []int{1, 10, 40, 300} {
						for qi, q := range qs {
							got, err := ix.Search(q, 10, SearchParams{EfSearch: ef})
							if err != nil {
								t.Fatal(err)
							}
							want, err := ix.Search(q, 10, SearchParams{EfSearch: ef, forceHeap: true})
							if err != nil {
								t.Fatal(err)
							}
							if !slices.Equal(got, want) {
								t.Fatalf("ef=%d query %d: pool %v\nheap %v", ef, qi, got, want)
							}
						}
					}
				})
			}
		}
	}
}

// TestPoolAfterDelete: once a node is tombstoned, Search leaves the pool
// path (which cannot walk through a node without returning it) and the
// deleted node never comes back.
func TestPoolAfterDelete(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n, d = 800, 24
	base := clustered(rng, n, d, 8)
	ix := build(t, Options{Dim: d, Metric: L2, M: 8, EfConstruction: 64, Seed: 1}, base)
	q := base[5*d : 6*d]
	res, err := ix.Search(q, 5, SearchParams{EfSearch: 32})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].ID != 5 {
		t.Fatalf("nearest to vector 5 is %d", res[0].ID)
	}
	if err := ix.Delete(5); err != nil {
		t.Fatal(err)
	}
	if ix.poolOK(nil) {
		t.Fatal("pool path still enabled after a delete")
	}
	res, err = ix.Search(q, 5, SearchParams{EfSearch: 32})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.ID == 5 {
			t.Fatalf("deleted id 5 returned: %v", res)
		}
	}
	if len(res) != 5 {
		t.Fatalf("got %d results, want 5", len(res))
	}
}

// TestPoolDeleteDuringWalk: a Delete that lands while a pool walk runs
// (simulated by a hook deleting the walk's nearest result before Search
// returns) sends the search to the tombstone-aware heap walk, so the
// deleted node is not returned and k results still are.
func TestPoolDeleteDuringWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const n, d = 800, 24
	base := clustered(rng, n, d, 8)
	for _, st := range []Storage{Float32, SQ8} {
		ix := build(t, Options{Dim: d, Metric: L2, M: 8, EfConstruction: 64, Seed: 1, Storage: st}, base)
		var victim uint32
		calls := 0
		afterPoolWalk = func(w []cand) {
			calls++
			victim = w[0].id &^ poolExpanded
			if err := ix.Delete(victim); err != nil {
				t.Error(err)
			}
		}
		res, err := ix.Search(base[7*d:8*d], 5, SearchParams{EfSearch: 32})
		afterPoolWalk = nil
		if err != nil {
			t.Fatal(err)
		}
		if calls != 1 {
			t.Fatalf("%v: pool walk ran %d times, want 1", st, calls)
		}
		if len(res) != 5 {
			t.Fatalf("%v: got %d results, want 5", st, len(res))
		}
		for _, r := range res {
			if r.ID == victim {
				t.Fatalf("%v: node %d, deleted during the walk, returned: %v", st, victim, res)
			}
		}
	}
}
