package remote

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/internal/testenv/s3gw"
	"github.com/stratasearch/strata/vfs/objstore"
)

const testDim = 8

var prefixSeq atomic.Int64

// newStore returns a store on g under a fresh prefix of bucket "strata".
func newStore(t testing.TB, g *s3gw.Gateway) *objstore.Store {
	t.Helper()
	st, err := objstore.New(objstore.Config{Endpoint: g.Endpoint, AccessKey: s3gw.AccessKey, SecretKey: s3gw.SecretKey,
		Bucket: "strata", Prefix: fmt.Sprintf("t%d/db", prefixSeq.Add(1)), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.EnsureBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

var words = strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega")

// doc i of a seeded corpus: a few words and a vector.
func doc(i int, gen int) contract.Document {
	r := rand.New(rand.NewPCG(uint64(i), uint64(gen)))
	var b strings.Builder
	for j := 0; j < 6; j++ {
		b.WriteString(words[r.IntN(len(words))])
		b.WriteByte(' ')
	}
	v := make([]float32, testDim)
	for j := range v {
		v[j] = float32(r.NormFloat64())
	}
	return contract.Document{ID: fmt.Sprintf("d%04d", i), Content: b.String(), Vector: v, Trust: contract.Authoritative}
}

func openDB(t testing.TB, dir string) *engine.DB {
	t.Helper()
	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func createCol(t testing.TB, db *engine.DB, name string) *engine.Collection {
	t.Helper()
	c, err := db.CreateCollection(name, engine.CollectionOptions{Dim: testDim, Metric: "l2", Analyzer: engine.AnalyzerProse})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// upsert writes docs [lo, hi) of generation gen and flushes.
func upsert(t testing.TB, c *engine.Collection, lo, hi, gen int) {
	t.Helper()
	var docs []contract.Document
	for i := lo; i < hi; i++ {
		docs = append(docs, doc(i, gen))
	}
	if _, err := c.Upsert(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// queries: lexical, dense and hybrid.
func queries() []contract.Query {
	var qs []contract.Query
	for i := 0; i < 6; i++ {
		d := doc(10000+i, 7)
		w := strings.Fields(d.Content)
		qs = append(qs,
			contract.Query{Text: w[0] + " " + w[1], Mode: contract.Lexical, TopK: 10},
			contract.Query{Vector: d.Vector, Mode: contract.Dense, TopK: 10},
			contract.Query{Text: w[2], Vector: d.Vector, Mode: contract.Hybrid, TopK: 10})
	}
	return qs
}

type hit struct {
	ID    string
	Score float64
}

func results(t testing.TB, c *engine.Collection) [][]hit {
	t.Helper()
	var out [][]hit
	for _, q := range queries() {
		res, err := c.Search(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		var hs []hit
		for _, h := range res.Hits {
			hs = append(hs, hit{h.DocID, h.Score})
		}
		out = append(out, hs)
	}
	return out
}

func viewResults(t testing.TB, r *Reader, name string) ([][]hit, uint64) {
	t.Helper()
	v := r.Acquire()
	if v == nil {
		t.Fatal("reader has no view")
	}
	defer v.Release()
	c, err := v.DB.Collection(name)
	if err != nil {
		t.Fatal(err)
	}
	return results(t, c), v.Version
}

func openReader(t testing.TB, st *objstore.Store) *Reader {
	t.Helper()
	r, err := OpenReader(context.Background(), st, ReaderOptions{CacheDir: t.TempDir(), CacheBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestPublishRead: a writer publishes flushed state; a reader over the
// bucket returns exactly the local DB's hits for lexical, dense and
// hybrid queries, and follows new versions (upserts, deletes).
func TestPublishRead(t *testing.T) {
	g := s3gw.Start(t)
	st := newStore(t, g)
	ctx := context.Background()
	db := openDB(t, t.TempDir())
	defer db.Close()
	c := createCol(t, db, "docs")
	upsert(t, c, 0, 150, 0)
	upsert(t, c, 150, 300, 0)
	w, err := OpenWriter(ctx, st, db, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v1, err := w.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v1 != 2 { // 1 is the fence of the empty bucket
		t.Fatalf("first publish = version %d, want 2", v1)
	}
	if v, err := w.Publish(ctx); err != nil || v != v1 {
		t.Fatalf("publish without change = %d, %v; want %d", v, err, v1)
	}
	r := openReader(t, st)
	got, ver := viewResults(t, r, "docs")
	if ver != v1 || !reflect.DeepEqual(got, results(t, c)) {
		t.Fatalf("reader at version %d differs from the local DB", ver)
	}
	// Every reader of the prefix signs cursors with one key.
	r2 := openReader(t, st)
	va, vb := r.Acquire(), r2.Acquire()
	ka, erra := va.DB.CursorKey()
	kb, errb := vb.DB.CursorKey()
	va.Release()
	vb.Release()
	if erra != nil || errb != nil || !reflect.DeepEqual(ka, kb) || len(ka) != 32 {
		t.Fatalf("readers' cursor keys differ: %v %v", erra, errb)
	}
	// Upserts over flushed rows, deletes, a new collection.
	upsert(t, c, 100, 200, 1)
	if _, err := c.Delete(ctx, []string{"d0001", "d0002", "d0250"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	c2 := createCol(t, db, "more")
	upsert(t, c2, 0, 40, 3)
	// Unflushed writes are not published.
	if _, err := c.Upsert(ctx, []contract.Document{doc(9999, 0)}); err != nil {
		t.Fatal(err)
	}
	v2, err := w.Publish(ctx)
	if err != nil || v2 != v1+1 {
		t.Fatalf("second publish = %d, %v", v2, err)
	}
	if v, err := r.Refresh(ctx); err != nil || v != v2 {
		t.Fatalf("refresh = %d, %v; want %d", v, err, v2)
	}
	got, _ = viewResults(t, r, "docs")
	if err := c.Flush(ctx); err != nil { // now include the unflushed doc locally...
		t.Fatal(err)
	}
	want := results(t, c)
	if reflect.DeepEqual(got, want) {
		// ...the reader must not have had it: it only differs if d9999 ranks.
		for _, hs := range got {
			for _, h := range hs {
				if h.ID == "d9999" {
					t.Fatal("reader served an unflushed, unpublished write")
				}
			}
		}
	}
	v3, err := w.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := r.Refresh(ctx); err != nil || v != v3 {
		t.Fatalf("refresh = %d, %v; want %d", v, err, v3)
	}
	got, _ = viewResults(t, r, "docs")
	if !reflect.DeepEqual(got, want) {
		t.Fatal("reader differs from the local DB after deletes and upserts")
	}
	got2, _ := viewResults(t, r, "more")
	if !reflect.DeepEqual(got2, results(t, c2)) {
		t.Fatal("second collection differs")
	}
	if s := r.Status(); s.Degraded || s.Version != v3 {
		t.Fatalf("status %+v", s)
	}
	// Writes through the reader's front are refused.
	if _, err := os.Stat(filepath.Join(db.Dir(), "remote-staging")); !os.IsNotExist(err) {
		t.Fatalf("staging left behind: %v", err)
	}
}

// TestLeaseExclusive: a second writer cannot take a held lease; once it
// expires (the second writer's clock runs past it) the takeover fences
// the first writer off: it gets ErrLeaseLost and publishes nothing.
func TestLeaseExclusive(t *testing.T) {
	g := s3gw.Start(t)
	st := newStore(t, g)
	ctx := context.Background()
	dbA, dbB := openDB(t, t.TempDir()), openDB(t, t.TempDir())
	defer dbA.Close()
	defer dbB.Close()
	upsert(t, createCol(t, dbA, "docs"), 0, 50, 0)
	upsert(t, createCol(t, dbB, "docs"), 0, 60, 1)
	a, err := OpenWriter(ctx, st, dbA, WriterOptions{Owner: "A", LeaseTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenWriter(ctx, st, dbB, WriterOptions{Owner: "B", LeaseTTL: time.Hour}); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("second writer: %v, want ErrLeaseHeld", err)
	}
	// B after A's lease expired (B's clock is two hours ahead).
	b := &Writer{}
	{
		saved := timeNow
		timeNow = func() time.Time { return time.Now().Add(2 * time.Hour) }
		b, err = OpenWriter(ctx, st, dbB, WriterOptions{Owner: "B", LeaseTTL: time.Hour})
		timeNow = saved
	}
	if err != nil {
		t.Fatal(err)
	}
	upsert(t, mustCol(t, dbA, "docs"), 50, 60, 0)
	if _, err := a.Publish(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("publish after the takeover: %v, want ErrLeaseLost", err)
	}
	if _, err := a.Publish(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("fenced writer published again: %v", err)
	}
	vb, err := b.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := openReader(t, st)
	got, ver := viewResults(t, r, "docs")
	if ver != vb || !reflect.DeepEqual(got, results(t, mustCol(t, dbB, "docs"))) {
		t.Fatalf("reader at %d does not serve B's state (B published %d)", ver, vb)
	}
	m, err := readManifest(ctx, st, vb)
	if err != nil || m.Writer != "B" {
		t.Fatalf("newest manifest by %q, %v", m.Writer, err)
	}
}

func mustCol(t testing.TB, db *engine.DB, name string) *engine.Collection {
	t.Helper()
	c, err := db.Collection(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCorruptObject: a byte flipped in a stored segment object makes a
// reader refuse the manifest with the object's key and the damaged
// block's offset; a reader serving an older version keeps it.
func TestCorruptObject(t *testing.T) {
	g := s3gw.Start(t)
	st := newStore(t, g)
	ctx := context.Background()
	db := openDB(t, t.TempDir())
	defer db.Close()
	c := createCol(t, db, "docs")
	upsert(t, c, 0, 100, 0)
	w, err := OpenWriter(ctx, st, db, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v1, err := w.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	old := openReader(t, st)
	upsert(t, c, 100, 200, 0)
	v2, err := w.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := readManifest(ctx, st, v2)
	if err != nil {
		t.Fatal(err)
	}
	var o Object
	for _, ob := range m.Collections[0].Objects {
		if !contains(m1Keys(t, st, v1), ob.Key) {
			o = ob
		}
	}
	if o.Key == "" {
		t.Fatal("no new object in version 2")
	}
	// The posix backend stores the object as a plain file.
	p := filepath.Join(g.Root, st.Bucket(), filepath.FromSlash(st.Prefix()), filepath.FromSlash(o.Key))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	off := len(b) / 2
	b[off] ^= 0x40
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = OpenReader(ctx, st, ReaderOptions{CacheDir: t.TempDir()})
	var ce *base.CorruptError
	if !errors.As(err, &ce) || !strings.HasSuffix(ce.Path, o.Key) || ce.Offset != int64(off/BlockSize*BlockSize) {
		t.Fatalf("reader over a corrupt object: %v; want a CorruptError naming %s at %d", err, o.Key, off/BlockSize*BlockSize)
	}
	if !strings.Contains(err.Error(), "s3://") {
		t.Fatalf("error does not give the s3 address: %v", err)
	}
	if v, err := old.Refresh(ctx); !errors.As(err, &ce) || v != v1 {
		t.Fatalf("old reader refresh = %d, %v", v, err)
	}
	if s := old.Status(); !s.Degraded || s.Version != v1 {
		t.Fatalf("old reader status %+v", s)
	}
	if got, _ := viewResults(t, old, "docs"); len(got) == 0 {
		t.Fatal("old reader stopped serving")
	}
}

func m1Keys(t testing.TB, st *objstore.Store, v uint64) []string {
	m, err := readManifest(context.Background(), st, v)
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, c := range m.Collections {
		for _, o := range c.Objects {
			ks = append(ks, o.Key)
		}
	}
	return ks
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

type engineDB = engine.DB

func engineOpen(dir string) (*engine.DB, error) { return engine.Open(dir, engine.Options{}) }

// TestCacheBound: as versions replace segments, the objects no served
// version uses are evicted least recently used first, so the cache holds
// at most max(CacheBytes, the served version's bytes) and every object
// of the served version stays.
func TestCacheBound(t *testing.T) {
	g := s3gw.Start(t)
	st := newStore(t, g)
	ctx := context.Background()
	d := newDBT(t)
	c := createCol(t, d.db, "docs")
	w, err := OpenWriter(ctx, st, d.db, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const limit = 1
	cacheDir := t.TempDir()
	r, err := OpenReader(ctx, st, ReaderOptions{CacheDir: cacheDir, CacheBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := OpenReader(ctx, st, ReaderOptions{CacheDir: cacheDir}); err == nil {
		t.Fatal("a second reader opened the same cache directory")
	}
	for round := 0; round < 4; round++ {
		upsert(t, c, 0, 80, round) // every row replaced: compaction rewrites
		if err := c.Compact(ctx); err != nil {
			t.Fatal(err)
		}
		v, err := w.Publish(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := r.Refresh(ctx); err != nil || got != v {
			t.Fatalf("refresh = %d, %v", got, err)
		}
		var live int64
		m, _ := readManifest(ctx, st, v)
		for _, o := range m.Collections[0].Objects {
			live += o.Size
			if _, err := os.Stat(r.cache.path(o.Key)); err != nil {
				t.Fatalf("object %s of the served version not in the cache: %v", o.Key, err)
			}
		}
		s := r.Status().Cache
		if s.Bytes > max(limit, live) {
			t.Fatalf("round %d: cache holds %d bytes; served version %d, limit %d", round, s.Bytes, live, limit)
		}
		if got, _ := viewResults(t, r, "docs"); !reflect.DeepEqual(got, results(t, c)) {
			t.Fatal("reader differs from the writer")
		}
	}
}

// TestNoMixedVersions: queries run on many goroutines while the writer
// publishes generation after generation (every document rewritten) and
// the reader swaps views; each query's hits all come from the
// generation of the version it pinned, and replaced views close.
func TestNoMixedVersions(t *testing.T) {
	g := s3gw.Start(t)
	st := newStore(t, g)
	ctx := context.Background()
	d := newDBT(t)
	c := createCol(t, d.db, "docs")
	gens := map[uint64]int{}
	upsert(t, c, 0, 60, 0)
	w, err := OpenWriter(ctx, st, d.db, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := w.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gens[v] = 0
	r := openReader(t, st)
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var checked atomic.Int64
	for q := 0; q < 4; q++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				view := r.Acquire()
				mu.Lock()
				gen, ok := gens[view.Version]
				mu.Unlock()
				col, err := view.DB.Collection("docs")
				if err != nil {
					t.Error(err)
					view.Release()
					return
				}
				res, err := col.Search(ctx, contract.Query{Vector: doc(i, 99).Vector, Mode: contract.Dense, TopK: 5})
				view.Release()
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					t.Errorf("view at unpublished version %d", view.Version)
					return
				}
				for _, h := range res.Hits {
					var idx int
					fmt.Sscanf(h.DocID, "d%d", &idx)
					if h.Content != doc(idx, gen).Content {
						t.Errorf("version %d (generation %d) served %s of another generation", view.Version, gen, h.DocID)
						return
					}
				}
				checked.Add(1)
			}
		}()
	}
	for gen := 1; gen <= 4; gen++ {
		upsert(t, c, 0, 60, gen)
		if err := c.Compact(ctx); err != nil {
			t.Fatal(err)
		}
		// The generation is known before any reader can open it.
		mu.Lock()
		gens[w.Version()+1] = gen
		mu.Unlock()
		if _, err := w.Publish(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if checked.Load() == 0 {
		t.Fatal("no query ran")
	}
	if n, _ := os.ReadDir(filepath.Join(r.o.CacheDir, "views")); len(n) != 1 {
		t.Fatalf("%d view directories left, want only the current one", len(n))
	}
}

// TestRangedFetch: objects fetched as ranged parts (every object, parts
// of one block) arrive intact: the reader answers as the writer; a byte
// flipped in the third block is refused with that block's offset.
func TestRangedFetch(t *testing.T) {
	saved, savedPart := RangedMinBytes, RangePartBytes
	RangedMinBytes, RangePartBytes = 1, BlockSize
	defer func() { RangedMinBytes, RangePartBytes = saved, savedPart }()
	g := s3gw.Start(t)
	st := newStore(t, g)
	ctx := context.Background()
	d := newDBT(t)
	c := createCol(t, d.db, "docs")
	var docs []contract.Document
	for i := 0; i < 40; i++ {
		dc := doc(i, 0)
		r := rand.New(rand.NewPCG(uint64(i), 1))
		var b strings.Builder
		for b.Len() < 160<<10 {
			fmt.Fprintf(&b, "%016x", r.Uint64()) // incompressible text, one token
		}
		dc.Content += " " + b.String()
		docs = append(docs, dc)
	}
	if _, err := c.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	w, err := OpenWriter(ctx, st, d.db, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := w.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := openReader(t, st)
	if got, _ := viewResults(t, r, "docs"); !reflect.DeepEqual(got, results(t, c)) {
		t.Fatal("reader over ranged fetches differs from the writer")
	}
	m, _ := readManifest(ctx, st, v)
	o := m.Collections[0].Objects[0]
	if o.Size < 3*BlockSize {
		t.Fatalf("segment of %d bytes: too small for three blocks", o.Size)
	}
	p := filepath.Join(g.Root, st.Bucket(), filepath.FromSlash(st.Prefix()), filepath.FromSlash(o.Key))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[2*BlockSize+77] ^= 1
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Eager: the damage is in the text section, which a lazy open leaves
	// remote (TestLazyCorruptBlock).
	_, err = OpenReader(ctx, st, ReaderOptions{CacheDir: t.TempDir(), Eager: true})
	var ce *base.CorruptError
	if !errors.As(err, &ce) || ce.Offset != 2*BlockSize || !strings.HasSuffix(ce.Path, o.Key) {
		t.Fatalf("corrupt ranged fetch: %v; want the block at %d of %s", err, 2*BlockSize, o.Key)
	}
}
