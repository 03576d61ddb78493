package tier

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratasearch/strata/vfs"
	"github.com/stratasearch/strata/vfs/errorfs"
)

// phaseGate holds deferred index builds (Options.TestingIndexHook) at
// the phases switched on, one build at a time: wait returns once a build
// reached a held phase, release lets it go on.
type phaseGate struct {
	mu      sync.Mutex
	held    map[string]bool
	reached chan string
	release chan struct{}
}

func newPhaseGate(phases ...string) *phaseGate {
	g := &phaseGate{held: map[string]bool{}, reached: make(chan string, 1), release: make(chan struct{})}
	for _, p := range phases {
		g.held[p] = true
	}
	return g
}

func (g *phaseGate) hook(phase string) {
	g.mu.Lock()
	hold := g.held[phase]
	rel := g.release
	g.mu.Unlock()
	if hold && rel != nil {
		g.reached <- phase
		<-rel
	}
}

// set switches holding at phase on or off.
func (g *phaseGate) set(phase string, on bool) {
	g.mu.Lock()
	g.held[phase] = on
	g.mu.Unlock()
}

func (g *phaseGate) wait(t *testing.T, phase string) {
	t.Helper()
	select {
	case p := <-g.reached:
		if p != phase {
			t.Fatalf("index build held at %q, want %q", p, phase)
		}
	case <-time.After(time.Minute):
		t.Fatalf("no index build reached %q", phase)
	}
}

// open lets the held build go on.
func (g *phaseGate) open() {
	g.mu.Lock()
	rel := g.release
	g.mu.Unlock()
	rel <- struct{}{}
}

// openAll stops holding and lets every held build go on, now and later
// (deferred by tests, before the store's Close, so that a failure does
// not leave a build blocked). open must not be called afterwards.
func (g *phaseGate) openAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	clear(g.held)
	if g.release != nil {
		close(g.release)
		g.release = nil
	}
}

// vecBatch upserts ids v<from> .. v<to-1> with vectors drawn from rng
// (one version of each, written at epoch e as content).
func vecBatch(rng *rand.Rand, from, to int, tag string) *Batch {
	return vecBatchText(rng, from, to, tag, "")
}

