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
	"testing"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/internal/testenv/s3gw"
	"github.com/stratasearch/strata/vfs/objstore"
)

// lazyCorpus publishes one segment of n documents whose contents are
// ~14 KB of random punctuation each (no tokens for the analyzer, and
// little for zstd to compress), so the segment's
// text section spans several whole 1 MiB blocks. It returns the writer's
// collection and the segment's object.
func lazyCorpus(t *testing.T, g *s3gw.Gateway, st *objstore.Store, n int) (*engine.Collection, Object) {
	t.Helper()
	d := newDBT(t)
	c := createCol(t, d.db, "docs")
	var docs []contract.Document
	for i := 0; i < n; i++ {
		dc := doc(i, 0)
		r := rand.New(rand.NewPCG(uint64(i), 9))
		var b strings.Builder
		b.WriteString(dc.Content)
		const sym = "!#$%&()*+,-./:;<=>?@[]^{|}~"
		b.WriteByte(' ')
		for b.Len() < 14<<10 {
			b.WriteByte(sym[r.IntN(len(sym))])
		}
		dc.Content = b.String()
		docs = append(docs, dc)
	}
	o := publishFlushed(t, st, d.db, c, docs)
	if o.Lazy == nil || o.Lazy.Len < 2*BlockSize {
		t.Fatalf("object %s: lazy range %+v, want a text section of at least 2 MiB", o.Key, o.Lazy)
	}
	return c, o
}

