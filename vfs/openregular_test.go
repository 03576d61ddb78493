//go:build unix

package vfs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(reg, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "b.txt")
	if err := os.WriteFile(other, []byte("other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := os.Stat(reg)
	if err != nil {
		t.Fatal(err)
	}
	f, fi, err := OpenRegular(reg, want)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil || string(b) != "hello\n" || !os.SameFile(fi, want) {
		t.Fatalf("read %q %v", b, err)
	}
	// A different file than the one expected.
	if _, _, err := OpenRegular(other, want); !errors.Is(err, ErrChanged) {
		t.Fatalf("other file: want ErrChanged, got %v", err)
	}
	// A symbolic link is refused, not followed.
	link := filepath.Join(dir, "link")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	if _, _, err := OpenRegular(link, nil); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("symlink: want ErrNotRegular, got %v", err)
	}
	// A directory.
	if _, _, err := OpenRegular(dir, nil); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("dir: want ErrNotRegular, got %v", err)
	}
	// Missing.
	if _, _, err := OpenRegular(filepath.Join(dir, "none"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: want ErrNotExist, got %v", err)
	}
	// A FIFO with no writer: refused promptly, not blocking.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := OpenRegular(fifo, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) {
			t.Fatalf("fifo: want ErrNotRegular, got %v", err)
		}
	case <-time.After(3 * time.Second):
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatal("OpenRegular blocked on a FIFO")
	}
}