// vecBatchText is vecBatch with extra appended to every content.
func vecBatchText(rng *rand.Rand, from, to int, tag, extra string) *Batch {
	b := &Batch{}
	for i := from; i < to; i++ {
		v := make([]float32, testDim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		id := fmt.Sprintf("v%05d", i)
		b.Upsert(Document{ID: id, Content: id + " " + tag + extra, Vector: v, Namespace: "t/", ACL: []string{"alice"},
			Metadata: map[string]string{"batch": tag}, UpdatedUnixNano: int64(1 + i)})
	}
	return b
}

// applyModel applies b to s and to m.
func applyModel(t *testing.T, s *Store, m model, b *Batch) uint64 {
	t.Helper()
	e, err := s.Apply(b)
	if err != nil {
		t.Fatal(err)
	}
	m.apply(b)
	return e
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func kinds(s *Store) []SegmentIndexType {
	v := s.currentView()
	defer v.unref()
	var out []SegmentIndexType
	for _, sg := range v.segs {
		out = append(out, sg.indexKind)
	}
	return out
}

func randQuery(rng *rand.Rand) []float32 {
	q := make([]float32, testDim)
	for i := range q {
		q[i] = float32(rng.NormFloat64())
	}
	return q
}

// recallAgainst is the mean recall@k of the snapshot's searches for qs
// against the model's exact top k.
func recallAgainst(t *testing.T, sn *Snapshot, m model, qs [][]float32, k int) float64 {
	t.Helper()
	found, total := 0, 0
	for _, q := range qs {
		hits, err := sn.SearchVector(q, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		for _, id := range refSearch(m, L2, q, k, nil) {
			want[id] = true
		}
		total += len(want)
		for _, h := range hits {
			if want[h.Doc.ID] {
				found++
			}
		}
	}
	return float64(found) / float64(max(total, 1))
}

// TestBackgroundFlushUnderPressureWritesFlat: a background flush
// (MemTableSizeBytes) held until the MemTables are past the slowdown
// bound (2·MemTableSizeBytes, writes being slowed) writes its segment
// with a flat vector section, not an HNSW graph (the store's
// SegmentIndex); the segment is pending for the deferred index pass, and
// searches over it (the segment alone and the whole store) equal brute
// force.
func TestBackgroundFlushUnderPressureWritesFlat(t *testing.T) {
	o := testOptions(vfs.NewCrashableMem())
	o.MemTableSizeBytes = 16 << 10
	release := make(chan struct{})
	var relOnce sync.Once
	unhold := func() { relOnce.Do(func() { close(release) }) }
	defer unhold()
	var frozen atomic.Int64
	o.TestingFlushHook = func() {
		if frozen.Add(1) == 1 {
			<-release
		}
	}
	gate := newPhaseGate("build")
	o.TestingIndexHook = gate.hook
	s := mustOpen(t, o)
	defer s.Close()
	defer gate.openAll()
	defer unhold()
	rng := rand.New(rand.NewPCG(1, 2))
	m := model{}
	// Write until the first background flush is frozen and held, and the
	// MemTables are past the slowdown bound.
	n := 0
	for {
		applyModel(t, s, m, vecBatch(rng, n, n+20, "a"))
		n += 20
		if slow, _, _ := s.pressure(); slow && frozen.Load() > 0 {
			applyModel(t, s, m, vecBatch(rng, n, n+20, "a")) // slowed down
			n += 20
			break
		}
		if n > 20000 {
			t.Fatal("writes never came under pressure")
		}
	}
	unhold()
	waitFor(t, "a background flush", func() bool { return s.Flushes() > 0 })
	gate.wait(t, "build") // the index pass reserved the flat segment; hold it there
	if bp := s.Backpressure(); bp.Slowdowns == 0 {
		t.Fatalf("no write was slowed down: %+v", bp)
	}
	sn := s.Snapshot()
	defer sn.Close()
	if len(sn.v.segs) == 0 {
		t.Fatal("no warm segment")
	}
	sg := sn.v.segs[0]
	if sg.indexKind != segmentIndexFlat || sg.index != nil || !s.pendingIndex(sg) {
		t.Fatalf("background flush under pressure wrote a %q segment (pending %v), want flat", sg.indexKind, s.pendingIndex(sg))
	}
	if got := sn.StorageStats()[1].VectorIndex; got != "flat" {
		t.Fatalf("warm vector index %q, want flat", got)
	}
	// Brute force over the segment's rows, and over the whole store.
	segModel := model{}
	for r, d := range sg.docs {
		if sg.visible(uint32(r), sn.Epoch()) {
			segModel[d.ID] = *d
		}
	}
	if len(segModel) < 100 {
		t.Fatalf("flat segment holds only %d live rows", len(segModel))
	}
	for i := 0; i < 40; i++ {
		q := randQuery(rng)
		k := 1 + rng.IntN(20)
		hits, err := sg.search(bg, q, k, o.SegmentEfSearch, sn.Epoch(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fmt.Sprint(hitIDs(hits)), fmt.Sprint(refSearch(segModel, L2, q, k, nil)); got != want {
			t.Fatalf("flat segment search k=%d: %s, brute force %s", k, got, want)
		}
		all, err := sn.SearchVector(q, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fmt.Sprint(hitIDs(all)), fmt.Sprint(refSearch(m, L2, q, k, nil)); got != want {
			t.Fatalf("store search k=%d: %s, brute force %s", k, got, want)
		}
	}
	if d := checkAgainst(sn, m); d != "" {
		t.Fatal(d)
	}
}

// TestDeferredIndexBuild: the background index pass rewrites a flat
// segment with an HNSW graph: the same rows in the same order (ids,
// births, documents, vectors), every death carried over, including
// deletes and upserts issued while the graph was built and while the new
// file waited for its commit, the tombstones up to the durable epoch
// persisted under the new segment's id (a flush ran between), and
// searches still equal brute force at high recall. A snapshot pinned
// before the rewrite keeps its view, and a crash image taken afterwards
// reopens to the same state.
func TestDeferredIndexBuild(t *testing.T) {
	mem := vfs.NewCrashableMem()
	o := testOptions(mem)
	gate := newPhaseGate("build", "commit")
	o.TestingIndexHook = gate.hook
	s := mustOpen(t, o)
	defer s.Close()
	defer gate.openAll()
	rng := rand.New(rand.NewPCG(3, 4))
	m := model{}
	n := 1500
	if testing.Short() {
		n = 600
	}
	for i := 0; i < n; i += 100 {
		applyModel(t, s, m, vecBatch(rng, i, i+100, "a"))
	}
	del := func(ids ...int) {
		b := &Batch{}
		for _, i := range ids {
			b.Delete(fmt.Sprintf("v%05d", i))
		}
		applyModel(t, s, m, b)
	}
	del(3, 4, 5) // dead before the flush: not in the segment
	s.kick()     // a background flush: its segment is flat
	gate.wait(t, "build")
	v := s.currentView()
	if len(v.segs) != 1 || v.segs[0].indexKind != segmentIndexFlat {
		v.unref()
		t.Fatalf("after the background flush: %v, want one flat segment", kinds(s))
	}
	flat := v.segs[0]
	v.unref()
	pinned, pinnedModel := s.Snapshot(), copyModel(m)
	defer pinned.Close()
	qs := make([][]float32, 60)
	for i := range qs {
		qs[i] = randQuery(rng)
	}
	if r := recallAgainst(t, pinned, m, qs, 10); r != 1 {
		t.Fatalf("recall@10 over the flat segment %.3f, want 1 (exact)", r)
	}

	// While the graph is being built: deletes and upserts of its rows.
	del(10, 11, 12, 13)
	applyModel(t, s, m, vecBatch(rng, 20, 25, "b"))
	gate.open()
	gate.wait(t, "commit")
	// The new file is written, not committed: more deaths, a flush that
	// makes them durable (tombstones of the flat segment), and deaths
	// after it (rebuilt from the WAL on reopen).
	del(30, 31)
	applyModel(t, s, m, vecBatch(rng, 40, 42, "c"))
	if err := s.flush(bg, 1, false); err != nil {
		t.Fatal(err)
	}
	D := s.Manifest().State().DurableEpoch
	del(50, 51)
	applyModel(t, s, m, vecBatch(rng, 60, 61, "d"))
	gate.set("build", false)
	gate.set("commit", false)
	gate.open()
	waitFor(t, "the index build", func() bool { return s.IndexBuilds() == 1 })

	v = s.currentView()
	defer v.unref()
	var built *warmSegment
	for _, sg := range v.segs {
		if sg == flat {
			t.Fatal("the flat segment is still in the view")
		}
		if sg.meta.Rows == flat.meta.Rows && sg.indexKind == SegmentIndexHNSW && sg.meta.ID > flat.meta.ID && built == nil {
			built = sg
		}
	}
	if built == nil {
		t.Fatalf("no rewritten segment among %v", kinds(s))
	}
	if built.index == nil || built.index.Len() != len(flat.vecRow) {
		t.Fatalf("rewritten segment's graph holds %v vectors, want %d", built.index, len(flat.vecRow))
	}
	dead := 0
	for r := range flat.docs {
		a, b := flat.docs[r], built.docs[r]
		if a.ID != b.ID || a.Content != b.Content || !sameVec(a.Vector, b.Vector) || flat.birth[r] != built.birth[r] ||
			a.Metadata["batch"] != b.Metadata["batch"] || a.UpdatedUnixNano != b.UpdatedUnixNano {
			t.Fatalf("row %d: %q (birth %d) became %q (birth %d)", r, a.ID, flat.birth[r], b.ID, built.birth[r])
		}
		if da, db := flat.death[r].Load(), built.death[r].Load(); da != db {
			t.Fatalf("row %d (%s): death %d became %d", r, a.ID, da, db)
		} else if da != epochLive {
			dead++
		}
	}
	if dead != 4+5+2+2+2+1 {
		t.Fatalf("%d dead rows carried over, want 16", dead)
	}
	if string(flat.lex) != string(built.lex) {
		t.Fatal("the BM25 section changed")
	}
	// Tombstones: the deaths ≤ D, under the new id only.
	want := map[Tombstone]bool{}
	for r := range built.death {
		if d := built.death[r].Load(); d <= D {
			want[Tombstone{Segment: built.meta.ID, Row: uint32(r), Death: d}] = true
		}
	}
	got := map[Tombstone]bool{}
	for _, tb := range s.Manifest().State().Tombstones {
		if tb.Segment == flat.meta.ID {
			t.Fatalf("tombstone %+v names the replaced segment", tb)
		}
		if tb.Segment == built.meta.ID {
			got[tb] = true
		}
	}
	if len(want) != 13 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("tombstones of the rewritten segment %v, want %v (13)", got, want)
	}

	sn := s.Snapshot()
	defer sn.Close()
	if d := checkAgainst(sn, m); d != "" {
		t.Fatal(d)
	}
	if r := recallAgainst(t, sn, m, qs, 10); r < 0.95 {
		t.Fatalf("recall@10 after the index build %.3f, want >= 0.95", r)
	}
	if d := checkAgainst(pinned, pinnedModel); d != "" {
		t.Fatalf("snapshot pinned before the rewrite: %s", d)
	}
	if r := recallAgainst(t, pinned, pinnedModel, qs, 10); r != 1 {
		t.Fatalf("pinned snapshot recall@10 %.3f, want 1", r)
	}

	s2 := mustOpen(t, testOptions(mem.CrashClone()))
	defer s2.Close()
	sn2 := s2.Snapshot()
	defer sn2.Close()
	if d := checkAgainst(sn2, m); d != "" {
		t.Fatalf("crash-reopen: %s", d)
	}
	for _, k := range kinds(s2) {
		if k != SegmentIndexHNSW {
			t.Fatalf("crash-reopen: segment kinds %v", kinds(s2))
		}
	}
	if r := recallAgainst(t, sn2, m, qs, 10); r < 0.95 {
		t.Fatalf("crash-reopen recall@10 %.3f", r)
	}
}

// TestFlushBuildsDeferredIndexes: an explicit Flush returns only once no
// segment is waiting for its index: with two flat segments from
// background flushes, one of them held by the background index pass, it
// builds the other itself, waits for the held one (which then takes every
// core), and afterwards every segment has the store's SegmentIndex
// (HNSW; IVF-PQ for those with at least IVFMinRows vectors). With
// AutoCompact and CompactMaxSegments 1 the merge lanes run beside the
// index pass over the same segments.
func TestFlushBuildsDeferredIndexes(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(*Options)
	}{
		{"hnsw", func(*Options) {}},
		{"hnsw-autocompact", func(o *Options) { o.AutoCompact, o.CompactMaxSegments = true, 1 }},
		{"ivfpq", tinyIVF},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := testOptions(vfs.NewCrashableMem())
			c.set(&o)
			gate := newPhaseGate("build")
			o.TestingIndexHook = gate.hook
			s := mustOpen(t, o)
			defer s.Close()
			defer gate.openAll()
			rng := rand.New(rand.NewPCG(5, 6))
			m := model{}
			applyModel(t, s, m, vecBatch(rng, 0, 300, "a"))
			s.kick()
			gate.wait(t, "build") // the background pass holds the first flat segment
			gate.set("build", false)
			applyModel(t, s, m, vecBatch(rng, 300, 600, "b"))
			applyModel(t, s, m, vecBatch(rng, 0, 50, "c")) // ends rows of the first segment
			s.kick()
			waitFor(t, "the second background flush", func() bool { return s.Flushes() == 2 })
			applyModel(t, s, m, vecBatch(rng, 600, 700, "d"))
			flushed := make(chan error, 1)
			go func() { flushed <- s.Flush(bg) }()
			if c.name != "hnsw-autocompact" { // a merge may take it instead
				waitFor(t, "Flush's own index build", func() bool { return s.IndexBuilds() == 1 })
			}
			select {
			case err := <-flushed:
				t.Fatalf("Flush returned (%v) while a segment waited for its index", err)
			case <-time.After(20 * time.Millisecond):
			}
			gate.open()
			if err := <-flushed; err != nil {
				t.Fatal(err)
			}
			sn := s.Snapshot()
			defer sn.Close()
			for _, sg := range sn.v.segs {
				want := o.SegmentIndex
				if want == "" {
					want = SegmentIndexHNSW
				}
				if s.pendingIndex(sg) || sg.indexKind != want {
					t.Fatalf("after Flush: segment %d (%d vectors) has a %q index (pending %v); kinds %v",
						sg.meta.ID, len(sg.vecRow), sg.indexKind, s.pendingIndex(sg), kinds(s))
				}
			}
			if d := checkAgainst(sn, m); d != "" {
				t.Fatal(d)
			}
			if s.IndexBuilds() == 0 {
				t.Fatal("no deferred index build ran")
			}
			t.Logf("segments %v, %d index builds, %d compactions", kinds(s), s.IndexBuilds(), s.Compactions())
		})
	}
}

// TestCrashDuringIndexBuild cuts the file system before every operation
// of a deferred index build (the new file's create, writes, fsync,
// rename, directory fsync, the manifest edit, the flat file's removal)
// with unsynced data dropped at random, and reopens each image: every
// acknowledged write is there, the state equals the model, the reopened
// store's Flush leaves no flat segment, and files other than the
// manifest's segments are gone or quarantined, never lost data.
func TestCrashDuringIndexBuild(t *testing.T) {
	const seed = 41
	run := func(crashAt int, rng *rand.Rand) (image *vfs.MemFS, acked, ops int) {
		mem := vfs.NewCrashableMem()
		var armed atomic.Bool
		var n atomic.Int64
		inj := errorfs.InjectorFunc{Name: "crash-at", Fn: func(op errorfs.Op) error {
			if armed.Load() && n.Add(1)-1 == int64(crashAt) && image == nil {
				image = mem.CrashCloneWith(vfs.CrashOptions{Rand: rng})
			}
			return nil
		}}
		o := testOptions(errorfs.Wrap(mem, inj))
		o.testingIndexQuiet = time.Millisecond
		gate := newPhaseGate("build")
		o.TestingIndexHook = gate.hook
		s := mustOpen(t, o)
		defer s.Close()
		defer gate.openAll()
		for i := uint64(1); i <= 40; i++ {
			if _, err := s.Apply(genBatch(seed, i)); err != nil {
				t.Fatal(err)
			}
		}
		s.kick()
		gate.wait(t, "build")
		gate.set("build", false)
		for i := uint64(41); i <= 60; i++ { // deaths of flat rows during the build
			if _, err := s.Apply(genBatch(seed, i)); err != nil {
				t.Fatal(err)
			}
		}
		armed.Store(true)
		gate.open()
		waitFor(t, "the index build", func() bool { return s.IndexBuilds() == 1 })
		armed.Store(false)
		if image == nil {
			image = mem.CrashCloneWith(vfs.CrashOptions{Rand: rng})
		}
		return image, 60, int(n.Load())
	}
	_, _, total := run(-1, rand.New(rand.NewPCG(seed, 0)))
	if total < 6 {
		t.Fatalf("the index build did only %d file-system operations", total)
	}
	for k := 0; k <= total; k++ {
		rng := rand.New(rand.NewPCG(seed, uint64(k)))
		image, acked, _ := run(k, rng)
		if _, err := verifyRecovery(testOptions(nil), image, seed, uint64(acked), uint64(acked)); err != nil {
			t.Fatalf("crash before operation %d of %d: %v", k, total, err)
		}
		o := testOptions(image)
		s := mustOpen(t, o)
		listed := map[string]bool{}
		for _, sg := range s.WarmSegments() {
			listed[sg.File] = true
		}
		names, err := image.List("/db")
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			if isSegFile(name) && !listed[name] {
				t.Fatalf("crash before operation %d: %s is neither listed, removed nor quarantined", k, name)
			}
		}
		if err := s.Flush(bg); err != nil {
			t.Fatal(err)
		}
		for _, kind := range kinds(s) {
			if kind != SegmentIndexHNSW {
				t.Fatalf("crash before operation %d: after reopen and Flush, segment kinds %v", k, kinds(s))
			}
		}
		sn := s.Snapshot()
		if d := checkAgainst(sn, modelAt(seed, uint64(acked))); d != "" {
			t.Fatalf("crash before operation %d, after reopen and Flush: %s", k, d)
		}
		sn.Close()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("crashed before each of the %d file-system operations of an index build", total)
}

// TestCrashWithDeferredIndex is the randomised crash test with background
// flushes (flat segments) and the background index pass running beside
// the writer: crashes land inside flat flushes, index builds and their
// commits, with writes acknowledged in between.
func TestCrashWithDeferredIndex(t *testing.T) {
	iters := 60
	if testing.Short() {
		iters = 12
	}
	var during atomic.Int64
	maint := func(s *Store, i uint64) error {
		if i%3 == 0 {
			s.kick()
		}
		s.compactor.mu.Lock()
		if len(s.compactor.indexing) > 0 {
			during.Add(1) // batch i acknowledged during an index build
		}
		s.compactor.mu.Unlock()
		time.Sleep(300 * time.Microsecond)
		return nil
	}
	var builds atomic.Int64
	st, err := runCrashTestMaint(iters, func(o *Options) {
		o.SegmentEfConstruction = 16
		// Builds start while writes go on once two segments wait
		// (indexStartWait), not only in the writer's pauses.
		o.CompactFanIn = 2
		o.testingIndexQuiet = 200 * time.Microsecond // and in its pauses
		o.TestingIndexHook = func(phase string) {
			if phase == "commit" {
				builds.Add(1)
				time.Sleep(time.Millisecond) // writes land between the build and its commit
			}
		}
	}, maint, 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d iterations, unsynced data dropped in %d rounds, %d index builds, %d writes acknowledged during one",
		st.iters, st.dropped, builds.Load(), during.Load())
	if builds.Load() < int64(st.iters) || during.Load() == 0 {
		t.Fatalf("only %d index builds and %d writes during one in %d iterations: the test may pass vacuously",
			builds.Load(), during.Load(), st.iters)
	}
}

// TestIndexBuildsAndMergesDoNotShare: a segment held by a deferred index
// build is never a merge's input (explicit merges and Compact merge the
// other segments around it), a segment a merge holds is never an index
// build's, and a merge of flat segments gives its output the configured
// index. Then Flush leaves only HNSW segments. (compactor.reserve panics
// on a segment reserved twice, which the AutoCompact runs of
// TestFlushBuildsDeferredIndexes and the engine's tests would hit.)
func TestIndexBuildsAndMergesDoNotShare(t *testing.T) {
	o := testOptions(vfs.NewCrashableMem())
	o.CompactMaxSegments = 1
	gate := newPhaseGate("build")
	o.TestingIndexHook = gate.hook
	s := mustOpen(t, o)
	defer s.Close()
	defer gate.openAll()
	rng := rand.New(rand.NewPCG(7, 8))
	m := model{}
	applyModel(t, s, m, vecBatch(rng, 0, 200, "a"))
	s.kick()
	gate.wait(t, "build") // held: the first flat segment
	v := s.currentView()
	held := v.segs[0]
	v.unref()
	for i := 1; i <= 3; i++ { // three more flat segments
		applyModel(t, s, m, vecBatch(rng, 200*i, 200*i+200, "b"))
		applyModel(t, s, m, vecBatch(rng, i, i+5, "c"))
		s.kick()
		waitFor(t, "a background flush", func() bool { return s.Flushes() == int64(i+1) })
	}
	// A merge plan over the free segments; while it holds them, no index
	// build may take them.
	p, _ := s.pickMerge(pickExplicit, nil, 1)
	if p == nil {
		t.Fatal("no merge picked")
	}
	if containsSeg(p.inputs, held) {
		t.Fatal("a merge took the segment an index build holds")
	}
	if ip, _, _ := s.pickIndex(nil, s.backgroundIndexThreads); ip != nil {
		t.Fatalf("an index build took %d segments a merge or index build holds", len(ip.inputs))
	}
	if err := s.runMerge(bg, p); err != nil {
		t.Fatal(err)
	}
	sn := s.Snapshot()
	if !containsSeg(sn.v.segs, held) || held.indexKind != segmentIndexFlat {
		t.Fatal("the held flat segment left the view while its index build was held")
	}
	for _, sg := range sn.v.segs {
		if sg != held && sg.indexKind != SegmentIndexHNSW {
			t.Fatalf("merged segments: kinds %v, want hnsw beside the held flat one", kinds(s))
		}
	}
	if d := checkAgainst(sn, m); d != "" {
		t.Fatal(d)
	}
	sn.Close()
	if s.Compactions() == 0 {
		t.Fatal("no merge ran")
	}
	// An explicit Compact waits for the held index build, then merges
	// its output too (CompactMaxSegments 1: one segment).
	compacted := make(chan error, 1)
	go func() { compacted <- s.Compact(bg) }()
	select {
	case err := <-compacted:
		t.Fatalf("Compact returned (%v) while an index build held a segment", err)
	case <-time.After(50 * time.Millisecond):
	}
	gate.openAll()
	if err := <-compacted; err != nil {
		t.Fatal(err)
	}
	if k := kinds(s); fmt.Sprint(k) != "[hnsw]" {
		t.Fatalf("after Compact: kinds %v, want one hnsw segment", k)
	}
	if err := s.Flush(bg); err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds(s) {
		if k != SegmentIndexHNSW {
			t.Fatalf("after Flush: kinds %v", kinds(s))
		}
	}
	sn = s.Snapshot()
	defer sn.Close()
	if d := checkAgainst(sn, m); d != "" {
		t.Fatal(d)
	}
}

// TestIndexBuildWaitsForWritePause: while writes keep arriving, the
// background index lane starts no build until CompactFanIn segments are
// pending; then it builds one of them beside the writes (one segment a
// build: boundaries stay) and waits again with fewer pending; once the
// writes pause, it builds what is left.
func TestIndexBuildWaitsForWritePause(t *testing.T) {
	o := testOptions(vfs.NewCrashableMem())
	o.CompactFanIn = 3
	o.testingIndexQuiet = 200 * time.Millisecond // far above the writer's 1 ms gaps
	s := mustOpen(t, o)
	defer s.Close()
	stop := make(chan struct{})
	var wrote sync.WaitGroup
	var writeErr atomic.Value
	wrote.Go(func() {
		rng := rand.New(rand.NewPCG(9, 10))
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.Apply(vecBatch(rng, i%500, i%500+1, "w")); err != nil {
				writeErr.Store(err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	defer func() { close(stop); wrote.Wait() }()
	flushes := func(n int64) {
		t.Helper()
		time.Sleep(20 * time.Millisecond) // some rows
		s.kick()
		waitFor(t, fmt.Sprintf("background flush %d", n), func() bool { return s.Flushes() == n })
	}
	building := func() bool {
		s.compactor.mu.Lock()
		defer s.compactor.mu.Unlock()
		return len(s.compactor.indexing) > 0 || s.IndexBuilds() > 0
	}
	flushes(1)
	flushes(2)
	time.Sleep(30 * time.Millisecond)
	if building() || s.pendingCount() != 2 {
		t.Fatalf("with writes arriving and 2 of 3 segments pending: %d index builds, %d pending", s.IndexBuilds(), s.pendingCount())
	}
	flushes(3)
	waitFor(t, "an index build beside the writes", building)
	waitFor(t, "one build of the 3 pending segments", func() bool { return s.IndexBuilds() == 1 })
	time.Sleep(30 * time.Millisecond)
	if s.IndexBuilds() != 1 || s.pendingCount() != 2 {
		t.Fatalf("writes arriving, 2 of 3 segments pending again: %d builds, %d pending", s.IndexBuilds(), s.pendingCount())
	}
	if k := kinds(s); len(k) != 3 {
		t.Fatalf("after one build: kinds %v, want 3 segments (an index build keeps segment boundaries)", k)
	}
	if err := writeErr.Load(); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wrote.Wait()
	stop = make(chan struct{})
	waitFor(t, "the builds after the writes paused", func() bool { return s.pendingCount() == 0 && s.IndexBuilds() >= 3 })
	if n := s.IndexBuilds(); n != 3 {
		t.Fatalf("%d index builds, want 3", n)
	}
	if k := kinds(s); fmt.Sprint(k) != "[hnsw hnsw hnsw]" {
		t.Fatalf("kinds %v, want 3 hnsw segments", k)
	}
}

// TestCompactAfterIndexBuildDropsDeadRows: rows deleted while a deferred
// index build runs (after it chose which rows to keep) are carried over
// to its output dead; an explicit Compact that meets the build waits for
// it and applies the dead-fraction rule to the output, so afterwards no
// warm segment holds a dead row (what Purge relies on).
func TestCompactAfterIndexBuildDropsDeadRows(t *testing.T) {
	o := testOptions(vfs.NewCrashableMem())
	gate := newPhaseGate("build")
	o.TestingIndexHook = gate.hook
	s := mustOpen(t, o)
	defer s.Close()
	defer gate.openAll()
	rng := rand.New(rand.NewPCG(11, 12))
	m := model{}
	applyModel(t, s, m, vecBatch(rng, 0, 300, "a"))
	s.kick()
	gate.wait(t, "build")
	b := &Batch{}
	for i := 10; i < 250; i++ { // most rows die during the build
		b.Delete(fmt.Sprintf("v%05d", i))
	}
	applyModel(t, s, m, b)
	if err := s.flush(bg, 1, false); err != nil { // tombstones durable
		t.Fatal(err)
	}
	compacted := make(chan error, 1)
	go func() { compacted <- s.Compact(bg) }()
	time.Sleep(20 * time.Millisecond)
	gate.openAll()
	if err := <-compacted; err != nil {
		t.Fatal(err)
	}
	if s.IndexBuilds() != 1 {
		t.Fatalf("%d index builds, want 1", s.IndexBuilds())
	}
	v := s.currentView()
	defer v.unref()
	for _, sg := range v.segs {
		for r := range sg.death {
			if d := sg.death[r].Load(); d != epochLive {
				t.Fatalf("segment %d (%s) row %d (%s) dead at %d still on disk after Compact", sg.meta.ID, sg.indexKind, r, sg.docs[r].ID, d)
			}
		}
	}
	sn := s.Snapshot()
	defer sn.Close()
	if d := checkAgainst(sn, m); d != "" {
		t.Fatal(d)
	}
}
