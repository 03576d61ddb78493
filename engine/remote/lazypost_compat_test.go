package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/stratasearch/strata/internal/testenv/s3gw"
)

// TestLazyPostingsThenManifestWithout: a reader serves a version whose
// object leaves its posting blobs remote (Object.Postings), then the
// next version, published by a writer that does not know the field,
// lists the same object (same content key) without it. The cached file
// still lacks the blobs; the new view's lexical queries must give the
// writer's hits, not read the absent bytes.
func TestLazyPostingsThenManifestWithout(t *testing.T) {
	ctx := context.Background()
	g := s3gw.Start(t)
	st := newStore(t, g)
	c, o, voc := postCorpus(t, st, 350, 3000)
	qs := postQueries(voc, 12)
	want, err := lexHits(t, c, qs)
	if err != nil {
		t.Fatal(err)
	}
	r := openReader(t, st)
	v1 := r.Status().Version
	m, err := readManifest(ctx, st, v1)
	if err != nil {
		t.Fatal(err)
	}
	for ci := range m.Collections {
		for oi := range m.Collections[ci].Objects {
			m.Collections[ci].Objects[oi].Postings = nil
		}
	}
	m.Parent, m.Version = v1, v1+1
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutIfAbsent(ctx, ManifestKey(v1+1), b); err != nil {
		t.Fatal(err)
	}
	if v, err := r.Refresh(ctx); err != nil || v != v1+1 {
		t.Fatalf("refresh: version %d, %v; want %d", v, err, v1+1)
	}
	rc, release := viewCol(t, r)
	defer release()
	got, err := lexHits(t, rc, qs)
	if err != nil {
		t.Fatalf("object %s, version %d without postings range: %v", o.Key, v1+1, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("version %d without postings range: hits differ from the writer's:\n got %v\nwant %v", v1+1, got, want)
	}
}

// TestLazyPostingsConcurrent: queries running at once over a fresh view
// give the writer's hits, and fetch each posting block once: together
// they fetch what one reader running them one by one fetches.
func TestLazyPostingsConcurrent(t *testing.T) {
	g := s3gw.Start(t)
	st := newStore(t, g)
	c, _, voc := postCorpus(t, st, 350, 3000)
	qs := postQueries(voc, 12)
	want, err := lexHits(t, c, qs)
	if err != nil {
		t.Fatal(err)
	}
	serial := openReader(t, st)
	sc, srel := viewCol(t, serial)
	open := serial.Status().Cache.FetchedBytes
	if got, err := lexHits(t, sc, qs); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("serial: %v", err)
	}
	wantFetched := serial.Status().Cache.FetchedBytes - open
	srel()

	r := openReader(t, st)
	rc, release := viewCol(t, r)
	defer release()
	open = r.Status().Cache.FetchedBytes
	const workers = 6
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func() {
			for k := range qs {
				i := (k + w*5) % len(qs)
				res, err := rc.Search(context.Background(), qs[i])
				if err != nil {
					errs <- err
					return
				}
				var hs []hit
				for _, h := range res.Hits {
					hs = append(hs, hit{h.DocID, h.Score})
				}
				if !reflect.DeepEqual(hs, want[i]) {
					errs <- fmt.Errorf("query %q: %v, want %v", qs[i].Text, hs, want[i])
					return
				}
			}
			errs <- nil
		}()
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := r.Status().Cache.FetchedBytes - open; got != wantFetched {
		t.Fatalf("%d concurrent workers fetched %d bytes, one by one %d", workers, got, wantFetched)
	}
	if s := r.Status(); s.Degraded {
		t.Fatalf("degraded: %+v", s)
	}
}
