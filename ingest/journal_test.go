package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/vfs"
	"github.com/stratasearch/strata/vfs/errorfs"
)

const jdir, jpath = "/m", "/m/code.manifest.json"

func newJournalFS(t testing.TB) *vfs.MemFS {
	t.Helper()
	mfs := vfs.NewCrashableMem()
	if err := vfs.MkdirAllDurable(mfs, jdir); err != nil {
		t.Fatal(err)
	}
	return mfs
}

// filesJSON is the manifest's entries as the snapshot encodes them: the
// state to compare (generation and format aside).
func filesJSON(m *Manifest) string {
	c := Manifest{FormatVersion: ManifestVersion, Files: m.Files}
	return string(c.appendJSON(nil))
}

var journalPaths = []string{"/src/a.go", "/src/b.go", `/src/with "quote".go`, "/src/\u2028.go", "/src/ü/x.go", "/src/tab\t.c", "/src/z/y.rs"}

// mutate applies n random changes to m: new or replaced entries, in-place
// size/mtime updates, removals, cleared chunk sums.
func mutate(rng *rand.Rand, m *Manifest, n int) {
	pick := func() string { return manifestStrings[rng.IntN(len(manifestStrings)-3)] } // valid UTF-8 only
	for range n {
		p := journalPaths[rng.IntN(len(journalPaths))] + fmt.Sprint(rng.IntN(40))
		switch e := m.Files[p]; {
		case rng.IntN(5) == 0:
			delete(m.Files, p)
		case e != nil && rng.IntN(3) == 0:
			e.Size, e.MTimeNS = rng.Int64N(1<<30), rng.Int64()
		case e != nil && rng.IntN(4) == 0:
			e.ChunkSums = nil
		default:
			var chunks []string
			if k := rng.IntN(4); k > 0 {
				chunks = make([]string, k)
				for i := range chunks {
					chunks[i] = fmt.Sprintf("L%d-L%d", i*10+1, i*10+9)
				}
			}
			m.Files[p] = &FileEntry{Size: rng.Int64N(1 << 20), MTimeNS: rng.Int64(), Hash: pick(), Chunks: chunks,
				ChunkSums: chunks, Skip: []string{"", SkipBinary}[rng.IntN(2)], Chunker: pick()}
		}
	}
}

func mustLoad(t testing.TB, fsys vfs.FS) *Manifest {
	t.Helper()
	m, err := loadManifest(fsys, jpath)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestManifestJournalRoundTrip: after every Save, the manifest loaded
// from the file system, and from a clone holding only what was fsynced,
// has exactly the entries in memory; over 400 saves with a small journal
// limit, so snapshots and journals alternate.
func TestManifestJournalRoundTrip(t *testing.T) {
	defer func(v int64) { journalMinLimit = v }(journalMinLimit)
	journalMinLimit = 4 << 10
	mfs := newJournalFS(t)
	m := mustLoad(t, mfs)
	rng := rand.New(rand.NewPCG(21, 4))
	snapshots := 0
	for i := range 400 {
		gen := m.Journal
		mutate(rng, m, 1+rng.IntN(6))
		if err := m.Save(jpath); err != nil {
			t.Fatal(err)
		}
		if m.Journal != gen {
			snapshots++
		}
		want := filesJSON(m)
		for _, fsys := range []vfs.FS{mfs, mfs.CrashClone()} {
			if got := filesJSON(mustLoad(t, fsys)); got != want {
				t.Fatalf("save %d: reloaded\n%s\nwant\n%s", i, got, want)
			}
		}
	}
	if snapshots < 5 || snapshots > 200 {
		t.Fatalf("%d snapshots in 400 saves: the journal is not being used or not compacted", snapshots)
	}
}

// bigManifest is n entries of plausible size (~300 bytes each).
func bigManifest(n int) *Manifest {
	m := &Manifest{FormatVersion: ManifestVersion, Files: map[string]*FileEntry{}}
	for i := range n {
		m.Files[fmt.Sprintf("/usr/lib/go/src/pkg%03d/file%04d.go", i/50, i)] = &FileEntry{Size: int64(1000 + i), MTimeNS: int64(i) << 20,
			Hash: strings.Repeat("ab", 32), Chunks: []string{"L1-L40", "L41-L90"}, ChunkSums: []string{strings.Repeat("cd", 16), strings.Repeat("ef", 16)}, Chunker: "go"}
	}
	return m
}

// TestManifestSaveWritesOnlyEdits: once a snapshot exists, a Save after
// a change to one entry of 5,000 leaves the snapshot as it was and
// appends one record of about that entry's size to the journal (it
// rewrote the whole 1.4 MB manifest before the journal).
func TestManifestSaveWritesOnlyEdits(t *testing.T) {
	mfs := newJournalFS(t)
	m := bigManifest(5000)
	m.j.fs = mfs
	if err := m.Save(jpath); err != nil {
		t.Fatal(err)
	}
	snap, err := vfs.ReadFile(mfs, jpath)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap) < 1<<20 {
		t.Fatalf("snapshot %d bytes, want the whole manifest", len(snap))
	}
	e := m.Files["/usr/lib/go/src/pkg010/file0500.go"]
	e.Size, e.MTimeNS = 7, 8
	m.Files["/usr/lib/go/src/new.go"] = &FileEntry{Size: 1, Hash: "h", Chunks: []string{"L1-L2"}}
	delete(m.Files, "/usr/lib/go/src/pkg000/file0001.go")
	if err := m.Save(jpath); err != nil {
		t.Fatal(err)
	}
	after, err := vfs.ReadFile(mfs, jpath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, snap) {
		t.Fatalf("the snapshot was rewritten (%d → %d bytes) for a three-entry change", len(snap), len(after))
	}
	st, err := mfs.Stat(journalPath(jpath))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > 1024 {
		t.Fatalf("journal is %d bytes after a three-entry change, want < 1 KiB", st.Size())
	}
	if err := m.Save(jpath); err != nil { // nothing changed: nothing written
		t.Fatal(err)
	}
	if st2, _ := mfs.Stat(journalPath(jpath)); st2.Size() != st.Size() {
		t.Fatalf("an unchanged manifest grew the journal %d → %d", st.Size(), st2.Size())
	}
	if got, want := filesJSON(mustLoad(t, mfs.CrashClone())), filesJSON(m); got != want {
		t.Fatal("reloaded manifest differs")
	}
}

