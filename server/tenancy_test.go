package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine/contract"
)

func TestTenancy(t *testing.T) {
	dir := t.TempDir()
	sumB := sha256.Sum256([]byte("key-b"))
	keysFile := filepath.Join(dir, "keys.json")
	if err := os.WriteFile(keysFile, []byte(`[
	 {"key":"key-a","principal":"alice","namespaces":["tenant-a/"]},
	 {"key_sha256":"`+hex.EncodeToString(sumB[:])+`","principal":"bob","namespaces":["tenant-b/"]},
	 {"key":"key-admin","principal":"ops","admin":true}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := LoadAPIKeys(keysFile)
	if err != nil {
		t.Fatal(err)
	}
	rs := start(t, filepath.Join(dir, "data"), func(o *Options) { o.APIKeys = keys })
	anon := newClient(t, rs.url)
	admin := anon.with("key-admin")
	a := anon.with("key-a")
	b := anon.with("key-b")

	// Authentication.
	for _, c := range []*client{anon, anon.with("wrong")} {
		code, h, body := c.do("GET", "/v1/collections", nil)
		if code != http.StatusUnauthorized || h.Get("WWW-Authenticate") == "" || checkErrShape(t, body).Status != StatusUnauthorized {
			t.Fatalf("unauthenticated: %d %s", code, body)
		}
	}
	anon.must(http.StatusOK, "GET", "/healthz", nil, nil)
	code, _, body := a.do("POST", "/v1/collections", map[string]any{"name": "x", "options": map[string]any{"dim": 4}})
	if code != http.StatusForbidden || checkErrShape(t, body).Status != StatusForbidden {
		t.Fatalf("tenant creating a collection: %d %s", code, body)
	}
	admin.must(http.StatusCreated, "POST", "/v1/collections", map[string]any{"name": "docs", "options": map[string]any{"dim": 4, "analyzer": "prose"}}, nil)

	// B's documents dominate every match: many, with the term repeated and
	// vectors nearer the query.
	nA, nB, k := 12, 150, 10
	if testing.Short() {
		nB = 60
	}
	var docsA, docsB []contract.Document
	for i := 0; i < nA; i++ {
		docsA = append(docsA, mkDoc(fmt.Sprintf("a%02d", i), fmt.Sprintf("alpha report number %d with other words", i), "tenant-a/", vec(0.2, 1, float32(i)/10, 0)))
	}
	for i := 0; i < nB; i++ {
		docsB = append(docsB, mkDoc(fmt.Sprintf("b%03d", i), "alpha alpha alpha", "tenant-b/", vec(1, 0.01*float32(i), 0, 0)))
	}
	a.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(docsA...), nil)
	b.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(docsB...), nil)

	checkOwn := func(c *client, prefix string, q map[string]any, want int) {
		t.Helper()
		var res contract.Result
		c.must(http.StatusOK, "POST", "/v1/collections/docs/search", q, &res)
		if len(res.Hits) != want {
			t.Fatalf("%s: %d hits, want %d", prefix, len(res.Hits), want)
		}
		for _, h := range res.Hits {
			if !strings.HasPrefix(h.Namespace, prefix) {
				t.Fatalf("%s saw foreign doc %s (%s)", prefix, h.DocID, h.Namespace)
			}
		}
	}
	checkOwn(a, "tenant-a/", map[string]any{"text": "alpha", "mode": "lexical", "top_k": k}, k)
	checkOwn(a, "tenant-a/", map[string]any{"vector": vec(1, 0, 0, 0), "top_k": k}, k)
	checkOwn(a, "tenant-a/", map[string]any{"text": "alpha", "vector": vec(1, 0, 0, 0), "top_k": k}, k)
	checkOwn(b, "tenant-b/", map[string]any{"text": "alpha", "mode": "lexical", "top_k": k}, k)
	// Naming the other tenant's scope is refused, not silently emptied.
	code, _, body = a.do("POST", "/v1/collections/docs/search", map[string]any{"text": "alpha", "scope": map[string]any{"namespace": "tenant-b/"}})
	if code != http.StatusBadRequest {
		t.Fatalf("foreign scope: %d %s", code, body)
	}

	// GET document: a foreign id is 404, own is 200.
	a.must(http.StatusNotFound, "GET", "/v1/collections/docs/documents/b000", nil, nil)
	a.must(http.StatusOK, "GET", "/v1/collections/docs/documents/a00", nil, nil)

	// Listing: only own documents, all of them, across pages.
	var got []string
	cursor := ""
	for {
		path := "/v1/collections/docs/documents?limit=5"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		var page ListResponse
		a.must(http.StatusOK, "GET", path, nil, &page)
		for _, d := range page.Documents {
			got = append(got, d.ID)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if len(got) != nA || !strings.HasPrefix(got[0], "a") || !strings.HasPrefix(got[nA-1], "a") {
		t.Fatalf("tenant listing: %v", got)
	}
	// A's cursor is not B's.
	var page ListResponse
	a.must(http.StatusOK, "GET", "/v1/collections/docs/documents?limit=2", nil, &page)
	b.must(http.StatusBadRequest, "GET", "/v1/collections/docs/documents?cursor="+url.QueryEscape(page.NextCursor), nil, nil)

	// Writes outside the key's namespaces → 403, nothing changes.
	e0 := epochOf(t, admin, "docs")
	code, _, body = a.do("POST", "/v1/collections/docs/documents", upsertBody(mkDoc("evil", "x", "tenant-b/", nil)))
	if code != http.StatusForbidden || checkErrShape(t, body).Status != StatusForbidden {
		t.Fatalf("write into foreign namespace: %d %s", code, body)
	}
	// An id held in another namespace: the uniform 409 id_unavailable
	// (TestTenancyIDUnavailableUniform), not a 403 confirming it.
	code, _, body = a.do("POST", "/v1/collections/docs/documents", upsertBody(mkDoc("b000", "hijack", "tenant-a/", nil)))
	if code != http.StatusConflict || checkErrShape(t, body).Errors[0].ErrorType != ErrTypeIDUnavailable {
		t.Fatalf("overwrite of a foreign id: %d %s", code, body)
	}
	var del DeleteResponse
	a.must(http.StatusOK, "POST", "/v1/collections/docs/documents/delete", map[string]any{"ids": []string{"b000", "b001"}}, &del)
	a.must(http.StatusOK, "DELETE", "/v1/collections/docs/documents/b002", nil, nil)
	if del.Count != 0 || epochOf(t, admin, "docs") != e0 {
		t.Fatalf("tenant deleted foreign docs: %+v", del)
	}
	b.must(http.StatusOK, "GET", "/v1/collections/docs/documents/b000", nil, nil)
	b.must(http.StatusOK, "GET", "/v1/collections/docs/documents/b002", nil, nil)
	// Jobs are admin-only.
	a.must(http.StatusForbidden, "POST", "/v1/jobs", map[string]any{"kind": "flush", "collection": "docs"}, nil)
	// Idempotency keys are per principal: the same key from A and B are two requests.
	a.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("a-k", "x", "tenant-a/", nil)), nil, idemHeader, "same")
	h := b.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("b-k", "x", "tenant-b/", nil)), nil, idemHeader, "same")
	if h.Get("Idempotent-Replayed") != "" {
		t.Fatal("another principal's idempotency record was replayed")
	}
	// Non-admins get no cross-tenant stats.
	var cv CollectionView
	a.must(http.StatusOK, "GET", "/v1/collections/docs", nil, &cv)
	if cv.Stats != nil {
		t.Fatal("tenant sees collection stats")
	}
}

func TestLoadAPIKeysErrors(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"unknown field": `[{"key":"k","principal":"p","namespaces":["a/"],"role":"x"}]`,
		"no principal":  `[{"key":"k","namespaces":["a/"]}]`,
		"no namespaces": `[{"key":"k","principal":"p"}]`,
		"both keys":     `[{"key":"k","key_sha256":"` + strings.Repeat("a", 64) + `","principal":"p","namespaces":["a/"]}]`,
		"bad hash":      `[{"key_sha256":"xyz","principal":"p","namespaces":["a/"]}]`,
		"duplicate":     `[{"key":"k","principal":"p","namespaces":["a/"]},{"key":"k","principal":"q","namespaces":["b/"]}]`,
		"not json":      `{{`,
	} {
		p := filepath.Join(dir, "k.json")
		os.WriteFile(p, []byte(body), 0o600)
		if _, err := LoadAPIKeys(p); err == nil || !strings.HasPrefix(err.Error(), "server: ") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestCursorListing(t *testing.T) {
	rs := start(t, t.TempDir(), nil)
	c := newClient(t, rs.url)
	createDocs(c, "docs", 4)
	createDocs(c, "other", 4)
	n := 250
	if testing.Short() {
		n = 80
	}
	var docs []contract.Document
	want := map[string]bool{}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("doc/%04d#x", (i*7919)%10000)
		docs = append(docs, mkDoc(id, "content", "", nil))
		want[id] = true
	}
	c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(docs...), nil)
	seen := map[string]int{}
	var order []string
	cursor, pages := "", 0
	var lastCursor string
	for {
		path := "/v1/collections/docs/documents?limit=37"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		var page ListResponse
		c.must(http.StatusOK, "GET", path, nil, &page)
		pages++
		if len(page.Documents) > 37 {
			t.Fatalf("page of %d", len(page.Documents))
		}
		for _, d := range page.Documents {
			seen[d.ID]++
			order = append(order, d.ID)
			if d.VersionHash == "" || d.Trust != contract.Authoritative {
				t.Fatalf("summary %+v", d)
			}
		}
		if page.NextCursor == "" {
			break
		}
		lastCursor = page.NextCursor
		cursor = page.NextCursor
	}
	if len(seen) != n || !sort.StringsAreSorted(order) {
		t.Fatalf("listed %d distinct of %d (sorted %v)", len(seen), n, sort.StringsAreSorted(order))
	}
	for id, k := range seen {
		if k != 1 || !want[id] {
			t.Fatalf("%s listed %d times", id, k)
		}
	}
	if pages != (n+36)/37 && pages != (n+36)/37+1 {
		t.Fatalf("%d pages", pages)
	}
	// Tampering: any changed byte of the payload or MAC is refused.
	for i := 0; i < len(lastCursor); i += 7 {
		bad := []byte(lastCursor)
		if bad[i] == 'A' {
			bad[i] = 'B'
		} else {
			bad[i] = 'A'
		}
		code, _, b := c.do("GET", "/v1/collections/docs/documents?cursor="+url.QueryEscape(string(bad)), nil)
		if code != http.StatusBadRequest {
			t.Fatalf("tampered cursor (byte %d) accepted: %d %s", i, code, b)
		}
	}
	// Another collection's cursor is refused.
	code, _, _ := c.do("GET", "/v1/collections/other/documents?cursor="+url.QueryEscape(lastCursor), nil)
	if code != http.StatusBadRequest {
		t.Fatalf("cross-collection cursor: %d", code)
	}
	// limit above the cap is capped at 1000.
	var all ListResponse
	c.must(http.StatusOK, "GET", "/v1/collections/docs/documents?limit=5000", nil, &all)
	if len(all.Documents) != n || all.NextCursor != "" {
		t.Fatalf("limit=5000: %d docs, cursor %q", len(all.Documents), all.NextCursor)
	}
	// An id containing '/' and '#' round-trips through the document path.
	var d contract.Document
	c.must(http.StatusOK, "GET", "/v1/collections/docs/documents/"+url.PathEscape(order[0]), nil, &d)
	if d.ID != order[0] {
		t.Fatalf("get %q: %q", order[0], d.ID)
	}
}

func TestConcurrencyLimitAndBodyLimit(t *testing.T) {
	var entered sync.WaitGroup
	release := make(chan struct{})
	rs := start(t, t.TempDir(), func(o *Options) {
		o.MaxConcurrency = 2
		o.MaxBodyBytes = 1024
	}, func(s *Server) error {
		s.beforeHandler = func(r *http.Request) {
			if r.Header.Get("X-Test-Hold") != "" {
				entered.Done()
				<-release
			}
		}
		return nil
	})
	c := newClient(t, rs.url)
	createDocs(c, "docs", 4)
	entered.Add(2)
	done := make(chan int, 2)
	for i := 0; i < 2; i++ {
		go func() {
			code, _, _ := c.do("GET", "/v1/collections/docs", nil, "X-Test-Hold", "1")
			done <- code
		}()
	}
	entered.Wait()
	code, h, b := c.do("GET", "/v1/collections", nil)
	if code != http.StatusTooManyRequests || h.Get("Retry-After") == "" || checkErrShape(t, b).Status != StatusTooMany {
		t.Fatalf("over the limit: %d %s", code, b)
	}
	// Health and metrics are not limited.
	c.must(http.StatusOK, "GET", "/healthz", nil, nil)
	close(release)
	for i := 0; i < 2; i++ {
		if code := <-done; code != http.StatusOK {
			t.Fatalf("held request: %d", code)
		}
	}
	c.must(http.StatusOK, "GET", "/v1/collections", nil, nil)

	big := `{"documents":[{"id":"x","content":"` + strings.Repeat("z", 2048) + `","trust":"authoritative"}]}`
	code, _, b = c.do("POST", "/v1/collections/docs/documents", big)
	if code != http.StatusRequestEntityTooLarge || checkErrShape(t, b).Status != StatusTooLarge {
		t.Fatalf("big body: %d %s", code, b)
	}
	// Without Content-Length (chunked) the limit holds too.
	req := c.req("POST", "/v1/collections/docs/documents", nil)
	req.Body = io.NopCloser(strings.NewReader(big))
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked big body: %d", resp.StatusCode)
	}
	if e := epochOf(t, c, "docs"); e != 0 {
		t.Fatalf("rejected bodies wrote: epoch %d", e)
	}
	_ = time.Second
}

// TestBM25StatsDoNotLeakAcrossKeys: in a collection that is not
// multi_tenant, alice's lexical score for a term does not move when bob
// (another API key, another namespace) writes documents full of it; the
// admin key, which reads both namespaces, does see it move (self-check).
func TestBM25StatsDoNotLeakAcrossKeys(t *testing.T) {
	_, admin, alice, bob, _ := tenants(t)
	alice.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(
		mkDoc("a1", "merger talks with acme continue", "tenant-a/", vec(1, 0, 0, 0)),
		mkDoc("a2", "quarterly numbers look fine", "tenant-a/", vec(0, 1, 0, 0))), nil)
	score := func(c *client) float64 {
		t.Helper()
		var res contract.Result
		c.must(http.StatusOK, "POST", "/v1/collections/docs/search", map[string]any{"text": "merger acme", "mode": "lexical", "top_k": 50}, &res)
		for _, h := range res.Hits {
			if h.DocID == "a1" {
				return h.Explain.LexicalScore
			}
		}
		t.Fatalf("a1 not found among %d hits", len(res.Hits))
		return 0
	}
	s0, admin0 := score(alice), score(admin)
	var docs []contract.Document
	for i := range 30 {
		docs = append(docs, mkDoc(fmt.Sprintf("b%d", i), "merger acme merger probe", "tenant-b/", vec(0, 0, 1, 0)))
	}
	bob.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(docs...), nil)
	if s1 := score(alice); s1 != s0 {
		t.Fatalf("alice's score moved after bob's writes: %v → %v", s0, s1)
	}
	if admin1 := score(admin); admin1 == admin0 {
		t.Fatal("the admin's score did not move either: the test cannot see a leak")
	}
}
