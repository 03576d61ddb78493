package server

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
)

// Regression tests for the review of `searchd serve` (tenancy leaks):
// H2, M1, M2, Low 2, Low 6, Low 8, H1 (source_roots), Low 12.

// tenants starts a keyed server with a collection "docs": alice and carol
// share tenant-a/, bob has tenant-b/, ops is admin.
func tenants(t *testing.T) (rs *running, admin, alice, bob, carol *client) {
	t.Helper()
	dir := t.TempDir()
	keysFile := filepath.Join(dir, "keys.json")
	if err := os.WriteFile(keysFile, []byte(`[
	 {"key":"key-a","principal":"alice","namespaces":["tenant-a/"]},
	 {"key":"key-c","principal":"carol","namespaces":["tenant-a/"]},
	 {"key":"key-b","principal":"bob","namespaces":["tenant-b/"]},
	 {"key":"key-admin","principal":"ops","admin":true}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := LoadAPIKeys(keysFile)
	if err != nil {
		t.Fatal(err)
	}
	rs = start(t, filepath.Join(dir, "data"), func(o *Options) { o.APIKeys = keys })
	anon := newClient(t, rs.url)
	admin = anon.with("key-admin")
	admin.must(http.StatusCreated, "POST", "/v1/collections", map[string]any{"name": "docs", "options": map[string]any{"dim": 4, "analyzer": "prose"}}, nil)
	return rs, admin, anon.with("key-a"), anon.with("key-b"), anon.with("key-c")
}

func docContent(t *testing.T, c *client, id string) string {
	t.Helper()
	var d contract.Document
	c.must(http.StatusOK, "GET", "/v1/collections/docs/documents/"+id, nil, &d)
	return d.Content
}

// withoutInput drops input_value from an error body, so two answers can be
// compared for what they reveal beyond the caller's own input.
func withoutInput(t *testing.T, b []byte) string {
	t.Helper()
	e := checkErrShape(t, b)
	for i := range e.Errors {
		e.Errors[i].InputValue = nil
	}
	out, _ := json.Marshal(e)
	return string(out)
}

// H2: if_match naming an id outside the batch is a 400 (whether or not the
// id exists anywhere), and no answer carries a stored version hash.
func TestIfMatchOutsideBatchRejected(t *testing.T) {
	_, admin, a, b, _ := tenants(t)
	secret := "alice private: merger with ACME on 2026-12-01"
	a.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("a-secret", secret, "tenant-a/", vec(1, 0, 0, 0))), nil)
	stored := engine.VersionHash([]byte(secret))
	e0 := epochOf(t, admin, "docs")
	var bodies []string
	for _, id := range []string{"a-secret", "nope"} {
		for _, h := range []string{strings.Repeat("0", 64), stored} {
			body := map[string]any{"documents": []contract.Document{mkDoc("b1", "bob stuff", "tenant-b/", vec(0, 1, 0, 0))},
				"if_match": map[string]string{id: h}}
			code, _, resp := b.do("POST", "/v1/collections/docs/documents", body)
			e := checkErrShape(t, resp)
			if code != http.StatusBadRequest || e.Status != StatusValidation || len(e.Errors) != 1 {
				t.Fatalf("if_match on %s outside the batch: %d %s", id, code, resp)
			}
			if got := e.Errors[0].Loc; len(got) != 3 || got[0] != "body" || got[1] != "if_match" || got[2] != id {
				t.Fatalf("loc %v, want [body if_match %s]", got, id)
			}
			if strings.Contains(string(resp), stored) && h != stored {
				t.Fatalf("answer carries the stored hash: %s", resp)
			}
			bodies = append(bodies, withoutInput(t, bytes.ReplaceAll(resp, []byte(id), []byte("ID"))))
		}
	}
	for _, x := range bodies[1:] {
		if x != bodies[0] {
			t.Fatalf("answers differ by existence or guess:\n%s\n%s", bodies[0], x)
		}
	}
	if epochOf(t, admin, "docs") != e0 {
		t.Fatal("a rejected batch wrote")
	}
	// The batch with a valid if_match for its own document still works.
	h := b.must(http.StatusOK, "POST", "/v1/collections/docs/documents", map[string]any{
		"documents": []contract.Document{mkDoc("b1", "bob stuff", "tenant-b/", vec(0, 1, 0, 0))}, "if_match": map[string]string{"b1": ""}}, nil)
	if h.Get("ETag") == "" {
		t.Fatal("no ETag")
	}
}

// H2 + M2: a precondition on an id held by a document the caller cannot
// read answers exactly as for an absent id (412 with the server's own
// message), whatever hash is guessed: no version-hash oracle.
func TestIfMatchHiddenAnswersAsMissing(t *testing.T) {
	_, admin, a, b, c := tenants(t)
	secret := "alice private"
	a.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("a-secret", secret, "tenant-a/", vec(1, 0, 0, 0))), nil)
	acl := mkDoc("a-acl", "alice only", "tenant-a/", vec(1, 0, 0, 0))
	acl.ACL = []string{"alice"}
	a.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(acl), nil)
	e0 := epochOf(t, admin, "docs")
	type probe struct {
		c      *client
		id, ns string
		hash   string
	}
	var probes []probe
	for _, h := range []string{strings.Repeat("0", 64), engine.VersionHash([]byte(secret)), engine.VersionHash([]byte("alice only"))} {
		probes = append(probes,
			probe{b, "a-secret", "tenant-b/", h}, // another namespace
			probe{c, "a-acl", "tenant-a/", h},    // own namespace, ACL excludes carol
			probe{b, "never-existed", "tenant-b/", h})
	}
	var want string
	for _, p := range probes {
		body := map[string]any{"documents": []contract.Document{mkDoc(p.id, "probe", p.ns, vec(0, 1, 0, 0))},
			"if_match": map[string]string{p.id: p.hash}}
		code, _, resp := p.c.do("POST", "/v1/collections/docs/documents", body)
		e := checkErrShape(t, resp)
		if code != http.StatusPreconditionFailed || e.Status != StatusPrecondition || e.Errors[0].Message != "version mismatch for document at documents[0]" {
			t.Fatalf("%s with if_match %s: %d %s", p.id, p.hash[:8], code, resp)
		}
		for _, h := range []string{engine.VersionHash([]byte(secret)), engine.VersionHash([]byte("alice only"))} {
			if h != p.hash && strings.Contains(string(resp), h) {
				t.Fatalf("412 carries a stored hash: %s", resp)
			}
		}
		got := withoutInput(t, bytes.ReplaceAll(resp, []byte(p.id), []byte("ID")))
		if want == "" {
			want = got
		} else if got != want {
			t.Fatalf("hidden and absent ids answer differently:\n%s\n%s", want, got)
		}
	}
	if epochOf(t, admin, "docs") != e0 {
		t.Fatal("a 412 wrote")
	}
	// Open mode: a 412 names the document index, never the stored hash.
	rs := start(t, t.TempDir(), nil)
	o := newClient(t, rs.url)
	createDocs(o, "docs", 4)
	o.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("x", "one", "", nil), mkDoc("y", "two", "", nil)), nil)
	code, _, resp := o.do("POST", "/v1/collections/docs/documents", map[string]any{
		"documents": []contract.Document{mkDoc("x", "1", "", nil), mkDoc("y", "2", "", nil)},
		"if_match":  map[string]string{"x": engine.VersionHash([]byte("one")), "y": strings.Repeat("a", 64)}})
	e := checkErrShape(t, resp)
	if code != http.StatusPreconditionFailed || e.Errors[0].Message != "version mismatch for document at documents[1]" ||
		strings.Contains(string(resp), engine.VersionHash([]byte("two"))) {
		t.Fatalf("open-mode 412: %d %s", code, resp)
	}
	if got := e.Errors[0].Loc; len(got) != 3 || got[2] != "y" {
		t.Fatalf("open-mode 412 loc %v", got)
	}
}

// M2 + M1: an upsert of an id held by a document the caller cannot read
// (another namespace, or its ACL) gets one uniform 409 id_unavailable and
// changes nothing; a fresh id succeeds (the documented residual: ids are
// one key space per collection).
func TestTenancyIDUnavailableUniform(t *testing.T) {
	_, admin, a, b, c := tenants(t)
	a.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("file:///home/alice/acquisition.txt", "x", "tenant-a/", vec(1, 0, 0, 0))), nil)
	d := mkDoc("a-private", "alice only content", "tenant-a/", vec(1, 0, 0, 0))
	d.ACL = []string{"alice"}
	a.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(d), nil)
	e0 := epochOf(t, admin, "docs")
	var want string
	for _, p := range []struct {
		c      *client
		id, ns string
	}{{b, "file:///home/alice/acquisition.txt", "tenant-b/"}, {c, "a-private", "tenant-a/"}} {
		code, _, resp := p.c.do("POST", "/v1/collections/docs/documents", upsertBody(mkDoc(p.id, "overwrite", p.ns, vec(0, 1, 0, 0))))
		e := checkErrShape(t, resp)
		if code != http.StatusConflict || e.Errors[0].ErrorType != ErrTypeIDUnavailable {
			t.Fatalf("upsert of hidden %s: %d %s", p.id, code, resp)
		}
		// With an if_match "" (must not exist): the same answer.
		code2, _, resp2 := p.c.do("POST", "/v1/collections/docs/documents", map[string]any{
			"documents": []contract.Document{mkDoc(p.id, "overwrite", p.ns, vec(0, 1, 0, 0))}, "if_match": map[string]string{p.id: ""}})
		if code2 != code || string(resp2) != string(resp) {
			t.Fatalf("if_match \"\" changes the answer: %d %s", code2, resp2)
		}
		got := withoutInput(t, resp)
		if want == "" {
			want = got
		} else if got != want {
			t.Fatalf("namespace and ACL cases answer differently:\n%s\n%s", want, got)
		}
	}
	if epochOf(t, admin, "docs") != e0 {
		t.Fatal("a refused upsert wrote")
	}
	if got := docContent(t, a, "a-private"); got != "alice only content" {
		t.Fatalf("ACL doc overwritten: %q", got)
	}
	b.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("file:///home/alice/other.txt", "bob", "tenant-b/", vec(0, 1, 0, 0))), nil)
	// The owner may still overwrite its own document.
	a.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("a-private", "v2", "tenant-a/", vec(1, 0, 0, 0))), nil)
	if got := docContent(t, a, "a-private"); got != "v2" {
		t.Fatalf("owner overwrite: %q", got)
	}
}

// M1: a principal that the document's ACL does not name cannot delete it
// (batch or single), and the answer is that of an absent id.
func TestACLDeleteEnforced(t *testing.T) {
	_, admin, a, _, c := tenants(t)
	d := mkDoc("a-private", "alice only content", "tenant-a/", vec(1, 0, 0, 0))
	d.ACL = []string{"alice"}
	a.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(d, mkDoc("shared", "everyone in tenant-a", "tenant-a/", vec(0, 1, 0, 0))), nil)
	e0 := epochOf(t, admin, "docs")
	c.must(http.StatusNotFound, "GET", "/v1/collections/docs/documents/a-private", nil, nil)
	var hidden, absent DeleteResponse
	c.must(http.StatusOK, "POST", "/v1/collections/docs/documents/delete", map[string]any{"ids": []string{"a-private"}}, &hidden)
	c.must(http.StatusOK, "POST", "/v1/collections/docs/documents/delete", map[string]any{"ids": []string{"never-existed"}}, &absent)
	if hidden != absent || hidden.Count != 0 {
		t.Fatalf("delete of an ACL-hidden id %+v, of an absent id %+v", hidden, absent)
	}
	var one DeleteResponse
	c.must(http.StatusOK, "DELETE", "/v1/collections/docs/documents/a-private", nil, &one)
	if one.Count != 0 || epochOf(t, admin, "docs") != e0 {
		t.Fatalf("single delete of an ACL-hidden id: %+v", one)
	}
	if got := docContent(t, a, "a-private"); got != "alice only content" {
		t.Fatalf("after carol's deletes: %q", got)
	}
	// Mixed batch: only the readable document goes.
	var mixed DeleteResponse
	c.must(http.StatusOK, "POST", "/v1/collections/docs/documents/delete", map[string]any{"ids": []string{"a-private", "shared", "shared", "never-existed"}}, &mixed)
	if mixed.Count != 1 {
		t.Fatalf("mixed delete: %+v", mixed)
	}
	a.must(http.StatusNotFound, "GET", "/v1/collections/docs/documents/shared", nil, nil)
	a.must(http.StatusOK, "GET", "/v1/collections/docs/documents/a-private", nil, nil)
	// The owner can.
	a.must(http.StatusOK, "POST", "/v1/collections/docs/documents/delete", map[string]any{"ids": []string{"a-private"}}, &one)
	if one.Count != 1 {
		t.Fatalf("owner delete: %+v", one)
	}
	a.must(http.StatusNotFound, "GET", "/v1/collections/docs/documents/a-private", nil, nil)
}

// Low 2: with API keys /metrics needs an admin key; /healthz stays open
// and carries no per-collection data.
func TestMetricsNeedsAdminKey(t *testing.T) {
	rs, admin, a, _, _ := tenants(t)
	a.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("a1", "x", "tenant-a/", vec(1, 0, 0, 0))), nil)
	anon := newClient(t, rs.url)
	for _, tc := range []struct {
		c    *client
		code int
	}{{anon, 401}, {anon.with("wrong"), 401}, {a, 403}} {
		code, _, b := tc.c.do("GET", "/metrics", nil)
		if code != tc.code || strings.Contains(string(b), "strata_collection") {
			t.Fatalf("/metrics as %q: %d %.200s", tc.c.key, code, b)
		}
	}
	code, _, b := admin.do("GET", "/metrics", nil)
	if code != http.StatusOK || !strings.Contains(string(b), `strata_collection_live_docs{collection="docs"} 1`) {
		t.Fatalf("/metrics as admin: %d", code)
	}
	code, _, b = anon.do("GET", "/healthz", nil)
	if code != http.StatusOK || strings.TrimSpace(string(b)) != `{"status":"ok"}` {
		t.Fatalf("/healthz: %d %s", code, b)
	}
}

// /healthz on a failed store names no collection or file.
func TestHealthzNoDetail(t *testing.T) {
	dir := t.TempDir()
	db, err := engine.Open(dir, engine.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateCollection("secretcoll", engine.CollectionOptions{Dim: 4}); err != nil {
		t.Fatal(err)
	}
	s, err := New(db, Options{DataDir: dir, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptestServer(t, s)
	c := newClient(t, ts)
	db.Close()
	code, _, b := c.do("GET", "/healthz", nil)
	if code != http.StatusServiceUnavailable || strings.Contains(string(b), "secretcoll") || strings.Contains(string(b), dir) {
		t.Fatalf("healthz: %d %s", code, b)
	}
}

// Low 6: If-Match is part of the idempotency fingerprint, and a replay
// restores ETag (also after a restart).
func TestIdempotencyFingerprintAndETag(t *testing.T) {
	dir := t.TempDir()
	rs := start(t, dir, nil)
	c := newClient(t, rs.url)
	createDocs(c, "docs", 4)
	body := upsertBody(mkDoc("a", "one", "", nil))
	h1 := c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", body, nil, idemHeader, "k1")
	etag := h1.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	h2 := c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", body, nil, idemHeader, "k1")
	if h2.Get("Idempotent-Replayed") != "true" || h2.Get("ETag") != etag {
		t.Fatalf("replay: replayed=%q ETag %q, want %q", h2.Get("Idempotent-Replayed"), h2.Get("ETag"), etag)
	}
	// Same key and body, but a precondition: another request → 422.
	code, _, b := c.do("POST", "/v1/collections/docs/documents", body, idemHeader, "k1", "If-Match", strings.Repeat("0", 64))
	if code != http.StatusUnprocessableEntity || checkErrShape(t, b).Status != StatusIdempotencyReused {
		t.Fatalf("same key with If-Match: %d %s", code, b)
	}
	// A request with If-Match is replayed only with the same If-Match.
	body2 := upsertBody(mkDoc("a", "two", "", nil))
	im := strings.Trim(etag, `"`)
	h3 := c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", body2, nil, idemHeader, "k2", "If-Match", im)
	if h3.Get("Idempotent-Replayed") != "" {
		t.Fatal("fresh request replayed")
	}
	h4 := c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", body2, nil, idemHeader, "k2", "If-Match", im)
	if h4.Get("Idempotent-Replayed") != "true" || h4.Get("ETag") != h3.Get("ETag") {
		t.Fatalf("replay with If-Match: %v", h4)
	}
	code, _, _ = c.do("POST", "/v1/collections/docs/documents", body2, idemHeader, "k2")
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("replay without the If-Match it was made with: %d", code)
	}
	// Location of a created collection is replayed too.
	hc := c.must(http.StatusCreated, "POST", "/v1/collections", map[string]any{"name": "more", "options": map[string]any{"dim": 4}}, nil, idemHeader, "k3")
	// Across a restart.
	if err := rs.stop(t); err != nil {
		t.Fatal(err)
	}
	rs2 := start(t, dir, nil)
	c2 := newClient(t, rs2.url)
	h5 := c2.must(http.StatusOK, "POST", "/v1/collections/docs/documents", body, nil, idemHeader, "k1")
	if h5.Get("Idempotent-Replayed") != "true" || h5.Get("ETag") != etag {
		t.Fatalf("replay after restart: %v", h5)
	}
	h6 := c2.must(http.StatusCreated, "POST", "/v1/collections", map[string]any{"name": "more", "options": map[string]any{"dim": 4}}, nil, idemHeader, "k3")
	if h6.Get("Location") != hc.Get("Location") || h6.Get("Location") == "" {
		t.Fatalf("Location replay %q, want %q", h6.Get("Location"), hc.Get("Location"))
	}
}

// Low 8: open mode serves loopback Host names only (DNS rebinding);
// AllowedHosts adds names; with API keys the Host is not checked.
func TestOpenModeHostCheck(t *testing.T) {
	rs := start(t, t.TempDir(), func(o *Options) { o.AllowedHosts = []string{"search.internal"} })
	c := newClient(t, rs.url)
	_, port, _ := strings.Cut(strings.TrimPrefix(rs.url, "http://"), ":")
	for host, want := range map[string]int{
		"127.0.0.1:" + port:       200,
		"localhost:" + port:       200,
		"LOCALHOST":               200,
		"localhost.:" + port:      200,
		"[::1]:" + port:           200,
		"[::1]":                   200,
		"127.3.4.5":               200,
		"search.internal:7700":    200,
		"evil.example:" + port:    403,
		"evil.example":            403,
		"localhost.evil.example":  403,
		"127.0.0.1.evil.example":  403,
		"10.0.0.5:" + port:        403,
		"search.internal.evil.io": 403,
	} {
		for _, path := range []string{"/v1/collections", "/healthz", "/metrics"} {
			req := c.req("GET", path, nil)
			req.Host = host
			resp, err := c.hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("Host %q %s: %d, want %d", host, path, resp.StatusCode, want)
			}
		}
	}
	// Keyed mode: any Host (the key is the defence).
	dir := t.TempDir()
	keys := []APIKey{{Key: "k", Principal: "p", Namespaces: []string{"*"}}}
	rs2 := start(t, dir, func(o *Options) { o.APIKeys = keys })
	c2 := newClient(t, rs2.url).with("k")
	req := c2.req("GET", "/v1/collections", nil)
	req.Host = "search.example.com"
	resp, err := c2.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("keyed mode, public Host: %d", resp.StatusCode)
	}
	// Options validation.
	o := Options{DataDir: "x", AllowedHosts: []string{"", "a/b"}}
	o.EnsureDefaults()
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "AllowedHosts") {
		t.Fatalf("bad AllowedHosts accepted: %v", err)
	}
}

