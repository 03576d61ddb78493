package codegraph

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/ingest/lang"
)

// Updater is the fast path after an edit: it re-indexes a tree
// incrementally (ingest.Indexer) and, at the same time, rebuilds the
// edited files' graph fragments (each edited Go file parsed once for
// both), then applies to the Store, in one step,
// a fragment for every file the index pass rewrote or dropped, so search
// and expansion see the edit together. Go files get SyntaxFragment
// (package path from PkgOfDir); files of the tree-sitter languages get
// BuildLang over the changed files alone (their references into
// unchanged files resolve only by the unique-name rule until the next
// full build); a file that no longer exists is removed from the graph.
// A compiler-level rebuild (BuildTree, BuildGo) can run meanwhile and be
// installed with Store.SetBase(g, epoch it started at). Safe for
// concurrent use (updates are serialised).
type Updater struct {
	ix    *ingest.Indexer
	store *graph.Store
	root  string
	// PkgOfDir maps a Go package directory to its import path
	// (GoResult.PkgOfDir). A directory it lacks takes its nearest
	// ancestor's path joined with the rest of the directory, or, with no
	// such ancestor, root's base name joined with the directory relative
	// to root.
	PkgOfDir map[string]string
	chunk    ingest.Options

	mu   sync.Mutex
	sigs sigCache // the edited files' declaration heads, printed last time
}

// NewUpdater returns an Updater of the tree at root (absolute) indexed by
// ix into the collection whose graph st holds. chunk must be the
// indexer's chunking options. pkgOfDir nil: the Go package paths are read
// from st's current view (PkgOfDirOf), so a graph loaded from its file
// keeps its module's import paths.
func NewUpdater(ix *ingest.Indexer, st *graph.Store, root string, pkgOfDir map[string]string, chunk ingest.Options) *Updater {
	chunk.EnsureDefaults()
	if pkgOfDir == nil {
		pkgOfDir = PkgOfDirOf(st.View())
	}
	return &Updater{ix: ix, store: st, root: root, PkgOfDir: pkgOfDir, chunk: chunk}
}

// PkgOfDirOf maps each Go package directory of v to its import path,
// read from the package nodes (Key "pkg:"+Name, File the directory).
// Cost O(N) of the view.
func PkgOfDirOf(v *graph.View) map[string]string {
	m := map[string]string{}
	for id := graph.NodeID(0); int(id) < v.N(); id++ {
		n := v.Node(id)
		if n != nil && n.Kind == graph.Package && n.File != "" && n.Key == pkgKey(n.Name) {
			m[n.File] = n.Name
		}
	}
	return m
}

// UpdateStats reports one Update.
type UpdateStats struct {
	Index ingest.Stats
	// Fragments is the number of files whose graph the update replaced
	// (removals included); Rebuilt counts those whose fragment was built
	// after the index pass, because they were not among the edited paths.
	Fragments, Rebuilt int
	GraphEpoch         uint64
	// IndexTime and GraphTime are the two halves, run concurrently
	// after the edited Go files are read and parsed once for both (that
	// parse is counted in each); ApplyTime is the part of GraphTime in Store.Apply (the new view's
	// build and publication); Elapsed is the whole.
	IndexTime, GraphTime, ApplyTime, Elapsed time.Duration
}

