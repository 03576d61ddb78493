package tier

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratasearch/strata/vfs"
	"github.com/stratasearch/strata/vfs/errorfs"
)

// crashRound opens the store on fs (a CrashableMem), writes batches
// start+1 .. start+n of the seeded workload with sync=always from one
// goroutine, and "crashes" (CrashClone, torn unsynced tails kept at random)
// just before file-system operation number crashAt. It returns the crash
// image, the number of batches acknowledged before the crash, and the
// number submitted (acknowledged or in flight) at the crash.
func crashRound(o Options, mem *vfs.MemFS, seed, start uint64, n, crashAt int, rng *rand.Rand) (image *vfs.MemFS, acked, submitted uint64, err error) {
	return crashRoundMaint(o, mem, seed, start, n, crashAt, rng, nil)
}

// crashRoundMaint is crashRound with maint called after every
// acknowledged batch (flushes and compactions in the tiered crash test).
func crashRoundMaint(o Options, mem *vfs.MemFS, seed, start uint64, n, crashAt int, rng *rand.Rand, maint func(s *Store, i uint64) error) (image *vfs.MemFS, acked, submitted uint64, err error) {
	var ackedN, submittedN atomic.Uint64
	ackedN.Store(start)
	submittedN.Store(start)
	var once sync.Once
	var ops atomic.Int64
	take := func() {
		once.Do(func() {
			acked = ackedN.Load()
			submitted = submittedN.Load()
			image = mem.CrashCloneWith(vfs.CrashOptions{Rand: rng})
		})
	}
	inj := errorfs.InjectorFunc{Name: "crash-at", Fn: func(op errorfs.Op) error {
		if ops.Add(1)-1 == int64(crashAt) {
			take()
		}
		return nil
	}}
	o.FS = errorfs.Wrap(mem, inj)
	s, err := Open(o)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("open: %w", err)
	}
	if s.Epoch() != start {
		s.Close()
		return nil, 0, 0, fmt.Errorf("open: epoch %d, want %d", s.Epoch(), start)
	}
	for i := start + 1; i <= start+uint64(n); i++ {
		submittedN.Store(i)
		e, err := s.Apply(genBatch(seed, i))
		if err != nil {
			s.Close()
			return nil, 0, 0, fmt.Errorf("apply %d: %w", i, err)
		}
		if e != i {
			s.Close()
			return nil, 0, 0, fmt.Errorf("apply %d got epoch %d", i, e)
		}
		ackedN.Store(i)
		if maint != nil {
			if err := maint(s, i); err != nil {
				s.Close()
				return nil, 0, 0, fmt.Errorf("maintenance after %d: %w", i, err)
			}
		}
	}
	take() // crash point past the end: a crash after a clean run
	s.Close()
	return image, acked, submitted, nil
}

// verifyRecovery reopens image and checks it against the model: it opens
// without error, holds every acknowledged batch, and equals the model at
// exactly the recovered epoch (so no batch is half-applied).
func verifyRecovery(o Options, image *vfs.MemFS, seed, acked, submitted uint64) (uint64, error) {
	o.FS = image
	s, err := Open(o)
	if err != nil {
		return 0, fmt.Errorf("reopen after crash: %w", err)
	}
	defer s.Close()
	e := s.Epoch()
	if e < acked {
		return e, fmt.Errorf("acknowledged epoch %d lost: recovered only up to %d", acked, e)
	}
	if e > submitted {
		return e, fmt.Errorf("recovered epoch %d beyond the %d submitted batches", e, submitted)
	}
	sn := s.Snapshot()
	defer sn.Close()
	if d := checkAgainst(sn, modelAt(seed, e)); d != "" {
		return e, fmt.Errorf("state at recovered epoch %d differs from the model: %s", e, d)
	}
	return e, nil
}

type crashStats struct {
	iters, dropped   int
	inflightLost     int // crashed during a batch that did not survive
	inflightSurvived int // crashed during a batch whose record was on disk anyway
}

// runCrashTest runs iters seeded iterations of two write→crash→recover
// rounds each. It returns the first violation.
func runCrashTest(iters int, mutate func(*Options)) (crashStats, error) {
	return runCrashTestMaint(iters, mutate, nil, 30)
}

// runCrashTestMaint is runCrashTest with maint after every batch; opsPerBatch
// scales the range of crash points.
func runCrashTestMaint(iters int, mutate func(*Options), maint func(s *Store, i uint64) error, opsPerBatch int) (crashStats, error) {
	var st crashStats
	for it := 0; it < iters; it++ {
		seed := uint64(1000 + it)
		rng := rand.New(rand.NewPCG(seed, 99))
		o := testOptions(nil)
		o.WALSegmentSizeBytes = int64(256 + rng.IntN(4096))
		o.ManifestCheckpointEdits = 1 + rng.IntN(4)
		if mutate != nil {
			mutate(&o)
		}
		mem := vfs.NewCrashableMem()
		var start uint64
		for round := 0; round < 2; round++ {
			n := 5 + rng.IntN(40)
			// ~2 fs ops per batch plus ~25 to open.
			crashAt := rng.IntN(2*n + 30)
			if maint != nil {
				crashAt = rng.IntN(opsPerBatch*n + 30)
			}
			image, acked, submitted, err := crashRoundMaint(o, mem, seed, start, n, crashAt, rng, maint)
			if err != nil {
				return st, fmt.Errorf("iter %d round %d: %w", it, round, err)
			}
			ds := image.DroppedStats()
			if ds.Any() {
				st.dropped++
			}
			e, err := verifyRecovery(o, image, seed, acked, submitted)
			if err != nil {
				return st, fmt.Errorf("iter %d round %d (crash at op %d, dropped %+v): %w", it, round, crashAt, ds, err)
			}
			if submitted > acked {
				if e == acked {
					st.inflightLost++
				} else {
					st.inflightSurvived++
				}
			}
			mem, start = image, e
		}
		st.iters++
	}
	return st, nil
}

