package ingest

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
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
	return WatchWith(ctx, ix, root, WatchOptions{Debounce: debounce}, onEvent)
}

// WatchOptions configure WatchWith.
type WatchOptions struct {
	// Debounce is the quiet time after the last event before a re-index
	// pass. Default 100 ms.
	Debounce time.Duration
	// Reindex, if set, runs each re-index pass in place of ix.Index(ctx,
	// root, Progress{}). changed lists, sorted and without duplicates, the
	// absolute paths events named since the previous pass began (files
	// and directories, some of which may no longer exist). It must run an
	// incremental pass of ix over root (codegraph.Updater.Update does,
	// beside its graph update). Default nil.
	Reindex func(ctx context.Context, changed []string) (Stats, error)
}

// WatchWith is Watch with options: a pass may be replaced by
// o.Reindex, which learns the paths that changed.
func WatchWith(ctx context.Context, ix *Indexer, root string, o WatchOptions, onEvent func(WatchEvent)) error {
	if onEvent == nil {
		onEvent = func(WatchEvent) {}
	}
	debounce := o.Debounce
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
		changed = map[string]bool{} // paths named since the last pass began; under mu
	)
	pass := func() (Stats, error) {
		if o.Reindex == nil {
			return ix.Index(ctx, abs, Progress{})
		}
		mu.Lock()
		paths := make([]string, 0, len(changed))
		for p := range changed {
			paths = append(paths, p)
		}
		clear(changed)
		mu.Unlock()
		sort.Strings(paths)
		st, err := o.Reindex(ctx, paths)
		if err != nil { // the next pass gets them again
			mu.Lock()
			for _, p := range paths {
				changed[p] = true
			}
			mu.Unlock()
		}
		return st, err
	}
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
				st, err := pass()
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
			if o.Reindex != nil {
				mu.Lock()
				changed[ev.Name] = true
				mu.Unlock()
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