// TestManifestJournalFaults fails each file-system operation of a Save in
// turn (snapshot saves and journal appends): the Save reports it, the
// fsynced state loads as the last acknowledged manifest or the one being
// saved, and the next Save (faults off) makes the current state durable.
func TestManifestJournalFaults(t *testing.T) {
	defer func(v int64) { journalMinLimit = v }(journalMinLimit)
	journalMinLimit = 2 << 10
	for _, snapshot := range []bool{false, true} {
		if n := saveFaults(t, snapshot); n < 4 {
			t.Fatalf("snapshot=%v: only %d operations in a Save", snapshot, n)
		}
	}
}

// saveFaults runs TestManifestJournalFaults for a Save that appends to
// the journal or (snapshot) writes a snapshot; it returns the number of
// operations failed in turn.
func saveFaults(t *testing.T, snapshot bool) int64 {
	for nth := int64(0); ; nth++ {
		mfs := newJournalFS(t)
		var inj *errorfs.IndexInjector
		arm := false
		fsys := errorfs.Wrap(mfs, errorfs.InjectorFunc{Name: "armed", Fn: func(op errorfs.Op) error {
			if !arm {
				return nil
			}
			return inj.MaybeError(op)
		}})
		m := mustLoad(t, fsys)
		rng := rand.New(rand.NewPCG(uint64(nth), 9))
		// Build some history: a snapshot and a journal with records.
		for range 6 {
			mutate(rng, m, 3)
			if err := m.Save(jpath); err != nil {
				t.Fatal(err)
			}
		}
		acked := filesJSON(m)
		mutate(rng, m, 2+int(nth%7))
		if snapshot {
			m.j.broken = true
		}
		attempted := filesJSON(m)
		inj = errorfs.OnIndex(nth)
		arm = true
		err := m.Save(jpath)
		arm = false
		if !inj.Fired() {
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("snapshot=%v: %d faults injected", snapshot, nth)
			return nth
		}
		// A failure after the state became durable (removing the
		// superseded journal) need not be reported: then the attempted
		// state must load, checked below.
		for _, o := range []vfs.CrashOptions{{}, {Process: true}, {Rand: rand.New(rand.NewPCG(uint64(nth), 1))}} {
			got := filesJSON(mustLoad(t, mfs.CrashCloneWith(o)))
			if got != acked && got != attempted {
				t.Fatalf("fault %d (%v), crash %+v: loaded state is neither the acknowledged nor the attempted manifest", nth, err, o)
			}
			if err == nil && got != attempted {
				t.Fatalf("fault %d: Save returned nil but the attempted state is not durable", nth)
			}
		}
		mutate(rng, m, 2)
		if err := m.Save(jpath); err != nil {
			t.Fatalf("fault %d: save after the fault: %v", nth, err)
		}
		if got := filesJSON(mustLoad(t, mfs.CrashClone())); got != filesJSON(m) {
			t.Fatalf("fault %d: the save after the fault is not durable", nth)
		}
	}
}

