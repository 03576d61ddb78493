package tier

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratasearch/strata/vfs"
	"github.com/stratasearch/strata/vfs/errorfs"
)

func copyModel(m model) model {
	c := make(model, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// TestFlushDoesNotBlockWrites holds a Flush after its freeze step
// (Options.TestingFlushHook) while upserts of ids whose live version is in
// the frozen MemTable, deletes of such ids and new ids are applied. Every
// write must be acknowledged while the flush is held (the point of the
// non-blocking flush), and Get/LiveIDs/search at every epoch — and a
// snapshot pinned at the freeze epoch — must match the model. Then the
// flush completes, the store still matches, and a crash-reopen
// (CrashableMem; one image taken while the flush was held, one after)
// recovers exactly the acknowledged writes.
func TestFlushDoesNotBlockWrites(t *testing.T) {
	for _, metric := range []Metric{L2, Cosine} {
		t.Run(metric.String(), func(t *testing.T) { testFlushDoesNotBlockWrites(t, metric) })
	}
}

func testFlushDoesNotBlockWrites(t *testing.T, metric Metric) {
	mem := vfs.NewCrashableMem()
	o := testOptions(mem)
	o.Metric = metric
	frozen := make(chan struct{})
	release := make(chan struct{})
	var releaseOnce sync.Once
	unhold := func() { releaseOnce.Do(func() { close(release) }) }
	defer unhold() // a failed test does not leave the flush blocked
	hold := false
	o.TestingFlushHook = func() {
		if hold {
			close(frozen)
			<-release
		}
	}
	s := mustOpen(t, o)
	const seed = 31
	rng := rand.New(rand.NewPCG(seed, 2))
	m := model{}
	e := uint64(0)
	apply := func(b *Batch) {
		t.Helper()
		got, err := s.Apply(b)
		if err != nil {
			t.Fatal(err)
		}
		e++
		if got != e {
			t.Fatalf("epoch %d, want %d", got, e)
		}
		m.apply(b)
	}
	check := func(what string) {
		t.Helper()
		sn := s.Snapshot()
		defer sn.Close()
		if sn.Epoch() != e {
			t.Fatalf("%s: snapshot epoch %d, want %d", what, sn.Epoch(), e)
		}
		if d := checkAgainst(sn, m); d != "" {
			t.Fatalf("%s: %s", what, d)
		}
		if d := checkSearch(sn, m, metric, rng); d != "" {
			t.Fatalf("%s: %s", what, d)
		}
	}
	// Warm rows (flushed at 20) and then hot ones.
	for i := uint64(1); i <= 50; i++ {
		apply(genBatch(seed, i))
		if i == 20 {
			if err := s.Flush(bg); err != nil {
				t.Fatal(err)
			}
		}
	}
	segsBefore := len(s.WarmSegments())

	hold = true
	flushDone := make(chan error, 1)
	go func() { flushDone <- s.Flush(bg) }()
	select {
	case <-frozen:
	case <-time.After(30 * time.Second):
		t.Fatal("flush never reached its build step")
	}
	F := e
	v := s.currentView()
	if len(v.frozen) != 1 || v.mem.versionCount() != 0 {
		t.Fatalf("after freeze: %d frozen MemTables, active has %d versions; want 1 and 0", len(v.frozen), v.mem.versionCount())
	}
	inFrozen := map[string]bool{}
	for _, r := range v.frozen[0].liveRows(F) {
		inFrozen[r.doc.ID] = true
	}
	v.unref()
	if len(inFrozen) < 5 {
		t.Fatalf("only %d ids live in the frozen MemTable", len(inFrozen))
	}
	pinned, pinnedModel := s.Snapshot(), copyModel(m)
	check("after freeze")
	// A crash while the flush is held: recovery is WAL replay alone.
	heldImage, heldModel := mem.CrashClone(), copyModel(m)

	// Writes while the flush is held. If one blocked on the flush, the
	// watchdog releases the flush after a minute (so the test ends) and
	// the test fails.
	var timedOut atomic.Bool
	watchdog := time.AfterFunc(time.Minute, func() { timedOut.Store(true); unhold() })
	var upsFrozen, delFrozen, fresh int
	for j := uint64(1); j <= 60; j++ {
		var b *Batch
		switch j % 3 {
		case 0:
			b = genBatch(seed, 1000+j) // random upserts/deletes over the universe
		case 1:
			b = &Batch{}
			id := fmt.Sprintf("fresh-%02d", j)
			b.Upsert(Document{ID: id, Content: id + " new during flush", Vector: []float32{1, 2, 3, 4, 5, 6, 7, float32(j)},
				Metadata: map[string]string{"batch": fmt.Sprint(j)}, Namespace: "t/", ACL: []string{"alice"}, UpdatedUnixNano: int64(j)})
			fresh++
		case 2:
			// An id whose live version is in the frozen MemTable: upsert
			// it, or delete it every other time.
			var ids []string
			for id := range inFrozen {
				if _, live := m[id]; live {
					ids = append(ids, id)
				}
			}
			if len(ids) == 0 {
				b = genBatch(seed, 2000+j)
				break
			}
			sort.Strings(ids)
			id := ids[int(j)%len(ids)]
			delete(inFrozen, id)
			b = &Batch{}
			if j%2 == 0 {
				b.Delete(id)
				delFrozen++
			} else {
				b.Upsert(Document{ID: id, Content: id + " rewritten during flush", Vector: []float32{float32(j), 0, 1, 0, 1, 0, 1, 0},
					Metadata: map[string]string{"batch": fmt.Sprint(j)}, Namespace: "t/", ACL: []string{"alice"}, UpdatedUnixNano: int64(j)})
				upsFrozen++
			}
		}
		apply(b)
		check(fmt.Sprintf("write %d during flush", j))
		if j%10 == 0 {
			if d := checkAgainst(pinned, pinnedModel); d != "" {
				t.Fatalf("snapshot pinned at the freeze epoch %d, now %d: %s", F, e, d)
			}
		}
	}
	if !watchdog.Stop() || timedOut.Load() {
		t.Fatal("writes blocked while the flush was held")
	}
	select {
	case err := <-flushDone:
		t.Fatalf("flush returned (%v) while its build was held", err)
	default:
	}
	if upsFrozen < 5 || delFrozen < 5 || fresh < 5 {
		t.Fatalf("writes during the flush: %d upserts and %d deletes of frozen ids, %d new ids; want >= 5 each", upsFrozen, delFrozen, fresh)
	}
	t.Logf("acknowledged during the held flush: %d writes (%d upserts, %d deletes of frozen ids, %d new ids)", e-F, upsFrozen, delFrozen, fresh)
	if bp := s.Backpressure(); bp.Stalls != 0 {
		t.Fatalf("backpressure stalls %d", bp.Stalls)
	}

	unhold()
	if err := <-flushDone; err != nil {
		t.Fatal(err)
	}
	hold = false
	if got := s.Manifest().State().DurableEpoch; got != F {
		t.Fatalf("durable epoch %d, want the freeze epoch %d", got, F)
	}
	if got := len(s.WarmSegments()); got != segsBefore+1 {
		t.Fatalf("%d warm segments, want %d", got, segsBefore+1)
	}
	v = s.currentView()
	nFrozen := len(v.frozen)
	v.unref()
	if nFrozen != 0 {
		t.Fatalf("%d frozen MemTables after the flush", nFrozen)
	}
	check("after the flush")
	if d := checkAgainst(pinned, pinnedModel); d != "" {
		t.Fatalf("pinned snapshot after the flush: %s", d)
	}
	pinned.Close()
	for i := uint64(3000); i < 3020; i++ {
		apply(genBatch(seed, i))
	}
	check("after more writes")
	if s.ReplayedRecords() != 0 {
		t.Fatalf("replayed %d", s.ReplayedRecords())
	}

	// Crash images: after the flush (new segment + WAL after F, whose
	// records end rows of the new segment), and while it was held.
	for _, c := range []struct {
		name   string
		image  *vfs.MemFS
		m      model
		replay int64
	}{
		{"after flush", mem.CrashClone(), m, int64(e - F)},
		{"flush held", heldImage, heldModel, int64(F - 20)},
	} {
		o2 := testOptions(c.image)
		o2.Metric = metric
		s2 := mustOpen(t, o2)
		sn := s2.Snapshot()
		if d := checkAgainst(sn, c.m); d != "" {
			t.Fatalf("crash-reopen (%s): %s", c.name, d)
		}
		if d := checkSearch(sn, c.m, metric, rng); d != "" {
			t.Fatalf("crash-reopen (%s): %s", c.name, d)
		}
		if got := s2.ReplayedRecords(); got != c.replay {
			t.Fatalf("crash-reopen (%s): replayed %d WAL records, want %d", c.name, got, c.replay)
		}
		sn.Close()
		s2.Close()
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestFlushFailureKeepsFrozen: a flush whose segment write fails leaves
// its frozen MemTable in the view (every write still visible, nothing
// lost), writes continue, and the next flush builds the frozen MemTable
// together with the writes since into one segment; a crash-reopen then
// matches the model.
func TestFlushFailureKeepsFrozen(t *testing.T) {
	mem := vfs.NewCrashableMem()
	var on atomic.Bool
	inj := errorfs.InjectorFunc{Name: "seg-write", Fn: func(op errorfs.Op) error {
		if op.Kind == errorfs.OpWrite && strings.HasPrefix(filepath.Base(op.Path), "seg-") && on.CompareAndSwap(true, false) {
			return errorfs.ErrInjected
		}
		return nil
	}}
	o := testOptions(errorfs.Wrap(mem, inj))
	s := mustOpen(t, o)
	const seed = 5
	rng := rand.New(rand.NewPCG(seed, 3))
	m := model{}
	for i := uint64(1); i <= 40; i++ {
		b := genBatch(seed, i)
		if _, err := s.Apply(b); err != nil {
			t.Fatal(err)
		}
		m.apply(b)
		if i == 15 {
			if err := s.Flush(bg); err != nil {
				t.Fatal(err)
			}
		}
	}
	on.Store(true)
	if err := s.Flush(bg); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("flush error %v, want the injected write error", err)
	}
	v := s.currentView()
	nFrozen := len(v.frozen)
	v.unref()
	if nFrozen != 1 {
		t.Fatalf("%d frozen MemTables after a failed flush, want 1", nFrozen)
	}
	for i := uint64(41); i <= 70; i++ {
		b := genBatch(seed, i)
		if _, err := s.Apply(b); err != nil {
			t.Fatalf("write after a failed flush: %v", err)
		}
		m.apply(b)
		sn := s.Snapshot()
		if d := checkAgainst(sn, m); d != "" {
			t.Fatalf("epoch %d after a failed flush: %s", i, d)
		}
		if d := checkSearch(sn, m, L2, rng); d != "" {
			t.Fatalf("epoch %d after a failed flush: %s", i, d)
		}
		sn.Close()
	}
	if err := s.Flush(bg); err != nil {
		t.Fatalf("retry flush: %v", err)
	}
	v = s.currentView()
	nFrozen, active := len(v.frozen), v.mem.versionCount()
	v.unref()
	if nFrozen != 0 || active != 0 {
		t.Fatalf("after the retry: %d frozen MemTables, %d active versions", nFrozen, active)
	}
	if got := s.Manifest().State().DurableEpoch; got != 70 {
		t.Fatalf("durable epoch %d, want 70", got)
	}
	sn := s.Snapshot()
	if d := checkAgainst(sn, m); d != "" {
		t.Fatalf("after the retry: %s", d)
	}
	sn.Close()
	s2 := mustOpen(t, testOptions(mem.CrashClone()))
	defer s2.Close()
	sn = s2.Snapshot()
	defer sn.Close()
	if d := checkAgainst(sn, m); d != "" {
		t.Fatalf("crash-reopen: %s", d)
	}
	if d := checkSearch(sn, m, L2, rng); d != "" {
		t.Fatalf("crash-reopen: %s", d)
	}
	s.Close()
}

// TestBackpressureCountsFrozenMemTables: while a flush is held after its
// freeze, the frozen MemTable's bytes still count towards the MemTable
// bound, so writes that keep arriving stall (ErrWriteStall after
// StallTimeout) instead of growing memory without bound; once the flush
// completes they are accepted again.
func TestBackpressureCountsFrozenMemTables(t *testing.T) {
	o := testOptions(vfs.NewCrashableMem())
	o.MemTableSizeBytes = 4000
	o.SlowdownDelay = time.Millisecond
	o.StallTimeout = 200 * time.Millisecond
	release := make(chan struct{})
	var relOnce sync.Once
	unhold := func() { relOnce.Do(func() { close(release) }) }
	defer unhold()
	var held atomic.Int64
	o.TestingFlushHook = func() {
		held.Add(1)
		<-release
	}
	s := mustOpen(t, o)
	defer s.Close()
	content := strings.Repeat("x", 1000)
	stalled := false
	for i := 0; i < 200 && !stalled; i++ {
		b := &Batch{}
		b.Upsert(Document{ID: fmt.Sprintf("d%03d", i), Content: content})
		_, err := s.Apply(b)
		switch {
		case errors.Is(err, ErrWriteStall):
			stalled = true
		case err != nil:
			t.Fatal(err)
		}
	}
	if !stalled {
		t.Fatal("writes never stalled while the flush was held")
	}
	v := s.currentView()
	frozenBytes, activeBytes := v.hotSize()-v.mem.size(), v.mem.size()
	v.unref()
	if held.Load() == 0 || frozenBytes == 0 {
		t.Fatalf("held flushes %d, frozen bytes %d", held.Load(), frozenBytes)
	}
	if activeBytes >= 4*o.MemTableSizeBytes {
		t.Fatalf("active MemTable alone (%d bytes) reached the stop bound: the test does not show that frozen bytes count", activeBytes)
	}
	t.Logf("stalled with %d frozen + %d active bytes (stop bound %d)", frozenBytes, activeBytes, 4*o.MemTableSizeBytes)
	unhold()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b := &Batch{}
		b.Upsert(Document{ID: "after", Content: "after the flush"})
		_, err := s.Apply(b)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrWriteStall) || time.Now().After(deadline) {
			t.Fatalf("write after the flush: %v", err)
		}
	}
	if s.Flushes() == 0 {
		t.Fatal("no flush completed")
	}
}

// TestCrashWithConcurrentFlush is the randomised crash test with
// background flushes running beside the writer (Store.kick after every
// third batch; the flush's build is slowed a little so that writes land
// while it runs, and the writer too so that flushes also complete): crashes fall before, during and after freezes, segment
// writes, manifest edits and WAL recycling, with writes acknowledged in
// between. Every acknowledged write must survive, nothing unacknowledged
// may be half-visible, and writes must in fact overlap flushes.
func TestCrashWithConcurrentFlush(t *testing.T) {
	iters := 120
	if testing.Short() {
		iters = 25
	}
	var overlapped, flushes atomic.Int64
	maint := func(s *Store, i uint64) error {
		if s.Flushes() > 0 {
			flushes.Add(1) // batches acknowledged after a completed flush
		}
		v := s.currentView()
		if len(v.frozen) > 0 {
			overlapped.Add(1) // batch i was acknowledged during a flush
		}
		v.unref()
		if i%3 == 0 {
			s.kick()
		}
		time.Sleep(300 * time.Microsecond) // let flushes complete within a round
		return nil
	}
	st, err := runCrashTestMaint(iters, func(o *Options) {
		o.SegmentEfConstruction = 16
		o.TestingFlushHook = func() { time.Sleep(time.Millisecond) }
	}, maint, 6)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d iterations, unsynced data dropped in %d rounds, %d writes acknowledged during a flush, %d after a completed one",
		st.iters, st.dropped, overlapped.Load(), flushes.Load())
	if st.dropped < st.iters/4 {
		t.Fatalf("unsynced data dropped in only %d of %d rounds: the test may pass vacuously", st.dropped, 2*st.iters)
	}
	if overlapped.Load() < int64(st.iters) || flushes.Load() < int64(st.iters) {
		t.Fatalf("only %d writes were acknowledged during a flush and %d after one in %d iterations", overlapped.Load(), flushes.Load(), st.iters)
	}
}
