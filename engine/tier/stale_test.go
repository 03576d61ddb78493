package tier

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/vfs"
)

type staleStats struct {
	queries, stale, dupes, overlaps int64
	inconsistent                    int64 // snapshot Get disagreeing with the snapshot's search
	overlapQueries                  int64 // queries during which a result doc got a newer acked version
	flushes, compactions            int64 // background tier moves during the run
}

// runStaleness has writers upsert docs with increasing version numbers
// while readers search. A result is stale if its version is older than the
// newest version acknowledged before the query started (or if an id shows
// up twice). A read overlaps a write when a write to a document in its
// result set was acknowledged while the query ran.
func runStaleness(t *testing.T, mutate func(*Options), rounds int) staleStats {
	const docs, writers, readers = 200, 6, 2
	o := testOptions(vfs.NewCrashableMem())
	o.Sync = wal.SyncNone // durability is not under test here; speed is
	if mutate != nil {
		mutate(&o)
	}
	s := mustOpen(t, o)
	defer s.Close()
	var acked [docs]atomic.Int64
	vecOf := func(id int) []float32 {
		v := make([]float32, testDim)
		v[id%testDim] = float32(1 + id/testDim)
		return v
	}
	put := func(id int, ver int64) {
		b := &Batch{}
		b.Upsert(Document{ID: strconv.Itoa(id), Content: fmt.Sprintf("%d:%d", id, ver), Vector: vecOf(id)})
		if _, err := s.Apply(b); err != nil {
			t.Error(err)
		}
		acked[id].Store(ver)
	}
	for id := 0; id < docs; id++ {
		put(id, 1)
	}
	var st staleStats
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for ver := int64(2); ; ver++ {
				for id := w; id < docs; id += writers {
					select {
					case <-stop:
						return
					default:
					}
					put(id, ver)
				}
			}
		}(w)
	}
	var rg sync.WaitGroup
	for r := 0; r < readers; r++ {
		rg.Add(1)
		go func(r int) {
			defer rg.Done()
			q := make([]float32, testDim)
			for i := 0; i < rounds; i++ {
				var before [docs]int64
				for id := range before {
					before[id] = acked[id].Load()
				}
				sn := s.Snapshot()
				q[(i+r)%testDim] = 1
				hits, err := sn.SearchVector(q, docs, nil)
				if err != nil {
					t.Error(err)
					return
				}
				// Make the read overlap a write to a document it
				// returned: wait (bounded) until the writers
				// acknowledge a newer version of the first hit, then
				// read through the same snapshot again. The pinned
				// snapshot must still agree with its own search.
				if len(hits) > 0 {
					id0, _ := strconv.Atoi(hits[0].Doc.ID)
					deadline := time.Now().Add(2 * time.Second)
					for acked[id0].Load() == before[id0] && time.Now().Before(deadline) {
						runtime.Gosched()
					}
				}
				for _, h := range hits {
					d, e, ok := sn.Get(h.Doc.ID)
					if !ok || e != h.Epoch || d.Content != h.Doc.Content {
						atomic.AddInt64(&st.inconsistent, 1)
					}
				}
				sn.Close()
				seen := map[int]bool{}
				var stale, dupes, overlaps int64
				for _, h := range hits {
					parts := strings.SplitN(h.Doc.Content, ":", 2)
					id, _ := strconv.Atoi(parts[0])
					ver, _ := strconv.ParseInt(parts[1], 10, 64)
					if seen[id] {
						dupes++
					}
					seen[id] = true
					if ver < before[id] {
						stale++
					}
					if acked[id].Load() != before[id] {
						overlaps++
					}
				}
				if len(hits) != docs {
					t.Errorf("query returned %d hits, want %d live docs", len(hits), docs)
				}
				atomic.AddInt64(&st.queries, 1)
				atomic.AddInt64(&st.stale, stale)
				atomic.AddInt64(&st.dupes, dupes)
				atomic.AddInt64(&st.overlaps, overlaps)
				if overlaps > 0 {
					atomic.AddInt64(&st.overlapQueries, 1)
				}
			}
		}(r)
	}
	rg.Wait()
	close(stop)
	wg.Wait()
	st.flushes, st.compactions = s.flushes.Load(), s.compactions.Load()
	return st
}

// TestStaleness: concurrent writers and readers; E_stale must be 0 and
// reads must really have overlapped writes to the same documents.
func TestStaleness(t *testing.T) {
	rounds := 400
	if testing.Short() {
		rounds = 100
	}
	st := runStaleness(t, nil, rounds)
	t.Logf("%d queries (%d overlapped a write to a returned doc), %d stale, %d duplicate ids, %d result docs written during their query",
		st.queries, st.overlapQueries, st.stale, st.dupes, st.overlaps)
	if st.stale != 0 || st.dupes != 0 || st.inconsistent != 0 {
		t.Fatalf("E_stale = %d (duplicates %d, Get/search disagreements %d), want 0", st.stale, st.dupes, st.inconsistent)
	}
	if st.overlapQueries < st.queries*9/10 {
		t.Fatalf("only %d of %d queries overlapped a write to a returned document", st.overlapQueries, st.queries)
	}
}

// TestStalenessMutationSkipTombstone proves the staleness test can fail:
// without the tombstone step old versions stay live.
func TestStalenessMutationSkipTombstone(t *testing.T) {
	st := runStaleness(t, func(o *Options) { o.TestingSkipTombstone = true }, 20)
	if st.stale == 0 && st.dupes == 0 {
		t.Fatal("staleness test passed with tombstones disabled: it cannot detect stale results")
	}
	t.Logf("as expected, stale results appeared: %d stale, %d duplicates in %d queries", st.stale, st.dupes, st.queries)
}

// TestStalenessAcrossTiers runs the staleness test while background
// flushes move documents into warm segments and compactions rewrite them:
// E_stale must stay 0 with versions spread over MemTable and segments.
func TestStalenessAcrossTiers(t *testing.T) {
	rounds := 300
	if testing.Short() {
		rounds = 80
	}
	st := runStaleness(t, func(o *Options) {
		o.MemTableSizeBytes = 16 << 10
		o.AutoCompact = true
		o.CompactMaxSegments = 3
		o.SegmentEfConstruction = 32
	}, rounds)
	t.Logf("%d queries (%d overlapped), %d stale, %d dupes, %d inconsistent; %d flushes, %d compactions",
		st.queries, st.overlapQueries, st.stale, st.dupes, st.inconsistent, st.flushes, st.compactions)
	if st.stale != 0 || st.dupes != 0 || st.inconsistent != 0 {
		t.Fatalf("E_stale = %d (duplicates %d, Get/search disagreements %d), want 0", st.stale, st.dupes, st.inconsistent)
	}
	if st.flushes < 3 || st.compactions < 1 {
		t.Fatalf("only %d flushes and %d compactions ran: the test did not exercise the warm tier", st.flushes, st.compactions)
	}
	if st.overlapQueries < st.queries/2 {
		t.Fatalf("only %d of %d queries overlapped a write to a returned document", st.overlapQueries, st.queries)
	}
}