// journalWithRecords saves a snapshot then three edits; it returns the
// state after each Save and the journal length after each edit.
func journalWithRecords(t testing.TB, mfs *vfs.MemFS) (m *Manifest, states []string, ends []int64) {
	m = mustLoad(t, mfs)
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range 4 {
		mutate(rng, m, 4)
		if err := m.Save(jpath); err != nil {
			t.Fatal(err)
		}
		states = append(states, filesJSON(m))
		if i > 0 {
			st, err := mfs.Stat(journalPath(jpath))
			if err != nil {
				t.Fatal(err)
			}
			ends = append(ends, st.Size())
		}
	}
	return m, states, ends
}

// TestManifestJournalTornTail: a journal cut anywhere inside its last
// record, or followed by zeros, loads as the state before that Save; the
// next Save writes a snapshot rather than append after the torn bytes.
func TestManifestJournalTornTail(t *testing.T) {
	mfs := newJournalFS(t)
	_, states, ends := journalWithRecords(t, mfs)
	full, err := vfs.ReadFile(mfs, journalPath(jpath))
	if err != nil {
		t.Fatal(err)
	}
	writeJournal := func(fsys *vfs.MemFS, b []byte) {
		if err := vfs.WriteFileAtomic(fsys, journalPath(jpath), func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			t.Fatal(err)
		}
	}
	cuts := []int64{}
	for c := ends[1] + 1; c < ends[2]; c += 7 {
		cuts = append(cuts, c)
	}
	for _, c := range cuts {
		fsys := mfs.CrashClone()
		writeJournal(fsys, full[:c])
		m := mustLoad(t, fsys)
		if got := filesJSON(m); got != states[2] {
			t.Fatalf("cut at %d of %d: loaded state is not the one before the last save", c, len(full))
		}
		gen := m.Journal
		mutate(rand.New(rand.NewPCG(uint64(c), 0)), m, 3)
		if err := m.Save(jpath); err != nil {
			t.Fatal(err)
		}
		if m.Journal != gen+1 {
			t.Fatalf("cut at %d: the save after a torn tail appended to it", c)
		}
		if got := filesJSON(mustLoad(t, fsys.CrashClone())); got != filesJSON(m) {
			t.Fatalf("cut at %d: save after the torn tail not durable", c)
		}
	}
	fsys := mfs.CrashClone()
	writeJournal(fsys, append(bytes.Clone(full), make([]byte, 100)...))
	if got := filesJSON(mustLoad(t, fsys)); got != states[3] {
		t.Fatal("a zero-filled tail changed the loaded state")
	}
}

// TestManifestJournalCorrupt: damage inside a record that intact records
// follow is corruption, reported with the journal's path and the
// damaged record's offset, not skipped.
func TestManifestJournalCorrupt(t *testing.T) {
	mfs := newJournalFS(t)
	_, _, ends := journalWithRecords(t, mfs)
	full, err := vfs.ReadFile(mfs, journalPath(jpath))
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(full)
	bad[ends[0]+wal.HeaderSize+3] ^= 0x40 // inside the second edit
	if err := vfs.WriteFileAtomic(mfs, journalPath(jpath), func(w io.Writer) error { _, err := w.Write(bad); return err }); err != nil {
		t.Fatal(err)
	}
	_, err = loadManifest(mfs, jpath)
	var ce *base.CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, base.ErrCorrupt) {
		t.Fatalf("got %v, want a CorruptError", err)
	}
	if ce.Path != journalPath(jpath) || ce.Offset != ends[0] {
		t.Fatalf("corruption reported at %s:%d, want %s:%d", ce.Path, ce.Offset, journalPath(jpath), ends[0])
	}
}

