package server

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine/contract"
)

// TestListingScaleTenancy: alice owns thousands of documents and bob one.
// Bob's page returns his document, and its cost does not grow with
// alice's documents: limit=10 at 20,000 of hers costs about what it costs
// at 2,000 (10,000 and 1,000 under -short; the ratio is asserted, not a
// time, to stay robust on a loaded machine). Alice pages through all of
// hers.
func TestListingScaleTenancy(t *testing.T) {
	dir := t.TempDir()
	keysFile := filepath.Join(dir, "keys.json")
	if err := os.WriteFile(keysFile, []byte(`[
	 {"key":"key-a","principal":"alice","namespaces":["alice/"]},
	 {"key":"key-b","principal":"bob","namespaces":["bob/"]},
	 {"key":"key-admin","principal":"ops","admin":true}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := LoadAPIKeys(keysFile)
	if err != nil {
		t.Fatal(err)
	}
	rs := start(t, filepath.Join(dir, "data"), func(o *Options) { o.APIKeys = keys })
	anon := newClient(t, rs.url)
	admin, a, b := anon.with("key-admin"), anon.with("key-a"), anon.with("key-b")
	admin.must(http.StatusCreated, "POST", "/v1/collections", map[string]any{"name": "docs", "options": map[string]any{"dim": 4}}, nil)
	// Bob's id sorts after all of alice's: the former listing walked hers
	// to reach it.
	b.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("z-bob", "bob's only document", "bob/", nil)), nil)

	rng := rand.New(rand.NewPCG(16, 4))
	nAlice := 0
	addAlice := func(upTo int) {
		for nAlice < upTo {
			var docs []contract.Document
			for ; nAlice < upTo && len(docs) < 500; nAlice++ {
				docs = append(docs, mkDoc(fmt.Sprintf("a%06d", nAlice), fmt.Sprintf("alice note %x %x", rng.Uint64(), rng.Uint64()), "alice/", nil))
			}
			a.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(docs...), nil)
		}
	}
	// bobPage returns the fastest of a few limit=10 listings (the least
	// disturbed by other load), checking each.
	bobPage := func(limit int) time.Duration {
		best := time.Duration(1 << 62)
		for range 7 {
			var page ListResponse
			t0 := time.Now()
			b.must(http.StatusOK, "GET", fmt.Sprintf("/v1/collections/docs/documents?limit=%d", limit), nil, &page)
			d := time.Since(t0)
			if len(page.Documents) != 1 || page.Documents[0].ID != "z-bob" || page.Documents[0].Namespace != "bob/" || (page.NextCursor != "") != (limit == 1) {
				t.Fatalf("bob's page (limit %d) with %d alice documents: %+v", limit, nAlice, page)
			}
			best = min(best, d)
			if d > 5*time.Second {
				break // one is enough to fail the ratio
			}
		}
		return best
	}
	nSmall, nLarge := 2000, 20000
	if testing.Short() {
		nSmall, nLarge = 1000, 10000
	}
	addAlice(nSmall)
	small := bobPage(10)
	addAlice(nLarge)
	large := bobPage(10)
	one := bobPage(1)
	t.Logf("bob's limit=10 page: %v with %d alice documents, %v with %d (limit=1: %v)", small, nSmall, large, nLarge, one)
	// Allow noise and the HTTP round trip's jitter, not a growth with N:
	// the page cost is O(page + log N).
	if large > 4*small+2*time.Millisecond {
		t.Fatalf("bob's page grows with alice's documents: %v at %d, %v at %d", small, nSmall, large, nLarge)
	}

	// Alice pages through all of hers, in order, never seeing bob's.
	cursor, got := "", 0
	for {
		path := "/v1/collections/docs/documents?limit=1000"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		var page ListResponse
		a.must(http.StatusOK, "GET", path, nil, &page)
		for _, d := range page.Documents {
			if want := fmt.Sprintf("a%06d", got); d.ID != want {
				t.Fatalf("alice's listing: document %d is %q, want %q", got, d.ID, want)
			}
			got++
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if got != nAlice {
		t.Fatalf("alice listed %d documents, want %d", got, nAlice)
	}
}
