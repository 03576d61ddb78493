package remote

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/cursor"
	"github.com/stratasearch/strata/engine/tier"
	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/vfs"
	"github.com/stratasearch/strata/vfs/objstore"
)

// ReaderOptions configures a Reader.
type ReaderOptions struct {
	// CacheDir holds the object cache (objects/) and the open views
	// (views/). Required. Emptied at open.
	CacheDir string
	// CacheBytes bounds the objects no live view uses (LRU eviction).
	// Default 1 GiB.
	CacheBytes int64
	// ID names the reader in its pin object readers/<ID>. Default random.
	ID string
	// Engine are the options each view's DB opens with (Replica is
	// forced on, FS must be vfs.Default or nil).
	Engine engine.Options
	// NewHandler, if set, builds the HTTP front of each view's DB (the
	// searchd server); Reader.ServeHTTP routes each request to the
	// handler of one view. The returned Closer runs when the view closes.
	NewHandler func(db *engine.DB, dir string) (http.Handler, io.Closer, error)
	// Logf receives poll errors. Default none.
	Logf func(format string, args ...any)
	// PinInterval is how often a reader fetching a new version rewrites
	// its pin (readers/<ID>) naming that version, so the writer's garbage
	// collection keeps its objects however long the fetch takes. It must
	// be well under the writer's Grace. Default 10s.
	PinInterval time.Duration
	// Eager fetches every object whole before serving its version, as
	// for manifests without lazy ranges. Default false: an object's Lazy
	// range (a segment's text section) stays remote until a query needs
	// a row's content, then that row's text block is fetched (a ranged
	// GET, checked against the block's CRC32C) into the cached file.
	Eager bool
}

// LazyFetchTimeout bounds one on-demand fetch of a text block.
var LazyFetchTimeout = 30 * time.Second

// Reader serves the newest published manifest of a bucket prefix,
// stateless but for its cache: each manifest version becomes a View (a
// read-only engine.DB over cached, verified objects), swapped in whole,
// so one query never sees two versions. Safe for concurrent use.
type Reader struct {
	st    *objstore.Store
	o     ReaderOptions
	cache *cache

	refreshMu sync.Mutex // one Refresh at a time
	lock      io.Closer  // flock of CacheDir/LOCK
	cursorKey []byte     // sharedCursorKey, under refreshMu

	mu       sync.Mutex
	cur      *View
	degraded error     // the last refresh's failure, nil after a success
	lastOK   time.Time // last successful refresh
	polls    int64
	// lastFetch and lastOpen time the newest view's object fetches and
	// its engine.Open.
	lastFetch, lastOpen time.Duration
}

// FetchParallel is how many objects a reader downloads at once.
var FetchParallel = 4

// View is one manifest version opened for queries.
type View struct {
	Version uint64
	DB      *engine.DB
	Handler http.Handler

	r       *Reader
	dir     string
	objects []string
	lazy    []Object // objects fetched without their Lazy range
	closer  io.Closer
	refs    int // acquisitions + 1 while current
}

// OpenReader opens a reader over st and loads the newest manifest. An
// unreachable store is not an error: the reader starts degraded, with no
// view (ServeHTTP answers 503) until a Refresh succeeds. A damaged newest
// manifest or object is (a *base.CorruptError naming the s3:// key and
// offset), returned together with the degraded reader.
func OpenReader(ctx context.Context, st *objstore.Store, o ReaderOptions) (*Reader, error) {
	if o.CacheDir == "" {
		return nil, errors.New("remote: reader needs a cache directory")
	}
	if o.CacheBytes <= 0 {
		o.CacheBytes = 1 << 30
	}
	if o.ID == "" {
		o.ID = newToken()[:12]
	}
	if o.PinInterval <= 0 {
		o.PinInterval = 10 * time.Second
	}
	if o.Engine.FS != nil && o.Engine.FS != vfs.Default {
		return nil, errors.New("remote: reader views need the OS file system")
	}
	o.Engine.Replica = true
	// One reader per cache directory.
	lk, err := vfs.Default.Lock(filepath.Join(o.CacheDir, "LOCK"))
	if err != nil {
		return nil, fmt.Errorf("remote: cache directory %s: %w", o.CacheDir, err)
	}
	c, err := openCache(st, filepath.Join(o.CacheDir, "objects"), o.CacheBytes)
	if err == nil {
		err = os.RemoveAll(filepath.Join(o.CacheDir, "views"))
	}
	if err != nil {
		lk.Close()
		return nil, err
	}
	r := &Reader{st: st, o: o, cache: c, lock: lk}
	_, err = r.Refresh(ctx)
	if errors.Is(err, objstore.ErrUnavailable) {
		err = nil
	}
	return r, err
}

