package verify

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestAttackReadSourceFIFOBlocks: ReadSource promises that a source that
// is not a regular file (a FIFO among them) counts as gone. It opens the
// path before checking its mode, and open(2) of a FIFO with no writer
// blocks for ever. LiveHash stats first, but a path swapped for a FIFO
// between that stat and the open (anyone who can write under a root)
// hangs the search — no context, a pinned snapshot — and the reread path
// (engine search.go, ReadPathSpan) has no pre-check at all. ReadSource
// must return an error promptly: open with O_NONBLOCK (and O_NOFOLLOW),
// then fstat and refuse a non-regular file.
func TestAttackReadSourceFIFOBlocks(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ReadSource(p)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("ReadSource of a FIFO returned no error")
		}
	case <-time.After(2 * time.Second):
		// Unblock the goroutine so the test binary can exit.
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("ReadSource of a FIFO blocked (open(2) waits for a writer): a search verifying it would hang")
	}
}
