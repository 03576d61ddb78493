package tier

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/vfs"
)

// TestFlushRetiresWAL: a Flush after which nothing was written leaves no
// WAL bytes (the active segment, all of whose records the flush made
// durable, is replaced by an empty one and deleted); a write after the
// flush keeps its records; and a crash clone taken after the flush, and
// after a later write, reopens with every document (the later one by
// replay).
func TestFlushRetiresWAL(t *testing.T) {
	fs := vfs.NewCrashableMem()
	o := Options{FS: fs, Dir: "/db", Dim: testDim, Sync: wal.SyncAlways, Logger: quietLog}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	walBytes := func(fs *vfs.MemFS) (n int64, files int) {
		t.Helper()
		names, err := fs.List("/db/wal")
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			fi, err := fs.Stat(filepath.Join("/db/wal", name))
			if err != nil {
				t.Fatal(err)
			}
			n += fi.Size()
		}
		return n, len(names)
	}
	put := func(from, to int) {
		b := &Batch{}
		for i := from; i < to; i++ {
			v := make([]float32, testDim)
			v[i%testDim] = 1
			b.Upsert(Document{ID: fmt.Sprintf("d%03d", i), Content: "c", Vector: v})
		}
		if _, err := s.Apply(b); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 5; i++ {
		put(i*20, i*20+20)
	}
	if n, _ := walBytes(fs); n == 0 {
		t.Fatal("no WAL bytes before the flush")
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, files := walBytes(fs); n != 0 || files != 1 {
		t.Fatalf("after a flush covering every record: %d WAL bytes in %d files, want 0 in 1", n, files)
	}
	check := func(fs *vfs.MemFS, want int) {
		t.Helper()
		o2 := o
		o2.FS = fs
		s2, err := Open(o2)
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		sn := s2.Snapshot()
		defer sn.Close()
		for i := 0; i < want; i++ {
			if _, _, ok := sn.Get(fmt.Sprintf("d%03d", i)); !ok {
				t.Fatalf("d%03d missing after reopen", i)
			}
		}
		if _, _, ok := sn.Get(fmt.Sprintf("d%03d", want)); ok {
			t.Fatalf("d%03d present after reopen", want)
		}
	}
	check(fs.CrashClone(), 100)
	put(100, 110)
	if n, _ := walBytes(fs); n == 0 {
		t.Fatal("no WAL bytes after a write following the flush")
	}
	check(fs.CrashClone(), 110)
	// A flush racing nothing retires again; the store reopens cleanly.
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := walBytes(fs); n != 0 {
		t.Fatalf("after the second flush: %d WAL bytes", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	check(fs, 110)
	check(fs.CrashClone(), 110)
}