// Refresh loads the newest manifest if it is newer than the current
// view's, and swaps it in (the old view closes when its last query
// ends). It returns the current version. On failure the current view
// stays and the reader reports degraded (Status) until a refresh
// succeeds.
func (r *Reader) Refresh(ctx context.Context) (uint64, error) {
	r.refreshMu.Lock()
	defer r.refreshMu.Unlock()
	v, err := r.refresh(ctx)
	r.mu.Lock()
	r.polls++
	r.degraded = err
	if err == nil {
		r.lastOK = time.Now()
	}
	r.mu.Unlock()
	return v, err
}

func (r *Reader) refresh(ctx context.Context) (uint64, error) {
	r.mu.Lock()
	var have uint64
	if r.cur != nil {
		have = r.cur.Version
	}
	r.mu.Unlock()
	newest, err := newestVersion(ctx, r.st, have)
	if err != nil {
		return have, err
	}
	if newest > have {
		m, err := readManifest(ctx, r.st, newest)
		if err != nil {
			return have, err
		}
		// Pin the version being fetched for as long as the fetch runs:
		// the view being served is local already, its objects need no pin.
		stop, err := r.pinWhile(ctx, newest)
		if err != nil {
			return have, err
		}
		nv, err := r.openView(ctx, m)
		stop()
		if err != nil {
			return have, err
		}
		r.mu.Lock()
		old := r.cur
		r.cur = nv
		r.mu.Unlock()
		if old != nil {
			old.Release()
		}
		have = newest
	}
	pin, _ := json.Marshal(readerPin{Version: have, Heartbeat: time.Now().UTC()})
	if _, err := r.st.Put(ctx, readersDir+r.o.ID, pin); err != nil {
		return have, err
	}
	return have, nil
}

// pinWhile writes the reader's pin for version v now and every
// PinInterval until the returned stop is called.
func (r *Reader) pinWhile(ctx context.Context, v uint64) (stop func(), err error) {
	put := func() error {
		pin, _ := json.Marshal(readerPin{Version: v, Heartbeat: time.Now().UTC()})
		_, err := r.st.Put(ctx, readersDir+r.o.ID, pin)
		return err
	}
	if err := put(); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(r.o.PinInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				_ = put() // a failure shows in the fetch itself
			}
		}
	}()
	return func() { close(done); wg.Wait() }, nil
}

// sharedCursorKey returns the prefix's shared cursor key (object cursor.key,
// created by the first reader that needs it with If-None-Match: *), so
// every reader of a prefix, and every version, signs and verifies the
// same cursors. Whoever can read the bucket can forge cursors; they can
// read every document there anyway.
func (r *Reader) sharedCursorKey(ctx context.Context) ([]byte, error) {
	if r.cursorKey != nil {
		return r.cursorKey, nil
	}
	for attempt := 0; attempt < 3; attempt++ {
		b, _, err := r.st.Get(ctx, cursorKeyObject)
		if err == nil {
			if len(b) != cursor.KeySize {
				return nil, base.Corruptf("cursor key", r.st.URL()+"/"+cursorKeyObject, 0, "%d bytes, want %d", len(b), cursor.KeySize)
			}
			r.cursorKey = b
			return b, nil
		}
		if !errors.Is(err, objstore.ErrNotFound) {
			return nil, err
		}
		k := make([]byte, cursor.KeySize)
		rand.Read(k)
		if _, err := r.st.PutIfAbsent(ctx, cursorKeyObject, k); err != nil && !errors.Is(err, objstore.ErrConflict) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("remote: %s/%s: cannot read the shared cursor key", r.st.URL(), cursorKeyObject)
}

func (r *Reader) openView(ctx context.Context, m *Manifest) (_ *View, err error) {
	key, err := r.sharedCursorKey(ctx)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(r.o.CacheDir, "views", fmt.Sprintf("%020d-%s", m.Version, newToken()[:8]))
	v := &View{Version: m.Version, r: r, dir: dir, refs: 1}
	defer func() {
		if err != nil {
			v.close()
		}
	}()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, engine.CursorKeyFile), key, 0o600); err != nil {
		return nil, err
	}
	t0 := time.Now()
	type job struct {
		col, store string
		o          Object
	}
	var jobs []job
	for _, c := range m.Collections {
		cdir := filepath.Join(dir, "collections", c.Name)
		store := filepath.Join(cdir, "store")
		if err := os.MkdirAll(cdir, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(cdir, "collection.json"), c.Config, 0o644); err != nil {
			return nil, err
		}
		if err := tier.WriteStoreDir(vfs.Default, store, c.State); err != nil {
			return nil, err
		}
		for _, o := range c.Objects {
			if r.o.Eager {
				o.Lazy, o.Postings = nil, nil
			}
			jobs = append(jobs, job{c.Name, store, o})
		}
	}
	// Fetch every object, FetchParallel at a time (largest first).
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].o.Size > jobs[j].o.Size })
	errs := make([]error, len(jobs))
	paths := make([]string, len(jobs))
	sem := make(chan struct{}, FetchParallel)
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			paths[i], errs[i] = r.cache.get(ctx, j.o)
		}()
	}
	wg.Wait()
	var firstErr error
	vf := &viewFetcher{r: r, objs: map[string]Object{}}
	for i, j := range jobs {
		if errs[i] != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("remote: version %d, collection %q: %w", m.Version, j.col, errs[i])
			}
			continue
		}
		v.objects = append(v.objects, j.o.Key)
		p := filepath.Join(j.store, j.o.File)
		vf.objs[p] = j.o
		if j.o.lazy() {
			v.lazy = append(v.lazy, j.o)
		}
		if err := os.Link(paths[i], p); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	t1 := time.Now()
	defer func() {
		if err == nil {
			r.mu.Lock()
			r.lastFetch, r.lastOpen = t1.Sub(t0), time.Since(t1)
			r.mu.Unlock()
		}
	}()
	eo := r.o.Engine
	if len(v.lazy) > 0 {
		eo.SegmentFetch = vf
	}
	db, err := engine.Open(dir, eo)
	if err != nil {
		return nil, fmt.Errorf("remote: version %d: %w", m.Version, err)
	}
	v.DB = db
	if bad := db.Unavailable(); len(bad) > 0 {
		var msgs []string
		for name, e := range bad {
			msgs = append(msgs, fmt.Sprintf("collection %q (objects under %s/%s%s/): %v", name, r.st.URL(), dataDir, name, e))
		}
		return nil, fmt.Errorf("remote: version %d: %w: %s", m.Version, engine.ErrUnavailable, strings.Join(msgs, "; "))
	}
	if r.o.NewHandler != nil {
		h, cl, err := r.o.NewHandler(db, dir)
		if err != nil {
			return nil, err
		}
		v.Handler, v.closer = h, cl
	}
	return v, nil
}

