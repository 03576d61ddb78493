package tier

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratasearch/strata/vfs"
)

// TestLinkStateRoundTrip: the files LinkState links and the state it
// returns, written as a fresh store by WriteStoreDir, open to the same
// live documents (a deleted one stays deleted), while the source store
// goes on changing; WriteStoreDir refuses a non-empty directory.
func TestLinkStateRoundTrip(t *testing.T) {
	o := testOptions(vfs.Default)
	o.Dir = t.TempDir()
	o.Dim = 8
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	docs := coldDocs(120, 5, o.Dim)
	applyDocs(t, s, docs[:60])
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	applyDocs(t, s, docs[60:])
	var del Batch
	del.Delete(docs[3].ID)
	if _, err := s.Apply(&del); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Archive(context.Background(), ArchiveOptions{Segments: []uint64{s.Manifest().State().Segments[0].ID}}); err != nil {
		t.Fatal(err)
	}
	links := t.TempDir()
	st, err := s.LinkState(links)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Segments) == 0 || len(st.Archives) != 1 {
		t.Fatalf("state: %d segments, %d archives", len(st.Segments), len(st.Archives))
	}
	// The source changes afterwards: a compaction may delete its files.
	applyDocs(t, s, coldDocs(10, 9, o.Dim))
	s.Flush(context.Background())
	s.Compact(context.Background())

	dst := filepath.Join(t.TempDir(), "copy")
	if err := WriteStoreDir(vfs.Default, dst, st); err != nil {
		t.Fatal(err)
	}
	if err := WriteStoreDir(vfs.Default, dst, st); err == nil {
		t.Fatal("WriteStoreDir over a store succeeded")
	}
	for _, name := range append(segFiles(st), archFiles(st)...) {
		if err := os.Link(filepath.Join(links, name), filepath.Join(dst, name)); err != nil {
			t.Fatal(err)
		}
	}
	o2 := o
	o2.Dir = dst
	c, err := Open(o2)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sn := c.Snapshot()
	defer sn.Close()
	if sn.Epoch() != st.DurableEpoch {
		t.Fatalf("copy at epoch %d, state durable at %d", sn.Epoch(), st.DurableEpoch)
	}
	for i, d := range docs {
		got, _, ok := sn.Get(d.ID)
		if i == 3 {
			if ok {
				t.Fatal("deleted document is live in the copy")
			}
			continue
		}
		if !ok || got.Content != d.Content {
			t.Fatalf("document %s missing or changed in the copy", d.ID)
		}
	}
}

func segFiles(st ManifestState) (out []string) {
	for _, s := range st.Segments {
		out = append(out, s.File)
	}
	return out
}

func archFiles(st ManifestState) (out []string) {
	for _, a := range st.Archives {
		out = append(out, a.File)
	}
	return out
}
