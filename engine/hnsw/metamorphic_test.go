package hnsw

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// TestRandomizedConcurrent interleaves Add, Delete, filtered and plain
// Search and RepairDeleted across goroutines, checked against a simple
// model: every returned id exists, is allowed, was not deleted before the
// search began, and appears once. At quiescence the index must agree
// with the model exactly (result counts, repaired graph).
func TestRandomizedConcurrent(t *testing.T) {
	const d = 8
	ops := 4000
	if testing.Short() {
		ops = 1500
	}
	ix, err := New(Options{Dim: d, Metric: L2, M: 6, EfConstruction: 32, InitialCapacity: 8})
	if err != nil {
		t.Fatal(err)
	}
	const maxIDs = 1 << 14
	var deletedDone [maxIDs]atomic.Bool // Delete(id) has returned
	var added atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1234))
			var dst []Result
			for i := 0; i < ops/4; i++ {
				switch x := rng.IntN(100); {
				case x < 45:
					v := randVecs(rng, 1, d)
					if _, err := ix.Add(uint64(i), v); err != nil {
						t.Error(err)
						return
					}
					added.Add(1)
				case x < 60:
					n := ix.Len()
					if n == 0 {
						continue
					}
					id := uint32(rng.IntN(n))
					switch err := ix.Delete(id); err {
					case nil:
						deletedDone[id].Store(true)
					case ErrNotFound: // id handed out, vector not stored yet
					default:
						t.Error(err)
						return
					}
				case x < 62:
					if _, err := ix.RepairDeleted(1 + rng.IntN(50)); err != nil {
						t.Error(err)
						return
					}
				case x < 63:
					// A snapshot taken mid-traffic must open cleanly.
					var buf bytes.Buffer
					if _, err := ix.WriteTo(&buf); err != nil {
						t.Error(err)
						return
					}
					if _, err := Open(buf.Bytes()); err != nil {
						t.Errorf("snapshot does not open: %v", err)
						return
					}
				case x < 65:
					if _, err := ix.RepairDeleted(1 + rng.IntN(50)); err != nil {
						t.Error(err)
						return
					}
				default:
					n := ix.Len()
					before := make([]bool, n)
					for id := range before {
						before[id] = deletedDone[id].Load()
					}
					var allow *roaring.Bitmap
					if rng.IntN(2) == 0 && n > 0 {
						allow = roaring.New()
						for j := 0; j < 1+rng.IntN(n); j++ {
							allow.Add(uint32(rng.IntN(n)))
						}
					}
					p := SearchParams{EfSearch: 1 + rng.IntN(40), Allow: allow, forceGraph: rng.IntN(2) == 0}
					var err error
					dst, err = ix.SearchInto(dst, randVecs(rng, 1, d), 1+rng.IntN(12), p)
					if err != nil {
						t.Error(err)
						return
					}
					seen := map[uint32]bool{}
					for _, r := range dst {
						switch {
						case int(r.ID) >= ix.Len():
							t.Errorf("id %d never added", r.ID)
						case int(r.ID) < n && before[r.ID]:
							t.Errorf("id %d deleted before the search returned", r.ID)
						case allow != nil && !allow.Contains(r.ID):
							t.Errorf("id %d not allowed", r.ID)
						case seen[r.ID]:
							t.Errorf("id %d returned twice", r.ID)
						}
						seen[r.ID] = true
					}
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// Quiescent: finish repair, check graph and exact agreement.
	for {
		more, err := ix.RepairDeleted(100)
		if err != nil {
			t.Fatal(err)
		}
		if !more && !ix.rep.sweeping {
			break
		}
	}
	n := ix.Len()
	live := 0
	for id := 0; id < n; id++ {
		if !deletedDone[id].Load() {
			live++
		}
	}
	if live != ix.Live() {
		t.Fatalf("model has %d live, index %d", live, ix.Live())
	}
	if live > 0 {
		checkRepaired(t, ix)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for i := 0; i < 20; i++ {
		res, err := ix.Search(randVecs(rng, 1, d), 10, SearchParams{EfSearch: 20})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != min(10, live) {
			t.Fatalf("%d results with %d live", len(res), live)
		}
	}
	t.Logf("%d ids, %d live after %d ops", n, live, ops)
}
