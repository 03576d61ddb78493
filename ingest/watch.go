package ingest

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// WatchEvent reports what Watch did, for logging and tests.
type WatchEvent struct {
	// Path is the file an fsnotify event named ("" for a re-index pass).
	Path string
	// Tombstoned is the number of chunks deleted at once for Path.
	Tombstoned int
	// Stats is set after a re-index pass (Path == "").
	Stats *Stats
	// Err is a failure; Watch keeps running.
	Err error
}

// Watch keeps root indexed until ctx ends: it watches every directory
// under root (fsnotify; new directories are added as they appear) and, on
// any change to a file the index holds (write, create, remove, rename),
// tombstones that file's chunks at once (Indexer.Tombstone: one Delete
// epoch), then re-indexes in the background after Debounce of quiet (an
// incremental Index pass over root: unchanged files cost one stat).
// Between the tombstone and the re-index the file is absent from results,
// never present with its old text. A search issued before the event is
// delivered can still match the old version: queries that must not see
// stale text set contract.Query.Verify, which re-hashes each hit's source
// span and drops a mismatch. onEvent (may be nil) is called from Watch's
// goroutine. The caller runs the initial Index pass first. Errors: the
// watcher cannot start; later failures go to onEvent.
func Watch(ctx context.Context, ix *Indexer, root string, debounce time.Duration, onEvent func(WatchEvent)) error {
	if onEvent == nil {
		onEvent = func(WatchEvent) {}
	}
	if debounce <= 0 {
		debounce = 100 * time.Millisecond
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("ingest: watch: %w", err)
	}
	defer w.Close()
	skip := map[string]bool{".git": true}
	for _, d := range ix.o.SkipDirs {
		skip[d] = true
	}
	addTree := func(dir string) {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if p != abs && skip[d.Name()] {
				return fs.SkipDir
			}
			if err := w.Add(p); err != nil {
				onEvent(WatchEvent{Path: p, Err: fmt.Errorf("ingest: watch %s: %w", p, err)})
			}
			return nil
		})
	}
	addTree(abs)

	var (
		mu      sync.Mutex
		running bool
		again   bool
		wg      sync.WaitGroup
	)
	var reindex func()
	reindex = func() {
		mu.Lock()
		if running {
			again = true
			mu.Unlock()
			return
		}
		running = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				st, err := ix.Index(ctx, abs, Progress{})
				if ctx.Err() != nil {
					return
				}
				onEvent(WatchEvent{Stats: &st, Err: err})
				mu.Lock()
				if !again {
					running = false
					mu.Unlock()
					return
				}
				again = false
				mu.Unlock()
			}
		}()
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer func() {
		timer.Stop()
		wg.Wait()
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			onEvent(WatchEvent{Err: fmt.Errorf("ingest: watch: %w", err)})
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			if ev.Op.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					addTree(ev.Name)
				}
			}
			n, err := ix.Tombstone(ctx, ev.Name)
			if n > 0 || err != nil {
				onEvent(WatchEvent{Path: ev.Name, Tombstoned: n, Err: err})
			}
			timer.Reset(debounce)
		case <-timer.C:
			reindex()
		}
	}
}