// H1: collection options show server-side paths (source_roots) to admins
// only.
func TestSourceRootsAdminOnly(t *testing.T) {
	_, admin, a, _, _ := tenants(t)
	root := t.TempDir()
	admin.must(http.StatusCreated, "POST", "/v1/collections", map[string]any{"name": "code",
		"options": map[string]any{"dim": 4, "on_stale": "reread", "source_roots": []string{root}}}, nil)
	for _, path := range []string{"/v1/collections", "/v1/collections/code"} {
		_, _, b := a.do("GET", path, nil)
		if strings.Contains(string(b), "source_roots") || strings.Contains(string(b), root) {
			t.Fatalf("tenant sees source_roots at %s: %s", path, b)
		}
		_, _, b = admin.do("GET", path, nil)
		if !strings.Contains(string(b), root) {
			t.Fatalf("admin does not see source_roots at %s: %s", path, b)
		}
	}
}

// Low 12: a promote job is validated at submission: archive_id missing or
// 0 is a 400, an id that is not a cold archive of the collection a 404,
// and nothing is queued.
func TestPromoteValidatedAtSubmission(t *testing.T) {
	rs := start(t, t.TempDir(), nil)
	c := newClient(t, rs.url)
	createDocs(c, "docs", 4)
	for _, tc := range []struct {
		params any
		code   int
		loc    string
	}{
		{nil, 400, `"loc":["body","params","archive_id"]`},
		{map[string]any{}, 400, `"loc":["body","params","archive_id"]`},
		{map[string]any{"archive_id": 0}, 400, `"loc":["body","params","archive_id"]`},
		{map[string]any{"archive_id": 7}, 404, `"loc":["body","params","archive_id"]`},
		{map[string]any{"archive_id": -1}, 400, `archive_id`},
	} {
		req := map[string]any{"kind": "promote", "collection": "docs"}
		if tc.params != nil {
			req["params"] = tc.params
		}
		code, _, b := c.do("POST", "/v1/jobs", req)
		checkErrShape(t, b)
		if code != tc.code || !strings.Contains(string(b), tc.loc) {
			t.Errorf("promote %v: %d %s", tc.params, code, b)
		}
	}
	code, _, b := c.do("POST", "/v1/jobs", map[string]any{"kind": "promote", "collection": "nope", "params": map[string]any{"archive_id": 1}})
	if code != http.StatusNotFound || !strings.Contains(string(b), `"collection"`) {
		t.Fatalf("promote on a missing collection: %d %s", code, b)
	}
	var jobs struct {
		Jobs []JobView `json:"jobs"`
	}
	c.must(http.StatusOK, "GET", "/v1/jobs", nil, &jobs)
	if len(jobs.Jobs) != 0 {
		t.Fatalf("rejected promotes queued jobs: %+v", jobs.Jobs)
	}
}

func httptestServer(t *testing.T, h http.Handler) string {
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// FuzzHostAllowed: the open-mode Host check never panics and admits only
// loopback hosts when AllowedHosts is empty.
func FuzzHostAllowed(f *testing.F) {
	for _, h := range []string{"localhost:7700", "127.0.0.1", "[::1]:1", "[::1]", "evil.example", "", ":", "[", "]", "[::ffff:127.0.0.1]:80",
		"localhost.", "127.0.0.1.nip.io", "0x7f000001", "2130706433", "[fe80::1%25lo]:80", "LocalHost:1"} {
		f.Add(h)
	}
	s := &Server{}
	f.Fuzz(func(t *testing.T, host string) {
		r := httptest.NewRequest("GET", "/healthz", nil)
		r.Host = host
		if !s.hostAllowed(r) {
			return
		}
		h := hostOnly(host)
		if ip := net.ParseIP(h); !strings.EqualFold(h, "localhost") && (ip == nil || !ip.IsLoopback()) {
			t.Fatalf("Host %q (%q) admitted", host, h)
		}
	})
}