// TestManifestJournalSuperseded: a journal left behind by a crash between
// writing a new snapshot and removing the old journal has the old
// generation; it is ignored, and the next append replaces it.
func TestManifestJournalSuperseded(t *testing.T) {
	mfs := newJournalFS(t)
	m, _, _ := journalWithRecords(t, mfs)
	old, err := vfs.ReadFile(mfs, journalPath(jpath))
	if err != nil {
		t.Fatal(err)
	}
	m.j.broken = true // force a snapshot
	mutate(rand.New(rand.NewPCG(1, 1)), m, 5)
	if err := m.Save(jpath); err != nil {
		t.Fatal(err)
	}
	if _, err := mfs.Stat(journalPath(jpath)); err == nil {
		t.Fatal("the superseded journal was not removed")
	}
	if err := vfs.WriteFileAtomic(mfs, journalPath(jpath), func(w io.Writer) error { _, err := w.Write(old); return err }); err != nil {
		t.Fatal(err)
	}
	back := mustLoad(t, mfs)
	if got := filesJSON(back); got != filesJSON(m) {
		t.Fatal("a superseded journal was applied to the new snapshot")
	}
	mutate(rand.New(rand.NewPCG(2, 2)), back, 2)
	if err := back.Save(jpath); err != nil {
		t.Fatal(err)
	}
	if got := filesJSON(mustLoad(t, mfs.CrashClone())); got != filesJSON(back) {
		t.Fatal("append after a superseded journal not durable")
	}
}

// TestManifestLoadsVersion1: a manifest written before the journal loads,
// and its first Save writes a version-2 snapshot of generation 1.
func TestManifestLoadsVersion1(t *testing.T) {
	mfs := newJournalFS(t)
	v1 := `{"format_version":1,"files":{"/a.go":{"size":3,"mtime_ns":4,"hash":"h","chunks":["L1-L2"]}}}`
	if err := vfs.WriteFileAtomic(mfs, jpath, func(w io.Writer) error { _, err := w.Write([]byte(v1)); return err }); err != nil {
		t.Fatal(err)
	}
	m := mustLoad(t, mfs)
	if e := m.Files["/a.go"]; e == nil || e.Size != 3 || len(e.Chunks) != 1 {
		t.Fatalf("version 1 entry not loaded: %+v", e)
	}
	m.Files["/b.go"] = &FileEntry{Size: 1}
	if err := m.Save(jpath); err != nil {
		t.Fatal(err)
	}
	b, _ := vfs.ReadFile(mfs, jpath)
	if !bytes.HasPrefix(b, []byte(`{"format_version":2,"journal":1,`)) {
		t.Fatalf("snapshot after the first save: %.60s", b)
	}
	if got := filesJSON(mustLoad(t, mfs)); got != filesJSON(m) {
		t.Fatal("reloaded differs")
	}
}

// FuzzManifestJournal: any journal bytes beside a valid snapshot either
// load or fail with an error, never a panic; what loads saves and loads
// back the same.
func FuzzManifestJournal(f *testing.F) {
	mfs := newJournalFS(f)
	journalWithRecords(f, mfs)
	snap, _ := vfs.ReadFile(mfs, jpath)
	full, _ := vfs.ReadFile(mfs, journalPath(jpath))
	f.Add(full)
	f.Add(full[:len(full)/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, j []byte) {
		fsys := newJournalFS(t)
		for name, b := range map[string][]byte{jpath: snap, journalPath(jpath): j} {
			if err := vfs.WriteFileAtomic(fsys, name, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
				t.Fatal(err)
			}
		}
		m, err := loadManifest(fsys, jpath)
		if err != nil {
			return
		}
		m.Files["/fuzz.go"] = &FileEntry{Size: 1}
		if err := m.Save(jpath); err != nil {
			t.Fatal(err)
		}
		if got := filesJSON(mustLoad(t, fsys)); got != filesJSON(m) {
			t.Fatal("saved state does not reload")
		}
	})
}

// TestManifestLeftoverJournal: a snapshot deleted by hand (to force a
// full re-index) leaves its journal; the snapshot the re-index writes
// has a newer generation, so after a crash that keeps the leftover
// journal it still does not apply.
func TestManifestLeftoverJournal(t *testing.T) {
	mfs := newJournalFS(t)
	m := mustLoad(t, mfs)
	m.Files["/old/a.go"] = &FileEntry{Size: 1, Hash: "a"}
	if err := m.Save(jpath); err != nil {
		t.Fatal(err)
	}
	m.Files["/old/b.go"] = &FileEntry{Size: 2, Hash: "b"}
	if err := m.Save(jpath); err != nil { // a journal record
		t.Fatal(err)
	}
	if err := mfs.Remove(jpath); err != nil {
		t.Fatal(err)
	}
	if err := vfs.SyncDir(mfs, jdir); err != nil {
		t.Fatal(err)
	}
	m2 := mustLoad(t, mfs)
	if len(m2.Files) != 0 {
		t.Fatalf("no snapshot, yet %d entries", len(m2.Files))
	}
	m2.Files["/new/c.go"] = &FileEntry{Size: 3, Hash: "c"}
	if err := m2.Save(jpath); err != nil {
		t.Fatal(err)
	}
	if got := filesJSON(mustLoad(t, mfs.CrashClone())); got != filesJSON(m2) {
		t.Fatalf("the leftover journal applied to the new snapshot: %s", got)
	}
}

