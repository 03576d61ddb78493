package vfs

import (
	"io"
	"testing"
)

func TestWriteFileAtomicCrash(t *testing.T) {
	m := NewCrashableMem()
	put := func(s string) {
		t.Helper()
		if err := WriteFileAtomic(m, "/CURRENT", func(w io.Writer) error {
			_, err := w.Write([]byte(s))
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	put("one")
	if got := readAll(t, m.CrashClone(), "/CURRENT"); got != "one" {
		t.Fatalf("got %q", got)
	}
	put("two")
	c := m.CrashClone()
	if got := readAll(t, c, "/CURRENT"); got != "two" {
		t.Fatalf("got %q", got)
	}
	if exists(c, "/CURRENT.tmp") || exists(m, "/CURRENT.tmp") {
		t.Fatal("temp file left behind")
	}
}

func TestMkdirAllDurable(t *testing.T) {
	m := NewCrashableMem()
	if err := MkdirAllDurable(m, "/a/b/c"); err != nil {
		t.Fatal(err)
	}
	if !exists(m.CrashClone(), "/a/b/c") {
		t.Fatal("directory chain not durable")
	}
}
