package tier

// Deferred index builds beside Archive, merges that end without
// committing, and segments whose rows die before their index is built.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stratasearch/strata/vfs"
)

// longBatch upserts ids v<from>..v<to-1> with ~1 KB contents (16 rows per
// 16 KiB text block).
func longBatch(rng *rand.Rand, from, to int, tag string) *Batch {
	return vecBatchText(rng, from, to, tag, " "+strings.Repeat("word ", 200))
}

func delBatch(from, to int) *Batch {
	b := &Batch{}
	for i := from; i < to; i++ {
		b.Delete(fmt.Sprintf("v%05d", i))
	}
	return b
}

func mustApply(t *testing.T, s *Store, b *Batch) {
	t.Helper()
	if _, err := s.Apply(b); err != nil {
		t.Fatal(err)
	}
}

// TestArchiveDuringFlushIndexBuild: an Archive of the flat segment that
// Flush's index build holds moves it to the cold tier; the build keeps a
// reference to its input (compactor.reserve), so it reads nothing freed,
// drops its output (the input is gone) and Flush succeeds.
func TestArchiveDuringFlushIndexBuild(t *testing.T) {
	o := testOptions(vfs.NewCrashableMem())
	o.ManualIndex = true // only Flush builds
	gate := newPhaseGate("build")
	o.TestingIndexHook = gate.hook
	s := mustOpen(t, o)
	defer s.Close()
	defer gate.openAll()
	rng := rand.New(rand.NewPCG(1, 2))
	mustApply(t, s, longBatch(rng, 0, 300, "a"))
	s.kick()
	waitFor(t, "background flush", func() bool { return s.Flushes() == 1 })
	// Rows 0..99 die: Archive never reads their text blocks.
	mustApply(t, s, delBatch(0, 100))
	errc := make(chan error, 1)
	go func() { errc <- s.Flush(bg) }()
	gate.wait(t, "build")
	if _, err := s.Archive(bg, ArchiveOptions{Oldest: 1, Nlist: 1, KMeansIters: 1}); err != nil {
		t.Fatal(err)
	}
	gate.openAll()
	if err := <-errc; err != nil {
		t.Fatalf("Flush failed because Archive took the segment its index build held: %v", err)
	}
}

// TestArchiveDuringIndexBuildMmap: the same on the real file system,
// where the segment is mmapped and the build reads its BM25 section
// from the mapping: without the reference the build read unmapped
// memory (a fault that kills the process).
func TestArchiveDuringIndexBuildMmap(t *testing.T) {
	o := Options{FS: vfs.Default, Dir: t.TempDir(), Dim: testDim, Logger: quietLog}
	o.LexicalSegments = bm25Lex{}
	o.ManualIndex = true
	gate := newPhaseGate("build")
	o.TestingIndexHook = gate.hook
	s := mustOpen(t, o)
	defer s.Close()
	defer gate.openAll()
	rng := rand.New(rand.NewPCG(1, 2))
	mustApply(t, s, longBatch(rng, 0, 300, "a"))
	s.kick()
	waitFor(t, "background flush", func() bool { return s.Flushes() == 1 })
	errc := make(chan error, 1)
	go func() { errc <- s.Flush(bg) }()
	gate.wait(t, "build")
	if _, err := s.Archive(bg, ArchiveOptions{Oldest: 1, Nlist: 1, KMeansIters: 1}); err != nil {
		t.Fatal(err)
	}
	gate.openAll()
	if err := <-errc; err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

// TestIndexBuildOfDeadSegment: a flat segment whose rows all died before
// its index build drops them as any merge does: no graph is built and
// the segment leaves the view.
func TestIndexBuildOfDeadSegment(t *testing.T) {
	o := testOptions(vfs.NewCrashableMem())
	o.ManualIndex = true
	s := mustOpen(t, o)
	defer s.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	mustApply(t, s, vecBatch(rng, 0, 300, "a"))
	s.kick()
	waitFor(t, "background flush", func() bool { return s.Flushes() == 1 })
	mustApply(t, s, delBatch(0, 300))
	if err := s.Flush(bg); err != nil {
		t.Fatal(err)
	}
	v := s.currentView()
	defer v.unref()
	for _, sg := range v.segs {
		t.Fatalf("segment %d (%s, %d rows) left after Flush; every row was dead", sg.meta.ID, sg.indexKind, sg.meta.Rows)
	}
}

// TestArchiveOldestAfterIndexBuilds: index builds give their outputs new,
// higher segment ids than a later flush's segment; Archive(Oldest: 1)
// still archives the segment with the oldest rows (by MinEpoch).
func TestArchiveOldestAfterIndexBuilds(t *testing.T) {
	o := testOptions(vfs.NewCrashableMem())
	o.ManualIndex = true
	s := mustOpen(t, o)
	defer s.Close()
	rng := rand.New(rand.NewPCG(7, 8))
	mustApply(t, s, vecBatch(rng, 0, 200, "old"))
	s.kick()
	waitFor(t, "background flush", func() bool { return s.Flushes() == 1 })
	mustApply(t, s, vecBatch(rng, 200, 400, "mid"))
	s.kick()
	waitFor(t, "background flush", func() bool { return s.Flushes() == 2 })
	mustApply(t, s, vecBatch(rng, 400, 600, "new"))
	if err := s.Flush(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Archive(bg, ArchiveOptions{Oldest: 1, Nlist: 1, KMeansIters: 1}); err != nil {
		t.Fatal(err)
	}
	v := s.currentView()
	defer v.unref()
	for _, sg := range v.segs {
		t.Logf("warm segment %d: first row %s (%s)", sg.meta.ID, sg.docs[0].ID, sg.docs[0].Metadata["batch"])
	}
	for _, sg := range v.segs {
		if sg.docs[0].Metadata["batch"] == "new" {
			return
		}
	}
	t.Fatal("Archive(Oldest: 1) archived the segment with the newest rows")
}

// TestIndexLaneKickedAfterFailedMerge: a merge that held flat segments
// and ended without committing (here: its ctx was done) wakes the index
// lane, which then builds them; nothing else would until the next
// background flush, Flush or Open.
func TestIndexLaneKickedAfterFailedMerge(t *testing.T) {
	o := testOptions(vfs.NewCrashableMem())
	o.testingIndexQuiet = 300 * time.Millisecond
	s := mustOpen(t, o)
	defer s.Close()
	rng := rand.New(rand.NewPCG(9, 10))
	mustApply(t, s, vecBatch(rng, 0, 200, "a"))
	s.kick()
	waitFor(t, "background flush", func() bool { return s.Flushes() == 1 })
	mustApply(t, s, vecBatch(rng, 200, 400, "b"))
	s.kick()
	waitFor(t, "background flush", func() bool { return s.Flushes() == 2 })
	p, _ := s.pickMerge(pickExplicit, nil, 1) // as Compact would
	if p == nil || len(p.inputs) != 2 {
		t.Fatal("no merge of the two flat segments")
	}
	time.Sleep(700 * time.Millisecond) // the lane wakes, finds both busy
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if err := s.runMerge(ctx, p); err == nil {
		t.Fatal("merge with a done ctx succeeded")
	}
	time.Sleep(time.Second)
	if n := s.pendingCount(); n != 0 {
		t.Fatalf("1 s after the merge released them, %d flat segments still wait (%d index builds); no write is arriving", n, s.IndexBuilds())
	}
}
