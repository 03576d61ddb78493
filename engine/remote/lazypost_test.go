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

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/internal/testenv"
	"github.com/stratasearch/strata/internal/testenv/s3gw"
	"github.com/stratasearch/strata/vfs/objstore"
)

// postCorpus publishes one segment of n documents of `words` random
// words each (Zipf over a vocabulary of vocab), so its BM25 posting
// blobs span several whole 1 MiB blocks. It returns the writer's
// collection, the segment's object and the vocabulary.
func postCorpus(t *testing.T, st *objstore.Store, n, words int) (*engine.Collection, Object, []string) {
	t.Helper()
	d := newDBT(t)
	c := createCol(t, d.db, "docs")
	const vocab = 4000
	voc := make([]string, vocab)
	for i := range voc {
		voc[i] = fmt.Sprintf("w%dq", i)
	}
	r := rand.New(rand.NewPCG(17, 4))
	zipf := rand.NewZipf(r, 1.05, 3, vocab-1)
	var docs []contract.Document
	for i := 0; i < n; i++ {
		dc := doc(i, 0)
		var b strings.Builder
		for j := 0; j < words; j++ {
			b.WriteString(voc[zipf.Uint64()])
			b.WriteByte(' ')
		}
		dc.Content = b.String()
		docs = append(docs, dc)
	}
	o := publishFlushed(t, st, d.db, c, docs)
	if o.Postings == nil || o.Postings.Len < int64(n*words) {
		t.Fatalf("object %s (%d bytes): postings range %+v, want at least %d bytes", o.Key, o.Size, o.Postings, n*words)
	}
	return c, o, voc
}

// postQueries are lexical queries over voc: rare, common and mixed
// words, fixed seed.
func postQueries(voc []string, n int) []contract.Query {
	r := rand.New(rand.NewPCG(5, 6))
	var qs []contract.Query
	for i := 0; i < n; i++ {
		var w []string
		for j := 0; j < 1+r.IntN(3); j++ {
			k := r.IntN(len(voc))
			if r.IntN(3) == 0 {
				k = r.IntN(40)
			}
			w = append(w, voc[k])
		}
		qs = append(qs, contract.Query{Text: strings.Join(w, " "), Mode: contract.Lexical, TopK: 10})
	}
	return qs
}

func lexHits(t *testing.T, c *engine.Collection, qs []contract.Query) ([][]hit, error) {
	t.Helper()
	var out [][]hit
	for _, q := range qs {
		res, err := c.Search(context.Background(), q)
		if err != nil {
			return nil, err
		}
		var hs []hit
		for _, h := range res.Hits {
			hs = append(hs, hit{h.DocID, h.Score})
		}
		out = append(out, hs)
	}
	return out, nil
}

// TestLazyPostings: a reader opens a version without fetching the
// segment's BM25 posting blobs; its lexical queries give exactly the
// writer's hits, each fetching only the blocks its lists lie in (far
// less than the postings), a repeated query fetching nothing; an eager
// reader fetches every byte at open and answers the same.
func TestLazyPostings(t *testing.T) {
	if testing.Short() && testenv.Race {
		t.Skip("under -race -short, TestLazyPostingsConcurrent and TestLazyPostingsThenManifestWithout cover the fetch path")
	}
	g := s3gw.Start(t)
	st := newStore(t, g)
	n, words, nq := 500, 3000, 40
	if testing.Short() {
		n, words, nq = 350, 3000, 12 // postings of about 2.2 MB: at least one whole block remote
	}
	c, o, voc := postCorpus(t, st, n, words)
	qs := postQueries(voc, nq)
	want, err := lexHits(t, c, qs)
	if err != nil {
		t.Fatal(err)
	}
	r := openReader(t, st)
	open := r.Status().Cache.FetchedBytes
	remoteAtOpen := o.Postings.Len
	if o.Lazy != nil {
		remoteAtOpen += o.Lazy.Len
	}
	if open > o.Size-remoteAtOpen+4*BlockSize || open > o.Size-BlockSize || open >= o.Size-o.Postings.Len+BlockSize {
		t.Fatalf("open fetched %d bytes of %d (postings %d)", open, o.Size, o.Postings.Len)
	}
	rc, release := viewCol(t, r)
	defer release()
	got, err := lexHits(t, rc, qs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("lazy reader's hits differ from the writer's:\n got %v\nwant %v", got, want)
	}
	after := r.Status().Cache.FetchedBytes
	if q := after - open; q <= 0 || q >= o.Postings.Len {
		t.Fatalf("%d queries fetched %d bytes of %d bytes of postings", nq, q, o.Postings.Len)
	}
	if again, err := lexHits(t, rc, qs); err != nil || !reflect.DeepEqual(again, want) {
		t.Fatalf("repeat: %v", err)
	}
	if n := r.Status().Cache.FetchedBytes; n != after {
		t.Fatalf("repeated queries fetched %d bytes", n-after)
	}
	if s := r.Status(); s.Degraded {
		t.Fatalf("degraded: %+v", s)
	}
	t.Logf("object %d bytes, postings %d; fetched at open %d, by %d queries %d", o.Size, o.Postings.Len, open, nq, after-open)
	if err := r.Prefetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := r.Status().Cache; s.Bytes != o.Size {
		t.Fatalf("after Prefetch the cache counts %d bytes for a %d-byte object", s.Bytes, o.Size)
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
	if got, err := lexHits(t, ec, qs); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("eager reader: %v", err)
	}
}