// publishFlushed upserts docs into c (of db), flushes, publishes db to
// st and returns the first object of the new manifest's first collection.
func publishFlushed(t *testing.T, st *objstore.Store, db *engine.DB, c *engine.Collection, docs []contract.Document) Object {
	t.Helper()
	ctx := context.Background()
	if _, err := c.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	w, err := OpenWriter(ctx, st, db, WriterOptions{LeaseTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	v, err := w.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := readManifest(ctx, st, v)
	if err != nil {
		t.Fatal(err)
	}
	return m.Collections[0].Objects[0]
}

type fullHit struct {
	ID, Content string
	Score       float64
}

func fullResults(t testing.TB, c *engine.Collection) ([][]fullHit, error) {
	t.Helper()
	var out [][]fullHit
	for _, q := range queries() {
		res, err := c.Search(context.Background(), q)
		if err != nil {
			return nil, err
		}
		var hs []fullHit
		for _, h := range res.Hits {
			hs = append(hs, fullHit{h.DocID, h.Content, h.Score})
		}
		out = append(out, hs)
	}
	return out, nil
}

func viewCol(t testing.TB, r *Reader) (*engine.Collection, func()) {
	t.Helper()
	v := r.Acquire()
	if v == nil {
		t.Fatal("reader has no view")
	}
	c, err := v.DB.Collection("docs")
	if err != nil {
		t.Fatal(err)
	}
	return c, v.Release
}

// TestLazyRead: a reader opens a version without fetching the segment's
// text section; its lexical, dense and hybrid queries and its Gets give
// exactly the writer's hits and contents, fetching only the text blocks
// of the rows they return (far less than the section), each once.
func TestLazyRead(t *testing.T) {
	g := s3gw.Start(t)
	st := newStore(t, g)
	c, o := lazyCorpus(t, g, st, 300)
	r := openReader(t, st)
	open := r.Status().Cache
	if open.FetchedBytes > o.Size-o.Lazy.Len+2*BlockSize || open.FetchedBytes >= o.Size {
		t.Fatalf("open fetched %d bytes of %d (lazy range %d)", open.FetchedBytes, o.Size, o.Lazy.Len)
	}
	want, err := fullResults(t, c)
	if err != nil {
		t.Fatal(err)
	}
	rc, release := viewCol(t, r)
	defer release()
	// Each query fetches at most the blocks of its 10 hits (a block
	// holds one or two of these rows, under 16 KiB compressed).
	var got [][]fullHit
	for _, q := range queries() {
		before := r.Status().Cache.FetchedBytes
		res, err := rc.Search(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if n := r.Status().Cache.FetchedBytes - before; n > int64(q.TopK)*16<<10 {
			t.Fatalf("query %+v fetched %d bytes", q, n)
		}
		var hs []fullHit
		for _, h := range res.Hits {
			hs = append(hs, fullHit{h.DocID, h.Content, h.Score})
		}
		got = append(got, hs)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("lazy reader's hits differ from the writer's")
	}
	afterQ := r.Status().Cache.FetchedBytes
	if q := afterQ - open.FetchedBytes; q <= 0 || q >= o.Lazy.Len {
		t.Fatalf("18 queries fetched %d bytes of a %d-byte text section", q, o.Lazy.Len)
	}
	// The same queries again: nothing fetched.
	if again, err := fullResults(t, rc); err != nil || !reflect.DeepEqual(again, want) {
		t.Fatalf("repeat: %v", err)
	}
	if n := r.Status().Cache.FetchedBytes; n != afterQ {
		t.Fatalf("repeated queries fetched %d bytes", n-afterQ)
	}
	for _, id := range []string{"d0000", "d0150", "d0299"} {
		wd, err := c.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		gd, err := rc.Get(context.Background(), id)
		if err != nil || gd.Content != wd.Content || gd.ID != id {
			t.Fatalf("Get %s: %.30q, %v", id, gd.Content, err)
		}
	}
	if s := r.Status(); s.Degraded {
		t.Fatalf("degraded: %+v", s)
	}
	// Prefetch makes the whole object present; an eager reader fetches
	// it whole at open. Both answer as the writer does.
	if err := r.Prefetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := r.Status().Cache; s.Bytes < o.Size || s.Bytes > o.Size+o.Lazy.Len {
		t.Fatalf("after Prefetch the cache counts %d bytes for a %d-byte object", s.Bytes, o.Size)
	}
	pre := r.Status().Cache.FetchedBytes
	for i := 0; i < 300; i += 7 {
		id := fmt.Sprintf("d%04d", i)
		wd, _ := c.Get(context.Background(), id)
		if gd, err := rc.Get(context.Background(), id); err != nil || gd.Content != wd.Content {
			t.Fatalf("Get %s after Prefetch: %v", id, err)
		}
	}
	if n := r.Status().Cache.FetchedBytes; n != pre {
		t.Fatalf("Gets after Prefetch fetched %d bytes", n-pre)
	}
	er, err := OpenReader(context.Background(), st, ReaderOptions{CacheDir: t.TempDir(), Eager: true})
	if err != nil {
		t.Fatal(err)
	}
	defer er.Close()
	if n := er.Status().Cache.FetchedBytes; n != o.Size {
		t.Fatalf("eager reader fetched %d bytes of %d", n, o.Size)
	}
	ec, erel := viewCol(t, er)
	defer erel()
	if got, err := fullResults(t, ec); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("eager reader: %v", err)
	}
}

// TestLazyCorruptBlock: a text block damaged in the bucket does not stop
// the open (the block is not fetched); the query or Get needing it fails
// with a *base.CorruptError naming the object's s3:// key and the
// block's offset, the reader reports degraded, and other rows serve.
func TestLazyCorruptBlock(t *testing.T) {
	g := s3gw.Start(t)
	st := newStore(t, g)
	c, o := lazyCorpus(t, g, st, 300)
	p := filepath.Join(g.Root, st.Bucket(), filepath.FromSlash(st.Prefix()), filepath.FromSlash(o.Key))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	at := o.Lazy.Off + o.Lazy.Len/2
	b[at] ^= 0x40
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := openReader(t, st)
	rc, release := viewCol(t, r)
	defer release()
	var bad []string
	var ce *base.CorruptError
	for i := 0; i < 300; i++ {
		id := fmt.Sprintf("d%04d", i)
		_, err := rc.Get(context.Background(), id)
		if err == nil {
			continue
		}
		if !errors.As(err, &ce) || !strings.HasSuffix(ce.Path, o.Key) || !strings.HasPrefix(ce.Path, "s3://") ||
			ce.Offset > at || ce.Offset < o.Lazy.Off || at-ce.Offset > 64<<10 {
			t.Fatalf("Get %s: %v; want corruption of %s at the block holding byte %d", id, err, o.Key, at)
		}
		bad = append(bad, id)
	}
	if len(bad) == 0 || len(bad) > 4 {
		t.Fatalf("%d documents failed: %v", len(bad), bad)
	}
	if s := r.Status(); !s.Degraded || !strings.Contains(s.Error, o.Key) {
		t.Fatalf("status after a corrupt block: %+v", s)
	}
	wd, _ := c.Get(context.Background(), "d0000")
	if bad[0] != "d0000" {
		if gd, err := rc.Get(context.Background(), "d0000"); err != nil || gd.Content != wd.Content {
			t.Fatalf("an intact row: %v", err)
		}
	}
}

// TestLazyGatewayDown: with the gateway stopped, text blocks already
// fetched still serve; a row whose block is remote fails with the
// store's unavailability and the reader reports degraded; after the
// restart the row serves and a refresh clears the state.
func TestLazyGatewayDown(t *testing.T) {
	g := s3gw.Start(t)
	st := newStore(t, g)
	c, _ := lazyCorpus(t, g, st, 300)
	r := openReader(t, st)
	rc, release := viewCol(t, r)
	defer release()
	want, err := fullResults(t, rc)
	if err != nil {
		t.Fatal(err)
	}
	g.Stop()
	if got, err := fullResults(t, rc); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("cached blocks while the gateway is down: %v", err)
	}
	// A row far from every query's hits: its block was never fetched.
	var missing string
	for i := 299; i >= 0 && missing == ""; i-- {
		id := fmt.Sprintf("d%04d", i)
		if _, err := rc.Get(context.Background(), id); err != nil {
			if !errors.Is(err, objstore.ErrUnavailable) {
				t.Fatalf("Get %s while down: %v", id, err)
			}
			missing = id
		}
	}
	if missing == "" {
		t.Fatal("every row served with the gateway down: nothing was left remote")
	}
	if s := r.Status(); !s.Degraded {
		t.Fatalf("not degraded after a failed fetch: %+v", s)
	}
	if err := g.Restart(); err != nil {
		t.Fatal(err)
	}
	wd, _ := c.Get(context.Background(), missing)
	if gd, err := rc.Get(context.Background(), missing); err != nil || gd.Content != wd.Content {
		t.Fatalf("Get %s after the restart: %v", missing, err)
	}
	if _, err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := r.Status(); s.Degraded {
		t.Fatalf("still degraded: %+v", s)
	}
}
