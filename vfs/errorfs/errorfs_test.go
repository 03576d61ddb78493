package errorfs

import (
	"errors"
	"testing"

	"github.com/stratasearch/strata/vfs"
)

func TestOnIndexFailsOnlyNth(t *testing.T) {
	m := vfs.NewCrashableMem()
	inj := OnIndex(2, OpSync)
	y := Wrap(m, inj)
	f, err := y.Create("/a")
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	for i := 0; i < 5; i++ {
		if _, err := f.Write([]byte{byte('0' + i)}); err != nil {
			t.Fatal(err)
		}
		errs = append(errs, f.Sync())
	}
	for i, err := range errs {
		if (i == 2) != errors.Is(err, ErrInjected) {
			t.Fatalf("sync %d: err=%v", i, err)
		}
	}
	if !inj.Fired() || inj.Count() != 5 {
		t.Fatalf("fired=%v count=%d", inj.Fired(), inj.Count())
	}
	// The failed sync really did not sync: crash right after it keeps "01".
	m2 := vfs.NewCrashableMem()
	y2 := Wrap(m2, OnIndex(1, OpSync))
	f2, _ := y2.Create("/a")
	vfs.SyncDir(y2, "/")
	f2.Write([]byte("01"))
	if err := f2.Sync(); err != nil {
		t.Fatal(err)
	}
	f2.Write([]byte("23"))
	if err := f2.Sync(); !errors.Is(err, ErrInjected) {
		t.Fatalf("want injected, got %v", err)
	}
	c := m2.CrashClone()
	st, _ := c.Stat("/a")
	if st.Size() != 2 {
		t.Fatalf("size after failed sync + crash = %d, want 2", st.Size())
	}
}

func TestStickyAndKinds(t *testing.T) {
	m := vfs.NewCrashableMem()
	inj := OnIndex(1, OpWrite, OpRename)
	inj.Sticky = true
	y := Wrap(m, inj)
	f, _ := y.Create("/a")
	if _, err := f.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := y.Rename("/a", "/b"); !errors.Is(err, ErrInjected) {
		t.Fatalf("rename: %v", err)
	}
	if _, err := f.Write([]byte("y")); !errors.Is(err, ErrInjected) {
		t.Fatalf("sticky write: %v", err)
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("sync is not a selected kind: %v", err)
	}
	if inj.String() == "" {
		t.Fatal("empty String")
	}
}

func TestRandomlyDeterministic(t *testing.T) {
	run := func() []bool {
		inj := Randomly(0.3, 42, OpWrite)
		var out []bool
		for i := 0; i < 200; i++ {
			out = append(out, inj.MaybeError(Op{Kind: OpWrite}) != nil)
			if inj.MaybeError(Op{Kind: OpSync}) != nil {
				t.Fatal("non-selected kind failed")
			}
		}
		return out
	}
	a, b := run(), run()
	n := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("same seed, different decisions")
		}
		if a[i] {
			n++
		}
	}
	if n < 30 || n > 90 {
		t.Fatalf("p=0.3 over 200 ops fired %d times", n)
	}
}
