package mcp

import (
	"context"
	"errors"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/ingest"
)

// A catalog is the indexed tree as one epoch of the collection holds it:
// every file (a file:// source under one of the roots) with its chunks'
// spans, namespaces, ACLs and declared symbols. read, list and repo_map
// answer from it; it is rebuilt when the collection's epoch moves.
type catalog struct {
	epoch uint64
	files []*file          // sorted by (root, rel)
	byAbs map[string]*file // by the path in the source URI
	dirs  map[dirKey]*dir  // every directory holding an indexed file, roots included

	mu  sync.Mutex
	vis map[string]*visibility // by principalKey
}

type dirKey struct {
	root int
	rel  string // slash-separated, "" for the root itself
}

type dir struct {
	key     dirKey
	subdirs []string // child directory names, sorted
	files   []*file  // files directly inside, sorted by name
	first   int      // files[first:last] in catalog.files lie in this subtree
	last    int
}

type file struct {
	idx    int
	abs    string // path from the source URI (the indexed path)
	root   int
	rel    string // slash-separated, relative to the root
	trust  contract.Trust
	chunks []chunk // by start line
}

type chunk struct {
	id       string
	from, to int
	ns       string
	acl      []string
	symbol   string
	kind     string
	names    []string
}

// visibility is which files one principal may see.
type visibility struct {
	file []bool // by file.idx
	pre  []int  // pre[i] = visible files among files[:i]
}

func (v *visibility) count(first, last int) int { return v.pre[last] - v.pre[first] }

// buildCatalog reads the metadata of every live document of col at one
// epoch that ingestion wrote (engine.Snapshot.ScanMeta, DocMeta.Verifiable;
// content is never read). Documents without a file:// source under a root are not part of the tree, and neither are
// documents written without engine.VerifiableSources (an API caller's,
// whatever source_uri it names): such a document could otherwise name a
// file ingestion never indexed (a .env, a gitignored file) and have read
// serve it, or add names to list and repo_map.
func buildCatalog(ctx context.Context, col *engine.Collection, roots []string) (*catalog, error) {
	sn, err := col.Snapshot()
	if err != nil {
		return nil, err
	}
	defer sn.Close()
	c := &catalog{epoch: sn.Epoch(), byAbs: map[string]*file{}, dirs: map[dirKey]*dir{}, vis: map[string]*visibility{}}
	// One scan of the stored metadata (engine.Snapshot.ScanMeta: no
	// content, no lookup by id).
	err = sn.ScanMeta(ctx, func(d *engine.DocMeta) bool {
		if !d.Verifiable {
			return true // not written by ingestion: not part of the tree
		}
		p, from, to, err := engine.ParseFileURI(d.SourceURI)
		if err != nil || from == 0 {
			return true
		}
		f := c.byAbs[p]
		if f == nil {
			root, rel, ok := underRoot(roots, p)
			if !ok {
				return true
			}
			f = &file{abs: p, root: root, rel: rel, trust: d.Trust}
			c.byAbs[p] = f
		}
		if d.Trust != f.trust && d.Trust != contract.Authoritative {
			f.trust = d.Trust // the weakest trust of the file's chunks
		}
		ch := chunk{id: d.ID, from: from, to: to, ns: d.Namespace, acl: d.ACL}
		// A value that does not decode is left out, as a missing one.
		if v, ok, _ := d.Value(ingest.MetaSymbol); ok {
			ch.symbol, _ = v.Str()
		}
		if v, ok, _ := d.Value(ingest.MetaKind); ok {
			ch.kind, _ = v.Str()
		}
		if v, ok, _ := d.Value(ingest.MetaNames); ok {
			ch.names, _ = v.List()
		}
		f.chunks = append(f.chunks, ch)
		return true
	})
	if err != nil {
		return nil, err
	}
	for _, f := range c.byAbs {
		sort.Slice(f.chunks, func(i, j int) bool { return f.chunks[i].from < f.chunks[j].from })
		c.files = append(c.files, f)
	}
	sort.Slice(c.files, func(i, j int) bool {
		a, b := c.files[i], c.files[j]
		if a.root != b.root {
			return a.root < b.root
		}
		return a.rel < b.rel
	})
	for i, f := range c.files {
		f.idx = i
		rel := f.rel
		child := ""
		for {
			dk := dirKey{f.root, parentDir(rel)}
			d := c.dirs[dk]
			if d == nil {
				d = &dir{key: dk, first: i}
				c.dirs[dk] = d
			}
			d.last = i + 1
			if child == "" {
				d.files = append(d.files, f)
			} else if n := len(d.subdirs); n == 0 || d.subdirs[n-1] != child {
				d.subdirs = append(d.subdirs, child)
			}
			if dk.rel == "" {
				break
			}
			child = path.Base(dk.rel)
			rel = dk.rel
		}
	}
	for _, d := range c.dirs {
		sort.Strings(d.subdirs)
	}
	return c, nil
}

