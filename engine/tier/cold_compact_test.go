package tier

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/stratasearch/strata/vfs"
	"github.com/stratasearch/strata/vfs/errorfs"
)

// coldFileRows decodes every row of a cold archive file with a plain
// Parquet reader (independent of openArchive).
func coldFileRows(t *testing.T, fs vfs.FS, path string) []coldRow {
	t.Helper()
	data, err := readAllFile(fs, path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	rd := parquet.NewGenericReader[coldRow](f)
	defer rd.Close()
	out := make([]coldRow, f.NumRows())
	n, err := rd.Read(out)
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return out[:n]
}

// coldResults renders SearchCold hits for a few fixed queries plus Get of
// every id, for before/after comparison.
func coldResults(t *testing.T, s *Store, docs []Document) string {
	t.Helper()
	sn := s.Snapshot()
	defer sn.Close()
	var sb strings.Builder
	rng := rand.New(rand.NewPCG(5, 5))
	for qi := 0; qi < 6; qi++ {
		q := make([]float32, testDim)
		for j := range q {
			q[j] = float32(rng.NormFloat64())
		}
		hits, err := sn.SearchCold(q, 10, 4, nil)
		if err != nil {
			t.Fatal(err)
		}
		var hs []string
		for _, h := range hits {
			hs = append(hs, fmt.Sprintf("%s@%d:%.6g", h.Doc.ID, h.Epoch, h.Distance))
		}
		sort.Strings(hs) // ties may reorder
		fmt.Fprintf(&sb, "q%d %v\n", qi, hs)
	}
	for _, d := range docs {
		if g, e, ok := sn.Get(d.ID); ok {
			fmt.Fprintf(&sb, "%s@%d %q %v %v %v %d %v\n", g.ID, e, g.Content, g.Metadata, g.ACL, g.Vector, g.Trust, g.VersionHash[:2])
		} else {
			fmt.Fprintf(&sb, "%s absent\n", d.ID)
		}
	}
	return sb.String()
}

// assertGone checks that no file of the store holds a deleted document:
// cold archives are decoded (their columns are zstd-compressed), every
// other file is searched byte for byte.
func assertGone(t *testing.T, fs vfs.FS, deleted map[string]string) {
	t.Helper()
	names, err := fs.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		p := filepath.Join("/db", n)
		if isColdFile(n) {
			for _, r := range coldFileRows(t, fs, p) {
				if c, ok := deleted[r.ID]; ok && r.Content == c {
					t.Fatalf("%s still holds deleted row %s %q", p, r.ID, c)
				}
			}
			continue
		}
		data, err := readAllFile(fs, p)
		if err != nil {
			continue // a directory
		}
		for id, c := range deleted {
			if bytes.Contains(data, []byte(c)) {
				t.Fatalf("%s still holds the content of deleted row %s", p, id)
			}
		}
	}
}

