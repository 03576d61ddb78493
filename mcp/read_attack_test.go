package mcp

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAttackReadFIFOHangs: an indexed file replaced (inside its root) by
// a FIFO. readConfined resolves symlinks (none here), then os.Open's the
// path before checking that it is a regular file, and open(2) of a FIFO
// with no writer blocks for ever: the read tool call never returns (no
// deadline, no cancellation reaches a blocked open). The call must come
// back promptly with a tool error (open O_NONBLOCK|O_NOFOLLOW, then
// fstat and refuse a non-regular file).
func TestAttackReadFIFOHangs(t *testing.T) {
	root, db := fixture(t)
	cs := connect(t, newServer(t, db, root, nil), Caller{})
	p := filepath.Join(root, "docs", "guide.md")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// However the test ends, release a reader blocked in open(2).
	defer func() {
		if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	t0 := time.Now()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"uri": "docs/guide.md"}})
	if err != nil {
		t.Fatalf("read of an indexed path replaced by a FIFO did not return (after %v): %v", time.Since(t0).Round(time.Millisecond), err)
	}
	if !res.IsError {
		t.Fatalf("read of a FIFO succeeded: %+v", res)
	}
}
