package ingest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine/contract"
)

// TestWatchNoStaleHits edits a watched file many times and searches right
// after each edit for the text it replaced: with Verify, stale hits must
// be 0. It also counts, for information, how often an unverified search
// still saw the old text (the tombstone had not landed yet), and checks
// that the new text is found once the background re-index ran.
func TestWatchNoStaleHits(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "w.go")
	src := func(i int) string {
		return fmt.Sprintf("package w\n\n// Word returns marker%dx.\nfunc Word() string { return \"marker%dx\" }\n", i, i)
	}
	write(t, root, "w.go", src(0))
	write(t, root, "other.go", "package w\n\nfunc Other() {}\n")
	col, mf := openTestCollection(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ix, err := NewIndexer(col, mf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Index(ctx, root, Progress{}); err != nil {
		t.Fatal(err)
	}
	var passes, tombs atomic.Int64
	done := make(chan error, 1)
	go func() {
		done <- Watch(ctx, ix, root, 10*time.Millisecond, func(e WatchEvent) {
			if e.Err != nil {
				t.Errorf("watch: %v", e.Err)
			}
			if e.Stats != nil {
				passes.Add(1)
			}
			tombs.Add(int64(e.Tombstoned))
		})
	}()
	// Wait until the watcher is registered: rewrite a sentinel file until
	// a re-index pass reports it (a fixed sleep raced under -race on a
	// loaded 2-core machine).
	sentinel := filepath.Join(root, "sentinel.txt")
	for deadline := time.Now().Add(10 * time.Second); passes.Load() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("watcher saw no event within 10s")
		}
		if err := os.WriteFile(sentinel, []byte(time.Now().String()), 0o644); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	found := func(word string, verify bool) int {
		res, err := col.Search(ctx, contract.Query{Text: word, TopK: 5, Verify: verify})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, h := range res.Hits {
			if strings.Contains(h.Content, word) {
				n++
			}
		}
		return n
	}
	edits := 30
	if testing.Short() {
		edits = 10
	}
	stale, unverifiedStale := 0, 0
	for i := 1; i <= edits; i++ {
		if err := os.WriteFile(path, []byte(src(i)), 0o644); err != nil {
			t.Fatal(err)
		}
		old := fmt.Sprintf("marker%dx", i-1)
		unverifiedStale += found(old, false)
		stale += found(old, true)
		// Wait for the re-index of this edit before the next one.
		deadline := time.Now().Add(5 * time.Second)
		for found(fmt.Sprintf("marker%dx", i), true) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("edit %d: new text not indexed within 5s", i)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if stale != 0 {
		t.Errorf("%d stale hits with Verify after %d edits, want 0", stale, edits)
	}
	t.Logf("%d edits: stale hits with Verify %d; without Verify %d (search before the fsnotify tombstone); %d re-index passes, %d chunks tombstoned",
		edits, stale, unverifiedStale, passes.Load(), tombs.Load())
	// Removing the file drops its chunks.
	os.Remove(path)
	deadline := time.Now().Add(5 * time.Second)
	for found("Word", false) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("removed file still found after 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
