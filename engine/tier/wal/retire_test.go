package wal

import (
	"errors"
	"testing"

	"github.com/stratasearch/strata/vfs"
)

// TestRetireThrough: RetireThrough(seq) removes the active segment only
// when every record written is ≤ seq (after starting an empty one for
// the next sequence number, reported through OnRotate), leaves it when a
// later record exists or it is empty, and the log reopens after seq with
// exactly the later records.
func TestRetireThrough(t *testing.T) {
	m := vfs.NewCrashableMem()
	o, _ := testOpts(m)
	var rotated []uint64
	o.OnRotate = func(first uint64) { rotated = append(rotated, first) }
	w, _, err := collect(t, o, 0)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, w, 20)
	files := func() []string {
		t.Helper()
		names, err := m.List("/db/wal")
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	if err := w.RetireThrough(10); err != nil {
		t.Fatal(err)
	}
	if f := files(); len(f) != 1 || f[0] != segName(1) || len(rotated) != 0 {
		t.Fatalf("records 11..20 unretired: files %v, rotations %v; want only %s", f, rotated, segName(1))
	}
	if err := w.RetireThrough(20); err != nil {
		t.Fatal(err)
	}
	if f := files(); len(f) != 1 || f[0] != segName(21) || len(rotated) != 1 || rotated[0] != 21 {
		t.Fatalf("after RetireThrough(20): files %v, rotations %v; want only %s", f, rotated, segName(21))
	}
	if n := len(fileBytes(t, m, "/db/wal/"+segName(21))); n != 0 {
		t.Fatalf("new segment holds %d bytes", n)
	}
	// Nothing written since: no second rotation.
	if err := w.RetireThrough(20); err != nil {
		t.Fatal(err)
	}
	if len(rotated) != 1 {
		t.Fatalf("an empty active segment was rotated: %v", rotated)
	}
	if seq := appendN(t, w, 5); seq != 25 {
		t.Fatalf("last seq %d, want 25", seq)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.RetireThrough(25); !errors.Is(err, ErrClosed) {
		t.Fatalf("RetireThrough after Close: %v", err)
	}
	w, seqs, err := collect(t, o, 20)
	if err != nil {
		t.Fatal(err)
	}
	checkSeqs(t, seqs, 21, 25)
	w.Close()
	if _, _, err := collect(t, o, 10); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("replay from a retired range: %v", err)
	}
}