// Update brings the lexical index and the graph up to date. edited lists
// absolute paths under the root known to have changed (nil: none known):
// the Go files among them are read and parsed once, then the index pass
// (which chunks them from that parse, ingest.Indexer.IndexParsed) runs
// while their fragments are built from it. The graph then
// takes, in one Store.Apply, the fragment of every file the pass rewrote
// (ingest.Progress.Changed; built now if it was not edited), a removal
// for every file the pass dropped, and a removal for every edited path
// that no longer exists (a file Indexer.Tombstone already forgot). An
// edited file the pass left alone (unchanged content, or one the walk
// does not keep) keeps its graph. p observes the index pass (its Changed
// is called too). The graph is applied only when both halves succeed;
// an index error leaves the graph as it was. Errors: the index pass's, a
// file's read error other than its absence.
func (u *Updater) Update(ctx context.Context, edited []string, p ingest.Progress) (UpdateStats, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	t0 := time.Now()
	var st UpdateStats
	var ierr error
	changed := map[string]bool{} // path → removed
	// The edited Go files are parsed once, here, for both halves: the
	// index pass chunks them from this parse and the fragments are built
	// from it.
	t := time.Now()
	v := u.store.View()
	ed, gerr := u.load(edited)
	parseTime := time.Since(t)
	parsed := map[string]*ingest.ParsedGo{}
	for _, sf := range ed.gofiles {
		if sf.f != nil {
			parsed[sf.path] = &ingest.ParsedGo{Src: sf.src, Fset: sf.fset, File: sf.f}
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.Now()
		pp := p
		pp.Changed = func(path string, removed bool) {
			changed[path] = removed
			if p.Changed != nil {
				p.Changed(path, removed)
			}
		}
		st.Index, ierr = u.ix.IndexParsed(ctx, u.root, pp, parsed)
		st.IndexTime = parseTime + time.Since(t)
	}()
	t = time.Now()
	var pre map[string]*graph.Fragment
	if gerr == nil {
		pre = u.build(ed, v)
	}
	gone := ed.gone
	fragTime := parseTime + time.Since(t)
	wg.Wait()
	if ierr != nil {
		return st, ierr
	}
	if gerr != nil {
		return st, gerr
	}
	t = time.Now()
	var frags []*graph.Fragment
	var rest []string
	for p, removed := range changed {
		if !graphed(p) {
			continue
		}
		switch fr := pre[p]; {
		case removed:
			frags = append(frags, &graph.Fragment{File: p})
		case fr != nil:
			frags = append(frags, fr)
		default:
			rest = append(rest, p)
		}
	}
	for _, p := range gone {
		if _, ok := changed[p]; !ok && graphed(p) {
			frags = append(frags, &graph.Fragment{File: p})
		}
	}
	if len(rest) > 0 {
		more, _, err := u.fragments(rest)
		if err != nil {
			return st, err
		}
		for _, p := range rest {
			if fr := more[p]; fr != nil {
				frags = append(frags, fr)
			} else {
				frags = append(frags, &graph.Fragment{File: p})
			}
		}
		st.Rebuilt = len(rest)
	}
	if len(frags) > 0 {
		ta := time.Now()
		st.GraphEpoch = u.store.Apply(frags...)
		st.ApplyTime = time.Since(ta)
	} else {
		st.GraphEpoch = u.store.View().Epoch()
	}
	st.GraphTime = fragTime + time.Since(t)
	st.Fragments = len(frags)
	st.Elapsed = time.Since(t0)
	return st, nil
}

// fragments builds the fragments of the regular files among paths in the
// graph's languages (by path; the Go files as one syntaxBatch, so names
// they newly declare for each other resolve; a Go file that does not
// parse gets an empty fragment: its old nodes go, nothing replaces them)
// and lists the paths that do not exist. Directories are skipped.
func (u *Updater) fragments(paths []string) (map[string]*graph.Fragment, []string, error) {
	v := u.store.View()
	ed, err := u.load(paths)
	if err != nil {
		return nil, nil, err
	}
	return u.build(ed, v), ed.gone, nil
}

// loaded is what load read of a list of paths.
type loaded struct {
	gofiles []syntaxFile // read and parsed
	other   []string     // files of the tree-sitter languages
	gone    []string     // paths that do not exist
}

// load reads and parses (one goroutine per core) the regular Go files
// among paths and lists their other files in the graph's languages and
// the paths that do not exist. Directories are skipped.
func (u *Updater) load(paths []string) (loaded, error) {
	var gone, other []string
	var gofiles []syntaxFile
	for _, p := range paths {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			gone = append(gone, p)
			continue
		}
		if err != nil {
			return loaded{}, err
		}
		if !fi.Mode().IsRegular() || !graphed(p) {
			continue
		}
		if ingest.Lang(p) != "go" {
			other = append(other, p)
			continue
		}
		src, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			gone = append(gone, p)
			continue
		}
		if err != nil {
			return loaded{}, err
		}
		gofiles = append(gofiles, syntaxFile{path: p, pkg: u.pkgOf(filepath.Dir(p)), src: src})
	}
	parseAll(gofiles)
	return loaded{gofiles: gofiles, other: other, gone: gone}, nil
}

// build builds the fragments of what load read (the Go files as one
// syntaxBatch over their parses), with v the current view.
func (u *Updater) build(ed loaded, v *graph.View) map[string]*graph.Fragment {
	frags := map[string]*graph.Fragment{}
	for _, fr := range syntaxBatch(ed.gofiles, v, u.chunk, &u.sigs) {
		frags[fr.File] = fr
	}
	u.sigs.rotate()
	if len(ed.other) > 0 {
		for _, fr := range BuildLang(ed.other, u.chunk).Fragments {
			frags[fr.File] = fr
		}
	}
	return frags
}

// graphed reports whether files at p are in the graph's languages.
func graphed(p string) bool {
	tag := ingest.Lang(p)
	return tag == "go" || lang.Supported(tag)
}

// pkgOf is the Go import path of the package in dir.
func (u *Updater) pkgOf(dir string) string {
	if pkg, ok := u.PkgOfDir[dir]; ok {
		return pkg
	}
	for d := dir; ; {
		up := filepath.Dir(d)
		if up == d || !strings.HasPrefix(up, u.root) {
			break
		}
		if pkg, ok := u.PkgOfDir[up]; ok {
			rel, _ := filepath.Rel(up, dir)
			return path.Join(pkg, filepath.ToSlash(rel))
		}
		d = up
	}
	rel, _ := filepath.Rel(u.root, dir)
	return path.Join(filepath.Base(u.root), filepath.ToSlash(rel))
}