// TestCrashRandomized is the randomised crash-safety test of issue 7: 200
// seeded iterations (20 with -short) of random upserts and deletes with
// sync=always on the crashable FS, crash at a random operation, reopen,
// compare with the model.
func TestCrashRandomized(t *testing.T) {
	iters := 200
	if testing.Short() {
		iters = 20
	}
	st, err := runCrashTest(iters, nil)
	if err != nil {
		t.Fatal(err)
	}
	rounds := 2 * st.iters
	t.Logf("%d rounds: unsynced data dropped in %d; crash inside a batch: batch lost %d, batch survived %d",
		rounds, st.dropped, st.inflightLost, st.inflightSurvived)
	// Not vacuous: the crash really dropped unsynced data often.
	if st.dropped < rounds/4 {
		t.Fatalf("unsynced data dropped in only %d of %d rounds", st.dropped, rounds)
	}
	if st.inflightLost < rounds/10 {
		t.Fatalf("an in-flight batch was lost in only %d of %d rounds", st.inflightLost, rounds)
	}
}

// TestCrashMutationSkipFsync proves the crash test can fail: with the WAL's
// fsyncs skipped (but writes still acknowledged), acknowledged batches are
// lost and runCrashTest must report it.
func TestCrashMutationSkipFsync(t *testing.T) {
	_, err := runCrashTest(20, func(o *Options) { o.TestingSkipFsync = true })
	if err == nil {
		t.Fatal("crash test passed with fsync disabled: it cannot detect lost acknowledged writes")
	}
	t.Logf("as expected, the crash test failed: %v", err)
}

// TestFaultInjection injects fsync, directory-sync, write, create and
// rename errors at random points. The writer must get an error, the store
// must turn read-only (no later write succeeds), and a crash + reopen must
// be clean with every acknowledged batch present and no half batch.
func TestFaultInjection(t *testing.T) {
	iters := 150
	if testing.Short() {
		iters = 30
	}
	kinds := []errorfs.OpKind{errorfs.OpSync, errorfs.OpSyncDir, errorfs.OpWrite, errorfs.OpCreate, errorfs.OpRename}
	surfaced := map[errorfs.OpKind]int{}
	for it := 0; it < iters; it++ {
		kind := kinds[it%len(kinds)]
		rng := rand.New(rand.NewPCG(uint64(it), 5))
		seed := uint64(500 + it)
		mem := vfs.NewCrashableMem()
		o := testOptions(nil)
		o.WALSegmentSizeBytes = 300
		nth := int64(rng.IntN(40))
		if kind == errorfs.OpRename {
			nth = 0 // the store renames once (CURRENT, at creation)
		}
		inj := errorfs.OnIndex(nth, kind)
		o.FS = errorfs.Wrap(mem, inj)
		s, err := Open(o)
		var acked, submitted uint64
		if err == nil {
			for i := uint64(1); i <= 40; i++ {
				submitted = i
				_, err := s.Apply(genBatch(seed, i))
				if err != nil {
					if !errors.Is(err, ErrReadOnly) || !errors.Is(err, errorfs.ErrInjected) {
						t.Fatalf("iter %d: apply error %v lacks ErrReadOnly/cause", it, err)
					}
					if s.Err() == nil {
						t.Fatalf("iter %d: Err() nil after a failed write", it)
					}
					// Sticky: never a silent success afterwards.
					if _, err2 := s.Apply(genBatch(seed, i+1)); err2 == nil {
						t.Fatalf("iter %d: write succeeded after an fsync/write failure", it)
					}
					surfaced[kind]++
					break
				}
				acked = i
			}
			s.Close()
		} else if !errors.Is(err, errorfs.ErrInjected) {
			t.Fatalf("iter %d: open error %v", it, err)
		} else {
			surfaced[kind]++
		}
		// Process restart after power loss: only what was synced remains.
		image := mem.CrashClone()
		if _, err := verifyRecovery(testOptions(nil), image, seed, acked, submitted); err != nil {
			t.Fatalf("iter %d (%s): %v", it, inj, err)
		}
	}
	for _, k := range kinds {
		if surfaced[k] == 0 {
			t.Errorf("no injected %s error ever surfaced", k)
		}
	}
	t.Logf("errors surfaced per kind: %v", surfaced)
}
