package codegraph

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
)

// Updater is the fast path after an edit: it re-indexes a tree
// incrementally (ingest.Indexer) and, at the same time, rebuilds the
// edited files' graph fragments and applies them to the Store in one
// step, so search and expansion see the edit together. Go files get
// SyntaxFragment (package path from PkgOfDir); files of the tree-sitter
// languages get BuildLang over the edited files alone (their references
// into unedited files resolve only by the unique-name rule until the
// next full build); a file that no longer exists is removed from the
// graph. A compiler-level rebuild (BuildTree, BuildGo) can run
// meanwhile and be installed with Store.SetBase(g, epoch it started at).
// Safe for concurrent use (updates are serialised).
type Updater struct {
	ix    *ingest.Indexer
	store *graph.Store
	root  string
	// PkgOfDir maps a Go package directory to its import path
	// (GoResult.PkgOfDir); a directory it lacks gets root's base name
	// joined with the directory relative to root.
	PkgOfDir map[string]string
	chunk    ingest.Options

	mu sync.Mutex
}

// NewUpdater returns an Updater of the tree at root (absolute) indexed by
// ix into the collection whose graph st holds. chunk must be the
// indexer's chunking options.
func NewUpdater(ix *ingest.Indexer, st *graph.Store, root string, pkgOfDir map[string]string, chunk ingest.Options) *Updater {
	chunk.EnsureDefaults()
	return &Updater{ix: ix, store: st, root: root, PkgOfDir: pkgOfDir, chunk: chunk}
}

// UpdateStats reports one Update.
type UpdateStats struct {
	Index      ingest.Stats
	Fragments  int
	GraphEpoch uint64
	// IndexTime and GraphTime are the two halves, run concurrently;
	// Elapsed is the whole.
	IndexTime, GraphTime, Elapsed time.Duration
}

// Update brings the lexical index and the graph up to date with the
// edited files (absolute paths under the root). The graph is applied
// only when both halves succeed; an index error leaves the graph as it
// was. Errors: the index pass's, a file's read error other than its
// absence.
func (u *Updater) Update(ctx context.Context, edited []string) (UpdateStats, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	t0 := time.Now()
	var st UpdateStats
	var ierr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.Now()
		st.Index, ierr = u.ix.Index(ctx, u.root, ingest.Progress{})
		st.IndexTime = time.Since(t)
	}()
	t := time.Now()
	frags, gerr := u.fragments(edited)
	fragTime := time.Since(t)
	wg.Wait()
	if ierr != nil {
		return st, ierr
	}
	if gerr != nil {
		return st, gerr
	}
	t = time.Now()
	st.GraphEpoch = u.store.Apply(frags...)
	st.GraphTime = fragTime + time.Since(t)
	st.Fragments = len(frags)
	st.Elapsed = time.Since(t0)
	return st, nil
}

func (u *Updater) fragments(edited []string) ([]*graph.Fragment, error) {
	v := u.store.View()
	var frags []*graph.Fragment
	var other []string
	for _, p := range edited {
		src, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			frags = append(frags, &graph.Fragment{File: p})
			continue
		}
		if err != nil {
			return nil, err
		}
		if ingest.Lang(p) != "go" {
			other = append(other, p)
			continue
		}
		pkg, ok := u.PkgOfDir[filepath.Dir(p)]
		if !ok {
			rel, _ := filepath.Rel(u.root, filepath.Dir(p))
			pkg = path.Join(filepath.Base(u.root), filepath.ToSlash(rel))
		}
		fr, err := SyntaxFragment(p, src, pkg, v, u.chunk)
		if err != nil {
			// Go that does not parse: its old nodes go, nothing replaces them.
			fr = &graph.Fragment{File: p}
		}
		frags = append(frags, fr)
	}
	if len(other) > 0 {
		lr := BuildLang(other, u.chunk)
		frags = append(frags, lr.Fragments...)
	}
	return frags, nil
}
