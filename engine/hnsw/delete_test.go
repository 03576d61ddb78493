package hnsw

import (
	"math/rand/v2"
	"testing"
)

// checkRepaired walks the graph: no live node's list (and, after a full
// sweep, no list at all) holds a deleted id, and every live node is
// reachable from the entry point at layer 0 (the layer every search ends
// on; upper layers only choose the layer-0 start).
func checkRepaired(t *testing.T, ix *Index) {
	t.Helper()
	n := uint32(ix.Len())
	for id := uint32(0); id < n; id++ {
		for lc := 0; lc <= int(ix.levels[id]); lc++ {
			l := ix.links(id, lc)
			for i := 1; i <= int(l[0]); i++ {
				if ix.isDeleted(l[i]) {
					t.Fatalf("node %d (deleted=%v) layer %d links deleted %d", id, ix.isDeleted(id), lc, l[i])
				}
				if int(ix.levels[l[i]]) < lc {
					t.Fatalf("node %d layer %d links %d of level %d", id, lc, l[i], ix.levels[l[i]])
				}
			}
		}
	}
	ep, maxL, ok := ix.entry()
	if !ok {
		t.Fatal("no entry point")
	}
	if ix.isDeleted(ep) {
		t.Fatalf("entry point %d is deleted", ep)
	}
	if int(ix.levels[ep]) != maxL {
		t.Fatalf("entry %d has level %d, maxLevel %d", ep, ix.levels[ep], maxL)
	}
	seen := make([]bool, n)
	stack := []uint32{ep}
	seen[ep] = true
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for lc := 0; lc <= int(ix.levels[u]); lc++ {
			l := ix.links(u, lc)
			for i := 1; i <= int(l[0]); i++ {
				if v := l[i]; !seen[v] {
					seen[v] = true
					stack = append(stack, v)
				}
			}
		}
	}
	unreached := 0
	for id := uint32(0); id < n; id++ {
		if !ix.isDeleted(id) && !seen[id] {
			unreached++
		}
	}
	if unreached > 0 {
		t.Fatalf("%d live nodes unreachable from the entry point", unreached)
	}
}

func repairAll(t *testing.T, ix *Index, step int) int {
	t.Helper()
	calls := 0
	for {
		calls++
		more, err := ix.RepairDeleted(step)
		if err != nil {
			t.Fatal(err)
		}
		if !more && !ix.rep.sweeping {
			return calls
		}
		if calls > 1<<20 {
			t.Fatal("repair does not terminate")
		}
	}
}

// deleteAndCompare deletes a seeded random 30% (always including the
// entry point), checks that tombstones hide at once, repairs in bounded
// steps, checks the graph, and compares recall@10 with a fresh build
// over the remaining vectors.
func deleteAndCompare(t *testing.T, o Options, ix *Index, base []float32, qs [][]float32, ef int) {
	d := o.Dim
	n := len(base) / d
	rng := rand.New(rand.NewPCG(30, 30))
	del := make([]bool, n)
	ep, _, _ := ix.entry()
	del[ep] = true
	for _, i := range rng.Perm(n)[:n*3/10] {
		del[i] = true
	}
	for i, x := range del {
		if x {
			if err := ix.Delete(uint32(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if e, _, _ := ix.entry(); ix.isDeleted(e) {
		t.Fatal("deleted entry point not replaced")
	}
	live := func(id uint32) bool { return !del[id] }
	// Tombstones hide immediately, before any repair.
	for _, q := range qs[:min(10, len(qs))] {
		res, _ := ix.Search(q, 10, SearchParams{EfSearch: ef})
		if len(res) != 10 {
			t.Fatalf("%d results before repair", len(res))
		}
		for _, r := range res {
			if del[r.ID] {
				t.Fatalf("deleted id %d returned", r.ID)
			}
		}
	}
	calls := repairAll(t, ix, 500)
	// Work is bounded per call: the three passes over n nodes cannot
	// finish in fewer than ⌈n/500⌉+1 calls.
	if calls < (n+499)/500+1 {
		t.Errorf("repair of %d nodes finished in %d calls of ≤500", n, calls)
	}
	t.Logf("repair: %d calls of ≤500 nodes, %d orphans reattached", calls, ix.rep.orphans)
	checkRepaired(t, ix)

	truth := make([]gt, len(qs))
	for i, q := range qs {
		truth[i] = bruteForce(o.Metric, base, d, q, 10, live)
	}
	rAfter := meanRecall(t, o.Metric, base, d, qs, truth, 10, func(q []float32) []Result {
		res, _ := ix.Search(q, 10, SearchParams{EfSearch: ef})
		for _, r := range res {
			if del[r.ID] {
				t.Fatalf("deleted id %d returned after repair", r.ID)
			}
		}
		return res
	})
	// Fresh build over the remaining rows; map ids back through labels.
	var rest []float32
	var rowOf []uint32
	for i := 0; i < n; i++ {
		if !del[i] {
			rest = append(rest, base[i*d:(i+1)*d]...)
			rowOf = append(rowOf, uint32(i))
		}
	}
	fresh := build(t, o, rest)
	rFresh := meanRecall(t, o.Metric, base, d, qs, truth, 10, func(q []float32) []Result {
		res, _ := fresh.Search(q, 10, SearchParams{EfSearch: ef})
		for j := range res {
			res[j].ID = rowOf[res[j].ID]
		}
		return res
	})
	t.Logf("recall@10 after delete+repair %.4f, fresh build %.4f", rAfter, rFresh)
	if rAfter < rFresh-0.01 {
		t.Errorf("recall after repair %.4f more than 0.01 below fresh build %.4f", rAfter, rFresh)
	}
}

func TestDeleteRepairRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	o := Options{Dim: 24, Metric: L2, M: 12, EfConstruction: 100, Seed: 2}
	n := 2500
	if testing.Short() {
		n = 1200
	}
	base := clustered(rng, n, o.Dim, 30)
	ix := build(t, o, base)
	qs := rows(clustered(rng, 60, o.Dim, 30), o.Dim)
	deleteAndCompare(t, o, ix, base, qs, 64)
}

func TestDeleteRepairUSE(t *testing.T) {
	if testing.Short() {
		t.Skip("real-data build skipped in -short mode")
	}
	set := loadUSE(t, "vaswani")
	o := Options{Dim: set.d, Metric: Cosine, M: 16, EfConstruction: 200, Seed: 42}
	ix := build(t, o, set.docs) // own copy: this test mutates it
	deleteAndCompare(t, o, ix, set.docs, rows(set.queries, set.d), 64)
}

func TestDeleteEntryAndAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	o := Options{Dim: 4, M: 4, EfConstruction: 16}
	base := randVecs(rng, 50, 4)
	ix := build(t, o, base)
	for i := 0; i < 50; i++ {
		ep, _, _ := ix.entry()
		if err := ix.Delete(ep); err != nil {
			t.Fatal(err)
		}
		if err := ix.Delete(ep); err != nil { // idempotent
			t.Fatal(err)
		}
		if i < 49 {
			if e, _, _ := ix.entry(); ix.isDeleted(e) {
				t.Fatalf("after %d deletes the entry %d is deleted", i+1, e)
			}
		}
		res, _ := ix.Search(base[:4], 60, SearchParams{})
		if len(res) != 50-i-1 {
			t.Fatalf("after %d deletes: %d results, want %d", i+1, len(res), 50-i-1)
		}
		if i%7 == 0 {
			repairAll(t, ix, 3)
		}
	}
	if ix.Live() != 0 {
		t.Fatalf("Live %d", ix.Live())
	}
}
