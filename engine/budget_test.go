package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/internal/testenv"
)

var (
	bigCollOnce sync.Once
	bigColl     *Collection
	bigCollErr  error
)

// bigCollection is a collection of 300,000 hot documents (d = 128, seeded
// vectors; no automatic flush) that all read "alpha beta": BM25 cannot
// prune any of them for the query "alpha beta" (every score ties), so the
// lexical retriever scores them all, and the dense retriever scans them
// all (milliseconds; the lexical search tens of milliseconds).
func bigCollection(t *testing.T) *Collection {
	t.Helper()
	testenv.SkipIfEmulated(t, "ingests 300,000 documents")
	if testing.Short() {
		t.Skip("ingests 300,000 documents")
	}
	bigCollOnce.Do(func() {
		db, err := Open(t.TempDir(), Options{})
		if err != nil {
			bigCollErr = err
			return
		}
		c, err := db.CreateCollection("big", CollectionOptions{Dim: 128, Sync: "none", HybridDefault: HybridRRF, MemTableSizeBytes: -1})
		if err != nil {
			bigCollErr = err
			return
		}
		rng := rand.New(rand.NewPCG(4, 4))
		const n = 300_000
		for i := 0; i < n; i += 5000 {
			docs := make([]contract.Document, 0, 5000)
			for j := i; j < i+5000; j++ {
				v := make([]float32, 128)
				for k := range v {
					v[k] = float32(rng.NormFloat64())
				}
				docs = append(docs, doc(fmt.Sprintf("d%06d", j), "alpha beta", v))
			}
			if _, err := c.Upsert(context.Background(), docs); err != nil {
				bigCollErr = err
				return
			}
		}
		bigColl = c
	})
	if bigCollErr != nil {
		t.Fatal(bigCollErr)
	}
	return bigColl
}

// TestBudgetStopsRetrievers: a search whose budget expires a third of the
// way through its retrievers' work (as timed on complete searches just
// before each round)
// returns a partial result at the deadline, and the retrievers themselves
// stop: the count of running retriever goroutines drops to zero within
// 2 ms of Search returning (median of 5 trials per mode, best of 3
// rounds; at most two searches of 5 complete; the bound grows to a fifth
// of the retrievers' work on a loaded machine), where without a budget they would run
// for as long again.
func TestBudgetStopsRetrievers(t *testing.T) {
	c := bigCollection(t)
	var running atomic.Int64
	var firstStart atomic.Int64 // UnixNano of the first retriever start
	c.testHookRetriever = func(string) {
		running.Add(1)
		firstStart.CompareAndSwap(0, time.Now().UnixNano())
	}
	c.testHookRetrieverDone = func(string) { running.Add(-1) }
	defer func() { c.testHookRetriever, c.testHookRetrieverDone = nil, nil }()
	q0 := contract.Query{Text: "alpha beta", Vector: make([]float32, 128), TopK: 10}
	q0.Vector[0] = 1
	for _, mode := range []contract.Mode{contract.Lexical, contract.Dense, contract.Hybrid} {
		q := q0
		q.Mode = mode
		// measure times the fastest of n complete searches, and the time
		// its retrievers started (after scope and filter bitmaps are
		// built). Each round measures again, so a budget set from it fits
		// the machine's load at the time of the round's trials.
		measure := func(n int) (fullTime, pre time.Duration) {
			fullTime = time.Hour
			qf := q
			qf.Budget = 0
			for range n {
				runtime.GC()
				firstStart.Store(0)
				start := time.Now()
				full := mustSearch(t, c, qf)
				if d := time.Since(start); d < fullTime {
					fullTime, pre = d, time.Duration(firstStart.Load()-start.UnixNano())
				}
				if full.Partial || len(full.Hits) != 10 {
					t.Fatalf("%s: complete search: %+v", mode, full)
				}
			}
			return fullTime, pre
		}
		// A retriever that ran to completion after Search returned would
		// still be running for about (fullTime-pre)·2/3; when that is a
		// few milliseconds, a loaded machine's scheduling delays look the
		// same, so such a mode is measured and logged but not asserted
		// (the index packages' DoneUnseen tests cover it without timing).
		if fullTime, pre := measure(3); fullTime-pre < 10*time.Millisecond {
			t.Logf("%s: retrievers' work %v (complete search %v): too small to tell a stopped retriever from a descheduled one here; not asserted", mode, fullTime-pre, fullTime)
			continue
		}
		var rounds []string
		passed := false
		for range 3 {
			// The budget expires a third of the way through the
			// retrievers' work.
			fullTime, pre := measure(3)
			q.Budget = pre + (fullTime-pre)/3
			var stops, tooks []time.Duration
			complete := 0
			for range 5 {
				runtime.GC() // no collection cycle in the middle of a trial
				start := time.Now()
				r, err := c.Search(context.Background(), q)
				ret := time.Now()
				if err != nil {
					t.Fatal(err)
				}
				if !r.Partial {
					complete++ // this run was faster than the fastest complete one
				}
				tooks = append(tooks, ret.Sub(start))
				for running.Load() != 0 {
					if time.Since(ret) > time.Second {
						t.Fatalf("%s: retrievers still running 1 s after a partial search", mode)
					}
					time.Sleep(20 * time.Microsecond)
				}
				stops = append(stops, time.Since(ret))
			}
			slices.Sort(tooks)
			slices.Sort(stops)
			round := fmt.Sprintf("budget %v: Search took %v, retrievers stopped %v after it returned, %d not partial", q.Budget, tooks, stops, complete)
			rounds = append(rounds, round)
			// At most two trials may outrun their budget (searches that
			// happened to run faster than the fastest measured one). The
			// stop bound is 2 ms, or a fifth of the retrievers' work on a
			// machine loaded enough to stretch it: a retriever that ran
			// on to completion would take about two thirds of it.
			stopBound := max(2*time.Millisecond, (fullTime-pre)/5)
			if complete <= 2 && tooks[2] <= q.Budget+20*time.Millisecond && stops[2] <= stopBound {
				t.Logf("%s: complete search %v (retrievers from %v); with a %v budget: %s", mode, fullTime, pre, q.Budget, round)
				passed = true
				break
			}
		}
		if !passed {
			t.Errorf("%s: want at most two complete searches of 5, a median Search time ≤ budget + 20 ms and retrievers stopped a median ≤ max(2 ms, work/5) after it returned, in some round: %v", mode, rounds)
		}
	}
}