// parentDir is path.Dir with "" for a top-level name.
func parentDir(rel string) string {
	d := path.Dir(rel)
	if d == "." {
		return ""
	}
	return d
}

// underRoot returns the root p lies under (lexically, after cleaning) and
// p relative to it, slash-separated.
func underRoot(roots []string, p string) (int, string, bool) {
	p = filepath.Clean(p)
	for i, r := range roots {
		rel, err := filepath.Rel(r, p)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			continue
		}
		return i, filepath.ToSlash(rel), true
	}
	return 0, "", false
}

// principalKey identifies a principal and the configured namespace for the
// visibility cache.
func principalKey(p *contract.Principal, ns string) string {
	if p == nil {
		return "\x00trusted\x00" + ns
	}
	var b strings.Builder
	b.WriteString(p.Name)
	for _, part := range [][]string{p.Groups, p.Namespaces} {
		b.WriteByte(0)
		s := slices.Clone(part)
		slices.Sort(s)
		b.WriteString(strings.Join(s, "\x01"))
	}
	b.WriteByte(0)
	b.WriteString(ns)
	return b.String()
}

// visible returns which files the principal may see: a file is visible
// when the principal may read every one of its chunks (namespace and ACL,
// contract.Principal.CanRead) and each lies under the configured
// namespace prefix ns.
func (c *catalog) visible(p *contract.Principal, ns string) *visibility {
	key := principalKey(p, ns)
	c.mu.Lock()
	defer c.mu.Unlock()
	if v := c.vis[key]; v != nil {
		return v
	}
	v := &visibility{file: make([]bool, len(c.files)), pre: make([]int, len(c.files)+1)}
	for i, f := range c.files {
		ok := true
		for _, ch := range f.chunks {
			if (ns != "" && !strings.HasPrefix(ch.ns, ns)) || (p != nil && !p.CanRead(ch.ns, ch.acl)) {
				ok = false
				break
			}
		}
		v.file[i] = ok
		v.pre[i+1] = v.pre[i]
		if ok {
			v.pre[i+1]++
		}
	}
	c.vis[key] = v
	return v
}

// catalogCache keeps the catalog of the newest epoch. A build runs
// detached from the call that needed it (one at a time; a call waits for
// it only until its own deadline), so a slow build still completes and
// serves the calls after it.
type catalogCache struct {
	mu   sync.Mutex
	col  *engine.Collection
	cur  *catalog
	wait chan struct{} // closed when the running build ends; nil when none runs
	err  error         // the last build's error
}

// errCatalogBuilding is a call that ended while the catalog of the current
// epoch was still being built.
var errCatalogBuilding = errors.New("mcp: the indexed tree is still being read")

// get returns a catalog that holds every write acknowledged before the
// call (an epoch ≥ the collection's epoch at entry), building one when the
// epoch moved since the last build. Writes during the call do not make it
// wait for further builds.
func (cc *catalogCache) get(ctx context.Context, col *engine.Collection, roots []string) (*catalog, error) {
	want := col.Epoch()
	for {
		cc.mu.Lock()
		if cc.cur != nil && cc.col == col && cc.cur.epoch >= want {
			c := cc.cur
			cc.mu.Unlock()
			return c, nil
		}
		if cc.wait == nil {
			done := make(chan struct{})
			cc.wait = done
			go func() {
				c, err := buildCatalog(context.Background(), col, roots)
				cc.mu.Lock()
				if err == nil && (cc.cur == nil || cc.col != col || c.epoch >= cc.cur.epoch) {
					cc.col, cc.cur = col, c
				}
				cc.err, cc.wait = err, nil
				cc.mu.Unlock()
				close(done)
			}()
		}
		w := cc.wait
		cc.mu.Unlock()
		select {
		case <-w:
			cc.mu.Lock()
			err := cc.err
			cc.mu.Unlock()
			if err != nil {
				return nil, err
			}
		case <-ctx.Done():
			return nil, errCatalogBuilding
		}
	}
}