// TestLazyPostingsCorrupt: a posting block damaged in the bucket does
// not stop the open; a query whose lists lie in it fails with a
// *base.CorruptError naming the object's s3:// key and the block's
// offset, the reader reports degraded, and queries over other blocks
// serve. With the gateway stopped, a query whose lists are remote fails
// with the store's unavailability, cached lists still serve, and after
// the restart the query serves.
func TestLazyPostingsCorrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("two 1.5M-token corpora; TestLazyPostings covers the fetch path under -short")
	}
	g := s3gw.Start(t)
	st := newStore(t, g)
	c, o, voc := postCorpus(t, st, 500, 3000)
	qs := postQueries(voc, 30)
	want, err := lexHits(t, c, qs)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(g.Root, st.Bucket(), filepath.FromSlash(st.Prefix()), filepath.FromSlash(o.Key))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// A byte in the first block wholly inside the postings.
	blk := (o.Postings.Off + BlockSize - 1) / BlockSize
	at := blk*BlockSize + BlockSize/2
	b[at] ^= 0x40
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := openReader(t, st)
	rc, release := viewCol(t, r)
	defer release()
	var bad, good int
	var ce *base.CorruptError
	for i, q := range qs {
		res, err := rc.Search(context.Background(), q)
		if err != nil {
			if !errors.As(err, &ce) || !strings.HasPrefix(ce.Path, "s3://") || !strings.HasSuffix(ce.Path, o.Key) || ce.Offset != blk*BlockSize {
				t.Fatalf("query %q: %v; want corruption of %s at byte offset %d", q.Text, err, o.Key, blk*BlockSize)
			}
			bad++
			continue
		}
		var hs []hit
		for _, h := range res.Hits {
			hs = append(hs, hit{h.DocID, h.Score})
		}
		if !reflect.DeepEqual(hs, want[i]) {
			t.Fatalf("query %q over intact blocks: %v, want %v", q.Text, hs, want[i])
		}
		good++
	}
	if bad == 0 || good == 0 {
		t.Fatalf("%d queries failed, %d served: want some of each", bad, good)
	}
	if s := r.Status(); !s.Degraded || !strings.Contains(s.Error, o.Key) {
		t.Fatalf("status after a corrupt block: %+v", s)
	}

	// Gateway down: a fresh reader of an intact copy.
	st2 := newStore(t, g)
	c2, _, voc2 := postCorpus(t, st2, 500, 3000)
	r2 := openReader(t, st2)
	rc2, release2 := viewCol(t, r2)
	defer release2()
	qs2 := postQueries(voc2, 30)
	want2, err := lexHits(t, c2, qs2)
	if err != nil {
		t.Fatal(err)
	}
	first, err := lexHits(t, rc2, qs2[:1])
	if err != nil || !reflect.DeepEqual(first, want2[:1]) {
		t.Fatalf("first query: %v", err)
	}
	g.Stop()
	if again, err := lexHits(t, rc2, qs2[:1]); err != nil || !reflect.DeepEqual(again, want2[:1]) {
		t.Fatalf("cached lists with the gateway down: %v", err)
	}
	var down int
	for _, q := range qs2[1:] {
		if _, err := rc2.Search(context.Background(), q); err != nil {
			if !errors.Is(err, objstore.ErrUnavailable) {
				t.Fatalf("query %q while down: %v", q.Text, err)
			}
			down++
			break // each failing fetch waits out the client's retries
		}
	}
	if down == 0 {
		t.Fatal("every query served with the gateway down: nothing was left remote")
	}
	if s := r2.Status(); !s.Degraded {
		t.Fatalf("not degraded after a failed fetch: %+v", s)
	}
	if err := g.Restart(); err != nil {
		t.Fatal(err)
	}
	if got, err := lexHits(t, rc2, qs2); err != nil || !reflect.DeepEqual(got, want2) {
		t.Fatalf("after the restart: %v", err)
	}
	if _, err := r2.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := r2.Status(); s.Degraded {
		t.Fatalf("still degraded: %+v", s)
	}
}