func TestCompactArchivesDropsDeadRows(t *testing.T) {
	mem := vfs.NewCrashableMem()
	o := testOptions(mem)
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	docs := coldDocs(180, 11, testDim)
	applyDocs(t, s, docs[:150])
	if err := s.Flush(bg); err != nil {
		t.Fatal(err)
	}
	aid, err := s.Archive(bg, ArchiveOptions{KMeansIters: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// A second archive whose rows will all die.
	applyDocs(t, s, docs[150:])
	if err := s.Flush(bg); err != nil {
		t.Fatal(err)
	}
	bid, err := s.Archive(bg, ArchiveOptions{KMeansIters: 2, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	oldFiles := map[uint64]string{}
	for _, a := range s.Archives() {
		oldFiles[a.ID] = a.File
	}
	pinned := s.Snapshot() // before the deletes
	deleted := map[string]string{}
	var del Batch
	for i, d := range docs {
		if i%3 == 0 || i >= 150 {
			del.Delete(d.ID)
			deleted[d.ID] = d.Content
		}
	}
	if _, err := s.Apply(&del); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(bg); err != nil {
		t.Fatal(err)
	}
	want := coldResults(t, s, docs)

	// The pinned snapshot still needs the dead rows: nothing is rewritten.
	if err := s.Compact(bg); err != nil {
		t.Fatal(err)
	}
	if n := s.ArchiveCompactions(); n != 0 {
		t.Fatalf("%d archive compactions with a snapshot pinned before the deletes", n)
	}
	for id, c := range deleted {
		if g, _, ok := pinned.Get(id); !ok || g.Content != c {
			t.Fatalf("pinned snapshot lost %s", id)
		}
	}
	pinned.Close()

	if err := s.Compact(bg); err != nil {
		t.Fatal(err)
	}
	if n := s.ArchiveCompactions(); n != 2 {
		t.Fatalf("%d archive compactions, want 2 (one rewrite, one removal)", n)
	}
	arcs := s.Archives()
	if len(arcs) != 1 || arcs[0].ID == aid || arcs[0].ID == bid || arcs[0].Rows != 100 {
		t.Fatalf("archives after compaction %+v (old ids %d, %d)", arcs, aid, bid)
	}
	for _, f := range oldFiles {
		if _, err := mem.Stat(filepath.Join("/db", f)); err == nil {
			t.Fatalf("old archive file %s not deleted", f)
		}
	}
	rows := coldFileRows(t, mem, filepath.Join("/db", arcs[0].File))
	if len(rows) != 100 {
		t.Fatalf("new archive has %d rows", len(rows))
	}
	assertGone(t, mem, deleted)
	if got := coldResults(t, s, docs); got != want {
		t.Fatalf("results changed by compaction:\n got %s\nwant %s", got, want)
	}
	if err := s.Compact(bg); err != nil || s.ArchiveCompactions() != 2 {
		t.Fatalf("second compaction: %v, %d", err, s.ArchiveCompactions())
	}

	// Reopen: the same results, the same files.
	s.Close()
	if s, err = Open(o); err != nil {
		t.Fatal(err)
	}
	if got := coldResults(t, s, docs); got != want {
		t.Fatalf("results changed by reopen:\n got %s\nwant %s", got, want)
	}
	assertGone(t, mem, deleted)

	// Later deaths on the rewritten archive, then promote: Get agrees.
	var del2 Batch
	del2.Delete(docs[1].ID)
	deleted[docs[1].ID] = docs[1].Content
	if _, err := s.Apply(&del2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Promote(bg, s.Archives()[0].ID, nil); err != nil {
		t.Fatal(err)
	}
	sn := s.Snapshot()
	defer sn.Close()
	for _, d := range docs {
		g, _, ok := sn.Get(d.ID)
		if _, dead := deleted[d.ID]; dead {
			if ok {
				t.Fatalf("deleted %s visible after promote", d.ID)
			}
			continue
		}
		if !ok || g.Content != d.Content || !sameVec(g.Vector, d.Vector) || fmt.Sprint(g.Metadata) != fmt.Sprint(d.Metadata) {
			t.Fatalf("promoted %s = %+v, want %+v", d.ID, g, d)
		}
	}
}

// TestCompactArchivesDeathDuringRewrite: a delete applied while the
// archive is being rewritten (after its rows are chosen) is carried over
// to the new archive, in memory and, after a flush, across a reopen.
func TestCompactArchivesDeathDuringRewrite(t *testing.T) {
	mem := vfs.NewCrashableMem()
	var s *Store
	var fired, armed atomic.Bool
	var applyErr error
	victim := "doc-0002"
	inj := errorfs.InjectorFunc{Name: "delete-during-rewrite", Fn: func(op errorfs.Op) error {
		if armed.Load() && op.Kind == errorfs.OpSync && strings.Contains(op.Path, ".parquet.tmp") && fired.CompareAndSwap(false, true) {
			var b Batch
			b.Delete(victim)
			_, applyErr = s.Apply(&b)
		}
		return nil
	}}
	o := testOptions(errorfs.Wrap(mem, inj))
	var err error
	if s, err = Open(o); err != nil {
		t.Fatal(err)
	}
	docs := coldDocs(60, 3, testDim)
	applyDocs(t, s, docs)
	if err := s.Flush(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Archive(bg, ArchiveOptions{KMeansIters: 1}); err != nil {
		t.Fatal(err)
	}
	var del Batch
	for i := 0; i < 60; i += 3 { // 20 of 60 > CompactDeadFraction
		del.Delete(docs[i+1].ID) // doc-0001, 0004, ...: not the victim
	}
	if _, err := s.Apply(&del); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(bg); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	if err := s.CompactArchives(bg); err != nil {
		t.Fatal(err)
	}
	armed.Store(false)
	if !fired.Load() || applyErr != nil {
		t.Fatalf("delete during rewrite: fired %v, err %v", fired.Load(), applyErr)
	}
	if s.ArchiveCompactions() != 1 {
		t.Fatalf("%d archive compactions", s.ArchiveCompactions())
	}
	check := func(when string) {
		sn := s.Snapshot()
		defer sn.Close()
		if _, _, ok := sn.Get(victim); ok {
			t.Fatalf("%s: %s deleted during the rewrite is visible", when, victim)
		}
		if _, _, ok := sn.Get(docs[3].ID); !ok {
			t.Fatalf("%s: live %s missing", when, docs[3].ID)
		}
	}
	check("after compaction")
	s.Close()
	if s, err = Open(o); err != nil {
		t.Fatal(err)
	}
	check("after reopen (WAL replay)")
	if err := s.Flush(bg); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(o); err != nil {
		t.Fatal(err)
	}
	check("after flush and reopen (manifest tombstone)")
	s.Close()
}

// TestCrashDuringArchiveCompaction crashes at random file operations of
// CompactArchives: the reopened store matches the model (no live row
// lost, no dead row resurrected); both sides of the manifest edit occur.
func TestCrashDuringArchiveCompaction(t *testing.T) {
	iters := 30
	if testing.Short() {
		iters = 8
	}
	const seed = 29
	setup := func(inj errorfs.Injector, mem *vfs.MemFS) (*Store, model) {
		o := testOptions(errorfs.Wrap(mem, inj))
		s, err := Open(o)
		if err != nil {
			t.Fatal(err)
		}
		m := model{}
		for i := uint64(1); i <= 60; i++ {
			b := genBatch(seed, i)
			if _, err := s.Apply(b); err != nil {
				t.Fatal(err)
			}
			m.apply(b)
			if i%20 == 0 {
				if err := s.Flush(bg); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := s.Archive(bg, ArchiveOptions{Oldest: 3, KMeansIters: 1}); err != nil {
			t.Fatal(err)
		}
		// Delete half the live ids (all archived), durably.
		var del Batch
		ids := make([]string, 0, len(m))
		for id := range m {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for i, id := range ids {
			if i%2 == 0 {
				del.Delete(id)
			}
		}
		if _, err := s.Apply(&del); err != nil {
			t.Fatal(err)
		}
		m.apply(&del)
		if err := s.Flush(bg); err != nil {
			t.Fatal(err)
		}
		return s, m
	}
	run := func(s *Store) {
		if err := s.CompactArchives(bg); err != nil {
			t.Fatal(err)
		}
		if s.ArchiveCompactions() != 1 {
			t.Fatalf("%d archive compactions, want 1", s.ArchiveCompactions())
		}
	}
	var armed atomic.Bool
	var ops atomic.Int64
	count := errorfs.InjectorFunc{Name: "count", Fn: func(errorfs.Op) error {
		if armed.Load() {
			ops.Add(1)
		}
		return nil
	}}
	s, _ := setup(count, vfs.NewCrashableMem())
	before := s.Archives()[0].ID
	armed.Store(true)
	run(s)
	s.Close()
	total := ops.Load()
	rng := rand.New(rand.NewPCG(seed, 7))
	outcomes := map[bool]int{}
	for it := 0; it < iters; it++ {
		crashAt := int64(rng.IntN(int(total) + 1))
		mem := vfs.NewCrashableMem()
		var image *vfs.MemFS
		var n atomic.Int64
		var on atomic.Bool
		inj := errorfs.InjectorFunc{Name: "crash", Fn: func(errorfs.Op) error {
			if on.Load() && n.Add(1)-1 == crashAt && image == nil {
				image = mem.CrashCloneWith(vfs.CrashOptions{Rand: rng})
			}
			return nil
		}}
		s, m := setup(inj, mem)
		on.Store(true)
		run(s)
		s.Close()
		if image == nil {
			image = mem.CrashClone()
		}
		o := testOptions(image)
		r, err := Open(o)
		if err != nil {
			t.Fatalf("crash at op %d of %d: reopen: %v", crashAt, total, err)
		}
		sn := r.Snapshot()
		if d := checkAgainst(sn, m); d != "" {
			t.Fatalf("crash at op %d of %d: %s", crashAt, total, d)
		}
		sn.Close()
		arcs := r.Archives()
		if len(arcs) != 1 {
			t.Fatalf("crash at op %d: archives %+v", crashAt, arcs)
		}
		outcomes[arcs[0].ID != before]++
		// Later writes reach the archived rows, durably.
		var del Batch
		for id := range m {
			del.Delete(id)
			delete(m, id)
			break
		}
		if _, err := r.Apply(&del); err != nil {
			t.Fatal(err)
		}
		if err := r.Flush(bg); err != nil {
			t.Fatal(err)
		}
		if err := r.CompactArchives(bg); err != nil {
			t.Fatal(err)
		}
		r.Close()
		if r, err = Open(o); err != nil {
			t.Fatal(err)
		}
		sn = r.Snapshot()
		if d := checkAgainst(sn, m); d != "" {
			t.Fatalf("crash at op %d: after delete+flush+compact+reopen: %s", crashAt, d)
		}
		sn.Close()
		r.Close()
	}
	t.Logf("%d crash points over %d operations: %d before the manifest edit, %d after", iters, total, outcomes[false], outcomes[true])
	if outcomes[false] == 0 || outcomes[true] == 0 {
		t.Fatalf("outcomes %v: both sides of the manifest edit must be hit", outcomes)
	}
}
