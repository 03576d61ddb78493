package tier

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stratasearch/strata/vfs"
)

// bigBatch is a batch of n upserts over ids big-0..big-(n-1) (some
// without a vector, so the slab holds fewer rows than ops) and one
// delete, its vectors seeded by i.
func bigBatch(i uint64, n int) *Batch {
	rng := rand.New(rand.NewPCG(91, i))
	b := &Batch{}
	for j := range n {
		var vec []float32
		if j%17 != 5 {
			vec = make([]float32, testDim)
			for k := range vec {
				vec[k] = float32(rng.NormFloat64())
			}
		}
		b.Upsert(Document{ID: fmt.Sprintf("big-%d", j), Content: "big", Vector: vec, Trust: TrustDerived, UpdatedUnixNano: int64(i)})
	}
	b.Delete(fmt.Sprintf("big-%d", rng.IntN(n)))
	return b
}

// TestMemTableKeptSlabs: batches large enough for the MemTable to keep
// their decoded vector slab as rows, between small batches that are
// copied into its open slab, search like the brute-force reference at
// every step, for each metric, and again after replay (which copies).
// Under L2 and IP a large batch's stored vectors are views of one kept
// chunk; under Cosine they are not (its rows are normalised copies).
func TestMemTableKeptSlabs(t *testing.T) {
	n := keepSlabBytes/(4*testDim)*17/16 + 40
	for _, metric := range []Metric{L2, IP, Cosine} {
		t.Run(metric.String(), func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			o := testOptions(fs)
			o.Metric = metric
			s := mustOpen(t, o)
			m := model{}
			rng := rand.New(rand.NewPCG(5, 6))
			for i := uint64(1); i <= 12; i++ {
				var b *Batch
				if i%4 == 2 {
					b = bigBatch(i, n)
				} else {
					b = genBatch(33, i)
				}
				if _, err := s.Apply(b); err != nil {
					t.Fatal(err)
				}
				m.apply(b)
				sn := s.Snapshot()
				if d := checkSearch(sn, m, metric, rng); d != "" {
					sn.Close()
					t.Fatalf("after batch %d: %s", i, d)
				}
				sn.Close()
			}
			mem := s.currentView().mem
			kept := 0 // chunks that stored vectors are views of
			for _, c := range mem.chunks {
				lo, hi := uintptr(unsafe.Pointer(&c.vecs[0])), uintptr(unsafe.Pointer(&c.vecs[len(c.vecs)-1]))
				for r := c.row0; r < c.row0+len(c.vecs)/testDim; r++ {
					if p := uintptr(unsafe.Pointer(&mem.versions[mem.rowVer[r]].doc.Vector[0])); p >= lo && p <= hi {
						kept++
						break
					}
				}
			}
			if want := map[Metric]int{L2: 3, IP: 3, Cosine: 0}[metric]; kept != want {
				t.Fatalf("%d kept chunks, want %d", kept, want)
			}
			if metric != Cosine {
				c := mem.chunks[len(mem.chunks)-1]
				for _, c2 := range mem.chunks {
					if len(c2.vecs) >= keepSlabBytes/4 {
						c = c2
					}
				}
				v := &mem.versions[mem.rowVer[c.row0+1]]
				lo, hi := uintptr(unsafe.Pointer(&c.vecs[0])), uintptr(unsafe.Pointer(&c.vecs[len(c.vecs)-1]))
				if p := uintptr(unsafe.Pointer(&v.doc.Vector[0])); p < lo || p > hi {
					t.Fatalf("stored vector of %s is not a view of its kept chunk", v.doc.ID)
				}
			}
			s.currentView().unref()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = mustOpen(t, o)
			defer s.Close()
			sn := s.Snapshot()
			defer sn.Close()
			for range 5 {
				if d := checkSearch(sn, m, metric, rng); d != "" {
					t.Fatalf("after replay: %s", d)
				}
			}
		})
	}
}

// TestMemTableOpenSlabNotCopied: when a batch's vectors do not fit the
// open slab, the slab becomes a chunk as it is and a new one takes the
// batch: rows already in the MemTable are never copied (so they stay at
// their address), for every metric, and searches stay exact.
func TestMemTableOpenSlabNotCopied(t *testing.T) {
	for _, metric := range []Metric{L2, IP, Cosine} {
		t.Run(metric.String(), func(t *testing.T) {
			o := testOptions(vfs.NewCrashableMem())
			o.Metric = metric
			s := mustOpen(t, o)
			defer s.Close()
			m := model{}
			rng := rand.New(rand.NewPCG(7, 8))
			var first *float32
			for i := uint64(1); i <= 40; i++ {
				b := genBatch(33, i)
				if _, err := s.Apply(b); err != nil {
					t.Fatal(err)
				}
				m.apply(b)
				v := s.currentView()
				mem := v.mem
				mem.mu.RLock()
				var at *float32
				switch {
				case len(mem.chunks) > 0:
					at = &mem.chunks[0].vecs[0]
				case len(mem.vecs) > 0:
					at = &mem.vecs[0]
				}
				mem.mu.RUnlock()
				v.unref()
				if first == nil {
					first = at
				} else if at != first {
					t.Fatalf("after batch %d the first row moved: rows were copied", i)
				}
				sn := s.Snapshot()
				if d := checkSearch(sn, m, metric, rng); d != "" {
					sn.Close()
					t.Fatalf("after batch %d: %s", i, d)
				}
				sn.Close()
			}
			v := s.currentView()
			if len(v.mem.chunks) < 2 {
				t.Errorf("%d chunks after 40 batches: the open slab never filled", len(v.mem.chunks))
			}
			v.unref()
		})
	}
}