// truncFS truncates an existing file in place on Create (as O_TRUNC does
// on a real file system), where MemFS makes a new file.
type truncFS struct{ vfs.FS }

func (f truncFS) Create(name string) (vfs.File, error) {
	if _, err := f.Stat(name); err == nil {
		h, err := f.OpenReadWrite(name)
		if err != nil {
			return nil, err
		}
		if err := h.Truncate(0); err != nil {
			h.Close()
			return nil, err
		}
		return h, nil
	}
	return f.FS.Create(name)
}

// TestManifestNewJournalAfterFailedDirSync: a snapshot whose directory
// sync failed may not survive a crash; a reload sees it and its old
// journal as superseded, and the next append must not truncate that
// journal before the snapshot is durable (the acknowledged edits in it
// would be lost with the snapshot).
func TestManifestNewJournalAfterFailedDirSync(t *testing.T) {
	mfs := newJournalFS(t)
	failDirSync := false
	fsys := errorfs.Wrap(truncFS{mfs}, errorfs.InjectorFunc{Name: "syncdir", Fn: func(op errorfs.Op) error {
		if failDirSync && op.Kind == errorfs.OpSyncDir {
			return errorfs.ErrInjected
		}
		return nil
	}})
	m := snapshotAndRecord(t, fsys)
	acked := filesJSON(m)
	failDirSync = true
	m.j.broken = true // the next Save writes a snapshot
	m.Files["/c.go"] = &FileEntry{Size: 3}
	if err := m.Save(jpath); err == nil {
		t.Fatal("a failed directory sync was not reported")
	}
	back := mustLoad(t, fsys) // as a retry would
	back.Files["/d.go"] = &FileEntry{Size: 4}
	back.Save(jpath) // may fail: the directory sync still fails
	got := filesJSON(mustLoad(t, mfs.CrashClone()))
	if got != acked && got != filesJSON(m) && got != filesJSON(back) {
		t.Fatalf("after the crash: %s\nolder than the acknowledged %s", got, acked)
	}
}

// TestReloadAfterFailureWritesSnapshot: after a pass whose Save failed
// at the journal's fsync, the reloaded manifest's next Save writes a
// snapshot, even when its edit would fit in the journal.
func TestReloadAfterFailureWritesSnapshot(t *testing.T) {
	mfs := newJournalFS(t)
	failSync := false
	fsys := errorfs.Wrap(mfs, errorfs.InjectorFunc{Name: "sync", Fn: func(op errorfs.Op) error {
		if failSync && op.Kind == errorfs.OpSync && strings.HasSuffix(op.Path, ".journal") {
			return errorfs.ErrInjected
		}
		return nil
	}})
	m := snapshotAndRecord(t, fsys)
	failSync = true
	m.Files["/c.go"] = &FileEntry{Size: 3}
	if err := m.Save(jpath); err == nil {
		t.Fatal("failed fsync not reported")
	}
	failSync = false
	back, err := reloadAfterFailure(fsys, jpath)
	if err != nil {
		t.Fatal(err)
	}
	gen := back.Journal
	back.Files["/d.go"] = &FileEntry{Size: 4}
	if err := back.Save(jpath); err != nil {
		t.Fatal(err)
	}
	if back.Journal == gen {
		t.Fatal("the save after a failed pass appended after a record whose fsync failed")
	}
}

// snapshotAndRecord loads the manifest on fsys and saves it twice: a
// snapshot holding /a.go, then a journal record adding /b.go.
func snapshotAndRecord(t *testing.T, fsys vfs.FS) *Manifest {
	t.Helper()
	m := mustLoad(t, fsys)
	m.Files["/a.go"] = &FileEntry{Size: 1}
	if err := m.Save(jpath); err != nil {
		t.Fatal(err)
	}
	m.Files["/b.go"] = &FileEntry{Size: 2}
	if err := m.Save(jpath); err != nil {
		t.Fatal(err)
	}
	return m
}