// viewFetcher is a view's tier.RangeFetcher: it maps a segment file of
// the view's store directories to its object and fetches the range into
// the cache. A failure other than a context's marks the reader degraded
// until the next successful refresh.
type viewFetcher struct {
	r    *Reader
	objs map[string]Object // every object, by file path in the view
}

func (f *viewFetcher) Fetch(path string, off, n int64, crc uint32) error {
	o, ok := f.objs[filepath.Clean(path)]
	if !ok {
		return fmt.Errorf("remote: %s is no object of the view", path)
	}
	if o.Lazy == nil {
		return nil // fetched whole (the tier checks the block's CRC32C)
	}
	ctx, cancel := context.WithTimeout(context.Background(), LazyFetchTimeout)
	defer cancel()
	err := f.r.cache.fetchRange(ctx, o, off, n, crc)
	if err != nil {
		err = fmt.Errorf("remote: fetching %s/%s [%d,+%d): %w", f.r.st.URL(), o.Key, off, n, err)
		f.r.mu.Lock()
		f.r.degraded = err
		f.r.mu.Unlock()
	}
	return err
}

// SpanPresent reports whether [off, off+n) of a segment file of the view
// is present in the cache (tier.SpanPresence).
func (f *viewFetcher) SpanPresent(path string, off, n int64) bool {
	o, ok := f.objs[filepath.Clean(path)]
	if !ok {
		return false
	}
	return o.Postings == nil || f.r.cache.present(o, off, n)
}

// FetchSpan makes [off, off+n) of a segment file of the view present:
// the whole blocks it spans, each checked against the manifest's
// CRC32C (tier.SpanFetcher, for BM25 posting lists).
func (f *viewFetcher) FetchSpan(path string, off, n int64) error {
	o, ok := f.objs[filepath.Clean(path)]
	if !ok {
		return fmt.Errorf("remote: %s is no object of the view", path)
	}
	if o.Postings == nil {
		return nil // fetched at open
	}
	ctx, cancel := context.WithTimeout(context.Background(), LazyFetchTimeout)
	defer cancel()
	err := f.r.cache.fetchSpan(ctx, o, off, n)
	if err != nil {
		err = fmt.Errorf("remote: fetching %s/%s [%d,+%d): %w", f.r.st.URL(), o.Key, off, n, err)
		f.r.mu.Lock()
		f.r.degraded = err
		f.r.mu.Unlock()
	}
	return err
}

