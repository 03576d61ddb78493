// Package testenv holds the switches and helpers tests share.
//
// STRATA_EMULATED=1 marks a run under CPU emulation (qemu-user), which
// scripts/test.sh sets for its emulated steps. Emulation is 10–50× slower
// than native execution, so tests that train models (k-means, PQ), read
// real datasets, or otherwise take seconds natively call SkipIfEmulated and
// leave that work to the native run; the emulated run keeps the small seeded
// tests that exercise what differs by architecture.
//
// CancelLatency measures how long a search keeps running after its
// context is cancelled (the index packages' cancellation tests).
package testenv

import (
	"context"
	"errors"
	"math"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// Emulated reports whether STRATA_EMULATED is set to a non-empty value
// other than "0".
func Emulated() bool {
	v := os.Getenv("STRATA_EMULATED")
	return v != "" && v != "0"
}

// SkipIfEmulated skips t under emulation, naming why the test is too heavy.
func SkipIfEmulated(t testing.TB, why string) {
	t.Helper()
	if Emulated() {
		t.Skipf("STRATA_EMULATED is set: %s (runs natively)", why)
	}
}

// CancelLatency measures how fast search gives up when its context is
// cancelled. Each of trials runs search(ctx) on its own goroutine, sleeps
// for after, cancels ctx and takes the time from the cancel call to
// search's return (read on search's goroutine, so the test goroutine's
// wake-up is not counted). A search that returns before the cancel, or
// returns anything but an error matching context.Canceled, fails t: the
// workload must be large enough to still be running after after. It
// returns the latencies, sorted, and how long the longest search ran.
func CancelLatency(t testing.TB, trials int, after time.Duration, search func(ctx context.Context) error) (lat []time.Duration, longest time.Duration) {
	t.Helper()
	// A search that completes on its own just as the cancel is issued (a
	// loaded machine can delay its start by the whole sleep) proves
	// nothing either way: it is retried, with the cancel issued after half
	// the sleep each time, up to 3·trials attempts in all.
	for attempt := 0; len(lat) < trials; attempt++ {
		if attempt >= 3*trials {
			t.Fatalf("%d of %d searches completed before noticing the cancel: the workload is too small", attempt-len(lat), attempt)
		}
		ctx, cancel := context.WithCancel(context.Background())
		type ret struct {
			err error
			at  time.Time
		}
		done := make(chan ret, 1)
		start := time.Now()
		go func() {
			err := search(ctx)
			done <- ret{err, time.Now()}
		}()
		time.Sleep(after)
		t0 := time.Now()
		cancel()
		r := <-done
		if r.at.Before(t0) || r.err == nil {
			// Completed on its own (or before a late cancel): inconclusive.
			// A loaded machine oversleeps; cancel sooner from now on.
			after = max(after/2, 500*time.Microsecond)
			continue
		}
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("cancelled search returned %v, want context.Canceled", r.err)
		}
		lat = append(lat, r.at.Sub(t0))
		longest = max(longest, r.at.Sub(start))
	}
	slices.Sort(lat)
	return lat, longest
}

// CheckCancelLatency fails t unless search stops within bound of its
// context's cancellation: CancelLatency runs rounds of 5 trials (cancel
// 10 ms in, sooner after a search that finished first), and the check
// passes on the first round whose median is
// within bound. Up to 3 rounds are run, so that a round disturbed by
// other processes on a loaded machine (a descheduled thread can lose
// tens of milliseconds) does not fail the test, while a search that does
// not stop (which returns only when its work is done, every trial) always
// does: when no round's median is within bound it still fails unless some
// trial returned within bound. The wall clock cannot prove how often a
// loop looks at its context on a loaded machine; the packages' DoneUnseen
// tests prove that without timing. The workload must run well over 10 ms.
// Under -race the bound is multiplied by 5: the detector slows the work
// between two looks at the context as much as the rest.
func CheckCancelLatency(t testing.TB, name string, bound time.Duration, search func(ctx context.Context) error) {
	t.Helper()
	if Race {
		bound *= 5
	}
	var rounds [][]time.Duration
	for range 3 {
		lat, longest := CancelLatency(t, 5, 10*time.Millisecond, search)
		rounds = append(rounds, lat)
		if med := lat[len(lat)/2]; med <= bound {
			t.Logf("%s: cancel → return, median %v (trials %v; longest search %v)", name, med, lat, longest)
			return
		}
	}
	// Every round's median is above bound. A search that does not stop
	// returns only when its work is done, so every one of its trials is
	// late; a loaded machine (CI runs packages in parallel on 2 cores)
	// instead delays some trials by whole scheduler slices while others
	// stop at once. So the check fails when no trial of any round stopped
	// within bound, and otherwise reports the rounds as disturbed.
	fastest := time.Duration(math.MaxInt64)
	for _, r := range rounds {
		fastest = min(fastest, r[0])
	}
	if fastest > bound {
		t.Errorf("%s: no cancelled search returned within %v of its cancel in %d rounds: %v", name, bound, len(rounds), rounds)
		return
	}
	t.Logf("%s: medians above %v in every round (a loaded machine?), fastest %v: %v", name, bound, fastest, rounds)
}

// DoneUnseen returns a context that is already done but whose first Err
// call reports nil, as if it were cancelled just after a search checked
// it on entry: the search must then notice it in its loops (its Done
// channel is closed from the start), which makes "stops at the first
// look inside the loop" testable without timing.
func DoneUnseen() context.Context {
	c := &doneUnseen{Context: context.Background(), ch: make(chan struct{})}
	close(c.ch)
	return c
}

type doneUnseen struct {
	context.Context
	mu    sync.Mutex
	calls int
	ch    chan struct{}
}

func (c *doneUnseen) Done() <-chan struct{} { return c.ch }

func (c *doneUnseen) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls++; c.calls == 1 {
		return nil
	}
	return context.Canceled
}