// Prefetch fetches the rest of every object of the current view that
// was fetched without its Lazy range and decodes the text blocks, so its
// queries no longer touch the store. Errors: the first fetch's (a
// *base.CorruptError for damage).
func (r *Reader) Prefetch(ctx context.Context) error {
	v := r.Acquire()
	if v == nil {
		return nil
	}
	defer v.Release()
	for _, o := range v.lazy {
		if err := r.cache.fetchLazy(ctx, o); err != nil {
			return fmt.Errorf("remote: version %d: %w", v.Version, err)
		}
	}
	if len(v.lazy) == 0 {
		return nil
	}
	for _, name := range v.DB.Collections() {
		c, err := v.DB.Collection(name)
		if err != nil {
			return err
		}
		if err := c.LoadTexts(); err != nil {
			return fmt.Errorf("remote: version %d: %w", v.Version, err)
		}
	}
	return nil
}

// Acquire pins the current view for one query; call View.Release when
// done. nil when no manifest was loaded yet.
func (r *Reader) Acquire() *View {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil {
		r.cur.refs++
	}
	return r.cur
}

// Release ends one Acquire (or, for the reader, the view's currency);
// the last release of a replaced view closes its DB and drops its files.
func (v *View) Release() {
	r := v.r
	r.mu.Lock()
	v.refs--
	done := v.refs == 0
	r.mu.Unlock()
	if done {
		v.close()
	}
}

func (v *View) close() {
	if v.closer != nil {
		v.closer.Close()
	}
	if v.DB != nil {
		v.DB.Close()
	}
	for _, k := range v.objects {
		v.r.cache.unpin(k)
	}
	os.RemoveAll(v.dir)
}

// Status is the reader's health.
type Status struct {
	Version  uint64     `json:"version"`
	Degraded bool       `json:"degraded"`
	Error    string     `json:"error,omitempty"`
	LastOK   time.Time  `json:"last_ok"`
	Polls    int64      `json:"polls"`
	Cache    CacheStats `json:"cache"`
	// Fetch and Open time the current view's object downloads (cache
	// misses) and its DB open, in nanoseconds.
	Fetch time.Duration `json:"fetch_ns"`
	Open  time.Duration `json:"open_ns"`
}

// Status reports the served version and whether the last refresh
// failed (degraded: the store is unreachable or served a damaged
// object; queries go on over the current view, possibly stale).
func (r *Reader) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Status{LastOK: r.lastOK, Polls: r.polls, Cache: r.cache.stats(), Fetch: r.lastFetch, Open: r.lastOpen}
	if r.cur != nil {
		s.Version = r.cur.Version
	}
	if r.degraded != nil || r.cur == nil {
		s.Degraded = true
		if r.degraded != nil {
			s.Error = r.degraded.Error()
		} else {
			s.Error = "no manifest loaded"
		}
	}
	return s
}

// Run refreshes every interval until ctx is done.
func (r *Reader) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := r.Refresh(ctx); err != nil && r.o.Logf != nil && ctx.Err() == nil {
			r.o.Logf("remote: reader refresh: %v", err)
		}
	}
}

// Close closes the current view (after its running queries) and stops
// serving. Run must have returned.
func (r *Reader) Close() error {
	r.mu.Lock()
	v := r.cur
	r.cur = nil
	r.mu.Unlock()
	if v != nil {
		v.Release()
	}
	if r.lock != nil {
		r.lock.Close()
		r.lock = nil
	}
	return nil
}

// ServeHTTP is the read-only front: GET /healthz answers the Status (200,
// or 503 when degraded); other writes than a POST .../search are refused
// (405); every other request is served whole by the handler of one view
// (header X-Strata-Manifest-Version names it), or 503 without one.
func (r *Reader) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path == "/healthz" && req.Method == http.MethodGet {
		s := r.Status()
		w.Header().Set("Content-Type", "application/json")
		if s.Degraded {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(s)
		return
	}
	if !(req.Method == http.MethodGet || req.Method == http.MethodHead ||
		(req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/search"))) {
		httpError(w, http.StatusMethodNotAllowed, "read_only", "this server is a read-only replica of "+r.st.URL())
		return
	}
	v := r.Acquire()
	if v == nil || v.Handler == nil {
		if v != nil {
			v.Release()
		}
		httpError(w, http.StatusServiceUnavailable, "unavailable", "no manifest loaded from "+r.st.URL()+": "+r.Status().Error)
		return
	}
	defer v.Release()
	w.Header().Set("X-Strata-Manifest-Version", strconv.FormatUint(v.Version, 10))
	v.Handler.ServeHTTP(w, req)
}

func httpError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}
