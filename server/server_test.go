package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/verify"
)

// ---- harness ----

// running is a server started by Run on a loopback listener.
type running struct {
	url    string
	srv    *Server
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// start runs the server (the same Run that `searchd serve` calls) over dir.
func start(t testing.TB, dir string, mod func(*Options), setup ...func(*Server) error) *running {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{DataDir: dir, Logger: quietLogger()}
	if mod != nil {
		mod(&o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rs := &running{url: "http://" + ln.Addr().String(), cancel: cancel, done: make(chan error, 1)}
	ready := make(chan struct{})
	setup = append(setup, func(s *Server) error { rs.srv = s; close(ready); return nil })
	go func() { rs.done <- Run(ctx, ln, o, setup...) }()
	select {
	case <-ready:
	case err := <-rs.done:
		t.Fatalf("Run: %v", err)
	}
	t.Cleanup(func() { rs.stop(t) })
	return rs
}

// stop shuts the server down (once) and returns Run's error.
func (rs *running) stop(t testing.TB) error {
	rs.once.Do(func() {
		rs.cancel()
		select {
		case rs.err = <-rs.done:
		case <-time.After(30 * time.Second):
			rs.err = fmt.Errorf("Run did not return")
		}
	})
	return rs.err
}

// client sends requests to a running server.
type client struct {
	t    testing.TB
	base string
	hc   *http.Client
	key  string
}

func newClient(t testing.TB, base string) *client {
	return &client{t: t, base: base, hc: &http.Client{Timeout: 30 * time.Second}}
}

func (c *client) with(key string) *client {
	d := *c
	d.key = key
	return &d
}

// do sends a request. body: nil (none), string or []byte (raw), anything
// else JSON-encoded. hdr: alternating header names and values.
func (c *client) do(method, path string, body any, hdr ...string) (int, http.Header, []byte) {
	c.t.Helper()
	req := c.req(method, path, body, hdr...)
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: reading: %v", method, path, err)
	}
	return resp.StatusCode, resp.Header, b
}

func (c *client) req(method, path string, body any, hdr ...string) *http.Request {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		switch b := body.(type) {
		case string:
			rd = strings.NewReader(b)
		case []byte:
			rd = bytes.NewReader(b)
		default:
			j, err := json.Marshal(b)
			if err != nil {
				c.t.Fatal(err)
			}
			rd = bytes.NewReader(j)
		}
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return req
}

// must sends a request and fails unless the status is want; it decodes the
// body into out when out is non-nil.
func (c *client) must(want int, method, path string, body any, out any, hdr ...string) http.Header {
	c.t.Helper()
	code, h, b := c.do(method, path, body, hdr...)
	if code != want {
		c.t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatalf("%s %s: decoding %s: %v", method, path, b, err)
		}
	}
	return h
}

// errBody is the error shape.
type errBody struct {
	Status     string                `json:"status"`
	ErrorCount int                   `json:"error_count"`
	Errors     []contract.FieldError `json:"errors"`
}

// checkErrShape decodes an error body strictly and checks its invariants.
func checkErrShape(t testing.TB, b []byte) errBody {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var e errBody
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("error body %s: %v", b, err)
	}
	if e.Status == "" || e.ErrorCount != len(e.Errors) || e.ErrorCount < 1 {
		t.Fatalf("error body %s: bad shape", b)
	}
	for _, fe := range e.Errors {
		if fe.Loc == nil || fe.ErrorType == "" || fe.Message == "" {
			t.Fatalf("error body %s: incomplete field error", b)
		}
	}
	// Every field is present in the raw JSON (input_value may be null).
	var raw struct {
		Errors []map[string]json.RawMessage `json:"errors"`
	}
	_ = json.Unmarshal(b, &raw)
	for _, m := range raw.Errors {
		for _, k := range []string{"loc", "input_value", "error_type", "message", "expected_domain"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("error body %s: field %q missing", b, k)
			}
		}
	}
	return e
}

func vec(xs ...float32) []float32 { return xs }

func mkDoc(id, content, ns string, v []float32) contract.Document {
	return contract.Document{ID: id, Content: content, Namespace: ns, Vector: v, Trust: contract.Authoritative}
}

func upsertBody(docs ...contract.Document) map[string]any {
	return map[string]any{"documents": docs}
}

func createDocs(c *client, name string, dim int) {
	c.t.Helper()
	c.must(http.StatusCreated, "POST", "/v1/collections", map[string]any{
		"name": name, "options": map[string]any{"dim": dim, "metric": "cosine", "analyzer": "prose"},
	}, nil)
}

func searchIDs(t testing.TB, c *client, col string, q any) []string {
	t.Helper()
	var res contract.Result
	c.must(http.StatusOK, "POST", "/v1/collections/"+col+"/search", q, &res)
	ids := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		ids[i] = h.DocID
	}
	return ids
}

func epochOf(t testing.TB, c *client, col string) uint64 {
	t.Helper()
	var v CollectionView
	c.must(http.StatusOK, "GET", "/v1/collections/"+col, nil, &v)
	return v.Epoch
}

// ---- end to end ----

func TestEndToEndRestart(t *testing.T) {
	dir := t.TempDir()
	rs := start(t, dir, nil)
	c := newClient(t, rs.url)
	createDocs(c, "docs", 4)
	code, _, b := c.do("POST", "/v1/collections", map[string]any{"name": "docs", "options": map[string]any{"dim": 4}})
	if code != http.StatusConflict || checkErrShape(t, b).Status != StatusConflict {
		t.Fatalf("duplicate create: %d %s", code, b)
	}
	var up UpsertResponse
	c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(
		mkDoc("a", "the quick brown fox jumps", "", vec(1, 0, 0, 0)),
		mkDoc("b", "a lazy dog sleeps in the sun", "", vec(0, 1, 0, 0)),
		mkDoc("c", "foxes and dogs are friends", "", vec(0, 0, 1, 0)),
	), &up)
	if up.Count != 3 || up.Epoch == 0 || len(up.VersionHashes) != 3 {
		t.Fatalf("upsert response %+v", up)
	}
	if got := searchIDs(t, c, "docs", map[string]any{"text": "quick", "mode": "lexical", "top_k": 5}); len(got) != 1 || got[0] != "a" {
		t.Fatalf("lexical quick: %v", got)
	}
	if got := searchIDs(t, c, "docs", map[string]any{"vector": vec(0, 0.1, 1, 0), "top_k": 2}); len(got) != 2 || got[0] != "c" || got[1] != "b" {
		t.Fatalf("dense: %v", got)
	}
	var d contract.Document
	h := c.must(http.StatusOK, "GET", "/v1/collections/docs/documents/b", nil, &d)
	if d.ID != "b" || d.Content != "a lazy dog sleeps in the sun" || h.Get("ETag") != `"`+up.VersionHashes["b"]+`"` {
		t.Fatalf("get b: %+v etag %q", d, h.Get("ETag"))
	}
	var del DeleteResponse
	c.must(http.StatusOK, "POST", "/v1/collections/docs/documents/delete", map[string]any{"ids": []string{"a"}}, &del)
	if del.Epoch <= up.Epoch || del.Count != 1 {
		t.Fatalf("delete %+v", del)
	}
	c.must(http.StatusNotFound, "GET", "/v1/collections/docs/documents/a", nil, nil)
	if got := searchIDs(t, c, "docs", map[string]any{"text": "quick", "mode": "lexical"}); len(got) != 0 {
		t.Fatalf("quick after delete: %v", got)
	}
	if err := rs.stop(t); err != nil {
		t.Fatalf("shutdown: %v", err)
	}

	rs2 := start(t, dir, nil)
	c2 := newClient(t, rs2.url)
	if e := epochOf(t, c2, "docs"); e != del.Epoch {
		t.Fatalf("epoch after restart %d, want %d", e, del.Epoch)
	}
	if got := searchIDs(t, c2, "docs", map[string]any{"text": "quick", "mode": "lexical"}); len(got) != 0 {
		t.Fatalf("deleted doc back after restart: %v", got)
	}
	if got := searchIDs(t, c2, "docs", map[string]any{"text": "sleeps sun", "mode": "lexical"}); len(got) != 1 || got[0] != "b" {
		t.Fatalf("dog after restart: %v", got)
	}
	if got := searchIDs(t, c2, "docs", map[string]any{"vector": vec(1, 0, 0.5, 0), "top_k": 5}); strings.Join(got, ",") != "c,b" {
		t.Fatalf("dense after restart: %v", got)
	}
	c2.must(http.StatusNotFound, "GET", "/v1/collections/docs/documents/a", nil, nil)
	c2.must(http.StatusOK, "GET", "/v1/collections/docs/documents/c", nil, nil)
	c2.must(http.StatusOK, "DELETE", "/v1/collections/docs", nil, nil)
	c2.must(http.StatusNotFound, "GET", "/v1/collections/docs", nil, nil)
}

func TestIfMatch(t *testing.T) {
	rs := start(t, t.TempDir(), nil)
	c := newClient(t, rs.url)
	createDocs(c, "docs", 4)
	var up UpsertResponse
	c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("a", "one", "", nil)), &up)
	h1 := up.VersionHashes["a"]
	wrong := strings.Repeat("0", 64)
	code, _, b := c.do("POST", "/v1/collections/docs/documents", upsertBody(mkDoc("a", "two", "", nil)), "If-Match", `"`+wrong+`"`)
	if code != http.StatusPreconditionFailed || checkErrShape(t, b).Status != StatusPrecondition {
		t.Fatalf("wrong If-Match: %d %s", code, b)
	}
	var d contract.Document
	c.must(http.StatusOK, "GET", "/v1/collections/docs/documents/a", nil, &d)
	if d.Content != "one" {
		t.Fatalf("412 changed the document: %q", d.Content)
	}
	c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("a", "two", "", nil)), &up, "If-Match", `"`+h1+`"`)
	// Body if_match: "" = must not exist.
	code, _, _ = c.do("POST", "/v1/collections/docs/documents", map[string]any{
		"documents": []contract.Document{mkDoc("a", "three", "", nil)}, "if_match": map[string]string{"a": ""}})
	if code != http.StatusPreconditionFailed {
		t.Fatalf("if_match absent on existing id: %d", code)
	}
	c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", map[string]any{
		"documents": []contract.Document{mkDoc("new", "x", "", nil)}, "if_match": map[string]string{"new": ""}}, nil)
}

// ---- bad input ----

func TestBadInputTable(t *testing.T) {
	root := t.TempDir()
	rs := start(t, t.TempDir(), func(o *Options) {
		o.MaxBodyBytes = 64 << 10
		o.IndexRoots = []string{root}
	})
	c := newClient(t, rs.url)
	createDocs(c, "docs", 4)
	c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(
		mkDoc("a", "alpha beta", "", vec(1, 0, 0, 0)), mkDoc("b", "gamma delta", "", vec(0, 1, 0, 0))), nil)
	before := epochOf(t, c, "docs")
	snapshot := func() string {
		var parts []string
		for _, id := range []string{"a", "b"} {
			_, _, b := c.do("GET", "/v1/collections/docs/documents/"+id, nil)
			parts = append(parts, string(b))
		}
		var l ListResponse
		c.must(http.StatusOK, "GET", "/v1/collections/docs/documents", nil, &l)
		parts = append(parts, fmt.Sprint(len(l.Documents)))
		return strings.Join(parts, "|")
	}
	snap := snapshot()

	docJSON := `{"id":"x","content":"c","trust":"authoritative"}`
	up := "/v1/collections/docs/documents"
	se := "/v1/collections/docs/search"
	big := `{"documents":[{"id":"x","content":"` + strings.Repeat("a", 100<<10) + `","trust":"authoritative"}]}`
	cases := []struct {
		name         string
		method, path string
		body         string
		hdr          []string
		code         int
		status       string
		loc          string // fmt of the first error's loc, "" = any
	}{
		{"malformed json", "POST", up, `{"documents": [`, nil, 400, StatusValidation, ""},
		{"truncated json", "POST", up, `{"documents": [{"id":"x","content":"c","tru`, nil, 400, StatusValidation, ""},
		{"not json", "POST", up, `hello`, nil, 400, StatusValidation, ""},
		{"trailing data", "POST", up, `{"documents":[` + docJSON + `]} {}`, nil, 400, StatusValidation, ""},
		{"unknown top-level field", "POST", up, `{"documents":[` + docJSON + `],"bogus":1}`, nil, 400, StatusValidation, "[body bogus]"},
		{"unknown document field", "POST", up, `{"documents":[{"id":"x","content":"c","trust":"authoritative","colour":"red"}]}`, nil, 400, StatusValidation, "[documents 0 colour]"},
		{"wrong type id", "POST", up, `{"documents":[{"id":7,"content":"c","trust":"authoritative"}]}`, nil, 400, StatusValidation, ""},
		{"wrong type documents", "POST", up, `{"documents":"many"}`, nil, 400, StatusValidation, ""},
		{"missing documents", "POST", up, `{}`, nil, 400, StatusValidation, "[documents]"},
		{"empty documents", "POST", up, `{"documents":[]}`, nil, 400, StatusValidation, "[documents]"},
		{"empty body", "POST", up, ``, nil, 400, StatusValidation, ""},
		{"wrong dim", "POST", up, `{"documents":[{"id":"x","content":"c","vector":[1,2,3],"trust":"authoritative"}]}`, nil, 400, StatusValidation, "[documents 0 vector]"},
		{"NaN string in vector", "POST", up, `{"documents":[{"id":"x","content":"c","vector":[1,"NaN",0,0],"trust":"authoritative"}]}`, nil, 400, StatusValidation, ""},
		{"Infinity literal", "POST", up, `{"documents":[{"id":"x","content":"c","vector":[1,Infinity,0,0],"trust":"authoritative"}]}`, nil, 400, StatusValidation, ""},
		{"huge number overflows float32", "POST", up, `{"documents":[{"id":"x","content":"c","vector":[1e39,0,0,0],"trust":"authoritative"}]}`, nil, 400, StatusValidation, ""},
		{"invalid utf8 content", "POST", up, "{\"documents\":[{\"id\":\"x\",\"content\":\"bad \xff\xfe here\",\"trust\":\"authoritative\"}]}", nil, 400, StatusValidation, "[body documents 0 content]"},
		{"invalid utf8 id", "POST", up, "{\"documents\":[{\"id\":\"x\xc3\",\"content\":\"c\",\"trust\":\"authoritative\"}]}", nil, 400, StatusValidation, "[body documents 0 id]"},
		{"invalid utf8 metadata key", "POST", up, "{\"documents\":[{\"id\":\"x\",\"content\":\"c\",\"metadata\":{\"k\xff\":\"v\"},\"trust\":\"authoritative\"}]}", nil, 400, StatusValidation, "[body documents 0 metadata k\ufffd]"},
		{"duplicate id in batch", "POST", up, `{"documents":[` + docJSON + `,` + docJSON + `]}`, nil, 400, StatusValidation, ""},
		{"missing trust", "POST", up, `{"documents":[{"id":"x","content":"c"}]}`, nil, 400, StatusValidation, ""},
		{"source_uri traversal", "POST", up, `{"documents":[{"id":"x","content":"c","source_uri":"file:///a/../../etc/passwd","trust":"authoritative"}]}`, nil, 400, StatusValidation, "[documents 0 source_uri]"},
		{"source_uri encoded traversal", "POST", up, `{"documents":[{"id":"x","content":"c","source_uri":"file:///a/%2e%2e/etc/passwd","trust":"authoritative"}]}`, nil, 400, StatusValidation, "[documents 0 source_uri]"},
		{"source_uri relative", "POST", up, `{"documents":[{"id":"x","content":"c","source_uri":"file:etc/passwd","trust":"authoritative"}]}`, nil, 400, StatusValidation, "[documents 0 source_uri]"},
		{"source_uri remote host", "POST", up, `{"documents":[{"id":"x","content":"c","source_uri":"file://evil/etc/passwd","trust":"authoritative"}]}`, nil, 400, StatusValidation, "[documents 0 source_uri]"},
		{"bad If-Match", "POST", up, `{"documents":[` + docJSON + `]}`, []string{"If-Match", "nope"}, 400, StatusValidation, "[header If-Match]"},
		{"If-Match on a batch", "POST", up, `{"documents":[` + docJSON + `,{"id":"y","content":"c","trust":"authoritative"}]}`, []string{"If-Match", strings.Repeat("a", 64)}, 400, StatusValidation, "[header If-Match]"},
		{"oversized body", "POST", up, big, nil, 413, StatusTooLarge, ""},
		{"wrong content type", "POST", up, `{"documents":[` + docJSON + `]}`, []string{"Content-Type", "text/plain"}, 415, StatusUnsupportedMedia, ""},
		{"latin1 charset", "POST", up, `{"documents":[` + docJSON + `]}`, []string{"Content-Type", "application/json; charset=latin1"}, 415, StatusUnsupportedMedia, ""},
		{"unknown collection", "POST", "/v1/collections/nope/documents", `{"documents":[` + docJSON + `]}`, nil, 404, StatusNotFound, ""},
		{"bad idempotency key", "POST", up, `{"documents":[` + docJSON + `]}`, []string{"Idempotency-Key", "bad\tkey"}, 400, StatusValidation, "[header Idempotency-Key]"},

		{"top_k 0", "POST", se, `{"text":"alpha","top_k":0}`, nil, 400, StatusValidation, "[query top_k]"},
		{"top_k 1e6", "POST", se, `{"text":"alpha","top_k":1000000}`, nil, 400, StatusValidation, "[query top_k]"},
		{"negative budget", "POST", se, `{"text":"alpha","budget_ms":-5}`, nil, 400, StatusValidation, "[query budget_ms]"},
		{"query wrong dim", "POST", se, `{"vector":[1,0]}`, nil, 400, StatusValidation, ""},
		{"query NaN", "POST", se, `{"vector":[1,0,"NaN",0]}`, nil, 400, StatusValidation, ""},
		{"query unknown field", "POST", se, `{"text":"alpha","principal":"root"}`, nil, 400, StatusValidation, "[query principal]"},
		{"query invalid utf8", "POST", se, "{\"text\":\"al\xffpha\"}", nil, 400, StatusValidation, "[body text]"},
		{"query empty", "POST", se, `{}`, nil, 400, StatusValidation, ""},
		{"query no body", "POST", se, ``, nil, 400, StatusValidation, ""},
		{"query bad mode", "POST", se, `{"text":"alpha","mode":"psychic"}`, nil, 400, StatusValidation, ""},
		{"dense text without embedder", "POST", se, `{"text":"alpha","mode":"dense"}`, nil, 400, StatusValidation, ""},

		{"delete empty ids", "POST", "/v1/collections/docs/documents/delete", `{"ids":[]}`, nil, 400, StatusValidation, "[body ids]"},
		{"delete empty id", "POST", "/v1/collections/docs/documents/delete", `{"ids":[""]}`, nil, 400, StatusValidation, "[body ids 0]"},
		{"list limit 0", "GET", "/v1/collections/docs/documents?limit=0", ``, nil, 400, StatusValidation, "[query limit]"},
		{"list limit junk", "GET", "/v1/collections/docs/documents?limit=ten", ``, nil, 400, StatusValidation, "[query limit]"},
		{"list bad cursor", "GET", "/v1/collections/docs/documents?cursor=abc.def", ``, nil, 400, StatusValidation, "[query cursor]"},
		{"list unknown param", "GET", "/v1/collections/docs/documents?sort=desc", ``, nil, 400, StatusValidation, "[query sort]"},

		{"create bad name", "POST", "/v1/collections", `{"name":"../x","options":{"dim":4}}`, nil, 400, StatusValidation, "[body name]"},
		{"create bad dim", "POST", "/v1/collections", `{"name":"y","options":{"dim":0}}`, nil, 400, StatusValidation, "[body options]"},
		{"create unknown option", "POST", "/v1/collections", `{"name":"y","options":{"dim":4,"shards":3}}`, nil, 400, StatusValidation, ""},

		{"index path traversal", "POST", "/v1/jobs", `{"kind":"index","collection":"code","path":"` + root + `/../etc"}`, nil, 400, StatusValidation, "[body path]"},
		{"index relative path", "POST", "/v1/jobs", `{"kind":"index","collection":"code","path":"etc"}`, nil, 400, StatusValidation, "[body path]"},
		{"index outside roots", "POST", "/v1/jobs", `{"kind":"index","collection":"code","path":"/etc"}`, nil, 400, StatusValidation, "[body path]"},
		{"index root prefix trick", "POST", "/v1/jobs", `{"kind":"index","collection":"code","path":"` + root + `x"}`, nil, 400, StatusValidation, "[body path]"},
		{"unknown job kind", "POST", "/v1/jobs", `{"kind":"explode","collection":"docs"}`, nil, 400, StatusValidation, "[body kind]"},
		{"flush missing collection", "POST", "/v1/jobs", `{"kind":"flush","collection":"nope"}`, nil, 404, StatusNotFound, ""},
		{"unknown job", "GET", "/v1/jobs/deadbeef", ``, nil, 404, StatusNotFound, ""},

		{"method not allowed", "PUT", "/v1/collections", `{}`, nil, 405, StatusMethodNotAllowed, ""},
		{"unknown route", "GET", "/v2/everything", ``, nil, 404, StatusNotFound, ""},
		{"missing document", "GET", "/v1/collections/docs/documents/zzz", ``, nil, 404, StatusNotFound, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = []byte(tc.body)
			}
			code, h, b := c.do(tc.method, tc.path, body, tc.hdr...)
			if code != tc.code {
				t.Fatalf("status %d, want %d: %s", code, tc.code, b)
			}
			if ct := h.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("content type %q", ct)
			}
			e := checkErrShape(t, b)
			if e.Status != tc.status {
				t.Fatalf("status %q, want %q: %s", e.Status, tc.status, b)
			}
			if tc.loc != "" {
				found := false
				for _, fe := range e.Errors {
					if fmt.Sprint(fe.Loc) == tc.loc {
						found = true
					}
				}
				if !found {
					t.Fatalf("no error at loc %s: %s", tc.loc, b)
				}
			}
			if code == 405 && h.Get("Allow") == "" {
				t.Fatalf("405 without Allow")
			}
		})
	}
	c.must(http.StatusOK, "GET", "/healthz", nil, nil)
	if e := epochOf(t, c, "docs"); e != before {
		t.Fatalf("bad input changed the epoch: %d → %d", before, e)
	}
	if s := snapshot(); s != snap {
		t.Fatalf("bad input changed stored data:\n%s\n%s", snap, s)
	}
	var cl struct{ Collections []CollectionView }
	c.must(http.StatusOK, "GET", "/v1/collections", nil, &cl)
	if len(cl.Collections) != 1 {
		t.Fatalf("bad input created collections: %+v", cl)
	}
}

// ---- OpenAPI ----

func TestOpenAPIMatchesRoutes(t *testing.T) {
	// The examples' file:// sources live under /repo: a verify root here.
	repo := t.TempDir()
	rs := start(t, t.TempDir(), func(o *Options) {
		o.IndexRoots = []string{"/srv/code"}
		o.VerifyRoots = []verify.Root{{Namespace: "*", Dir: repo}}
	}, enableMemory)
	c := newClient(t, rs.url)
	var spec struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]map[string]struct {
			RequestBody *struct {
				Content map[string]struct {
					Example json.RawMessage `json:"example"`
				} `json:"content"`
			} `json:"requestBody"`
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	h := c.must(http.StatusOK, "GET", "/v1/openapi.json", nil, &spec)
	if !strings.HasPrefix(spec.OpenAPI, "3.0") || h.Get("Content-Type") != "application/json" {
		t.Fatalf("spec version %q", spec.OpenAPI)
	}
	specPath := func(pattern string) string { return strings.ReplaceAll(pattern, "...}", "}") }
	registered := map[string]bool{}
	for _, r := range rs.srv.Routes() {
		p := specPath(r.Pattern)
		key := strings.ToLower(r.Method) + " " + p
		registered[key] = true
		ops, ok := spec.Paths[p]
		if !ok {
			t.Errorf("route %s %s missing from the spec", r.Method, r.Pattern)
			continue
		}
		if _, ok := ops[strings.ToLower(r.Method)]; !ok {
			t.Errorf("route %s %s: method missing from the spec", r.Method, r.Pattern)
		}
	}
	type ex struct {
		method, path string
		body         []byte
	}
	var examples []ex
	for p, ops := range spec.Paths {
		for m, op := range ops {
			if !registered[m+" "+p] {
				t.Errorf("spec operation %s %s has no handler", m, p)
			}
			if len(op.Responses) == 0 {
				t.Errorf("spec operation %s %s lists no responses", m, p)
			}
			if op.RequestBody != nil {
				e := op.RequestBody.Content["application/json"].Example
				if len(e) == 0 {
					t.Errorf("spec operation %s %s: request body without an example", m, p)
					continue
				}
				examples = append(examples, ex{strings.ToUpper(m), p, e})
			}
		}
	}
	// Run the examples through the real handlers: creating the collection
	// first, the rest against it.
	sort.Slice(examples, func(i, j int) bool {
		return (examples[i].path == "/v1/collections") && examples[j].path != "/v1/collections" ||
			(examples[i].path == "/v1/collections") == (examples[j].path == "/v1/collections") && examples[i].path < examples[j].path
	})
	if len(examples) < 5 {
		t.Fatalf("only %d examples", len(examples))
	}
	for _, e := range examples {
		p := strings.ReplaceAll(e.path, "{name}", "docs")
		body := bytes.ReplaceAll(e.body, []byte(`"file:///repo/`), []byte(`"file://`+repo+`/`))
		code, _, b := c.do(e.method, p, body)
		if code < 200 || code > 299 {
			t.Errorf("example %s %s: status %d: %s", e.method, p, code, b)
		}
	}
}

func TestHealthzAndMetrics(t *testing.T) {
	rs := start(t, t.TempDir(), nil)
	c := newClient(t, rs.url)
	createDocs(c, "docs", 4)
	c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("a", "alpha", "", nil)), nil,
		"Idempotency-Key", "m1")
	c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("a", "alpha", "", nil)), nil,
		"Idempotency-Key", "m1")
	c.must(http.StatusOK, "GET", "/healthz", nil, nil)
	code, h, b := c.do("GET", "/metrics", nil)
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		t.Fatalf("metrics: %d %s", code, h.Get("Content-Type"))
	}
	for _, want := range []string{
		`strata_http_requests_total{code="200",route="POST /v1/collections/{name}/documents"} 2`,
		`strata_http_request_duration_seconds_bucket{code="201",route="POST /v1/collections"`,
		`strata_http_in_flight_requests 1`,
		`strata_idempotency_replays_total 1`,
		`strata_collection_epoch{collection="docs"} 1`,
		`strata_collection_live_docs{collection="docs"} 1`,
		`strata_store_read_only 0`,
		`strata_jobs{state="running"} 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// ---- shutdown ----

func TestGracefulShutdown(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	var slow *Server
	rs := start(t, t.TempDir(), func(o *Options) { o.ShutdownTimeout = 20 * time.Second }, func(s *Server) error {
		slow = s
		s.RegisterJobKind("sleep", func(_ *engine.DB, req JobRequest) (JobFunc, error) {
			return func(ctx context.Context, p *Progress) error {
				p.Logf("sleeping")
				<-ctx.Done()
				return ctx.Err()
			}, nil
		})
		s.beforeHandler = func(r *http.Request) {
			if r.Header.Get("X-Test-Slow") != "" {
				close(entered)
				<-release
			}
		}
		return nil
	})
	c := newClient(t, rs.url)
	createDocs(c, "docs", 4)
	c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("a", "alpha", "", nil)), nil)
	var jv JobView
	c.must(http.StatusAccepted, "POST", "/v1/jobs", map[string]any{"kind": "sleep"}, &jv)
	waitJob(t, c, jv.ID, JobRunning)

	type result struct {
		code int
		body []byte
	}
	got := make(chan result, 1)
	go func() {
		code, _, b := c.do("POST", "/v1/collections/docs/search", map[string]any{"text": "alpha"}, "X-Test-Slow", "1")
		got <- result{code, b}
	}()
	<-entered
	stopped := make(chan error, 1)
	go func() { stopped <- rs.stop(t) }()
	// The listener closes promptly; the in-flight request still completes.
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", strings.TrimPrefix(rs.url, "http://"), 200*time.Millisecond)
		if err != nil {
			break
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatal("listener still accepting during shutdown")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-stopped:
		t.Fatalf("Run returned (%v) before the in-flight request finished", err)
	default:
	}
	close(release)
	r := <-got
	if r.code != http.StatusOK {
		t.Fatalf("in-flight request: %d %s", r.code, r.body)
	}
	var res contract.Result
	if err := json.Unmarshal(r.body, &res); err != nil || len(res.Hits) != 1 {
		t.Fatalf("in-flight result %s", r.body)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Run: %v", err)
	}
	v, ok := slow.jobs.get(jv.ID)
	if !ok || v.State != JobInterrupted || !strings.Contains(v.Error, "shut down while the job was running") {
		t.Fatalf("running job after shutdown: %+v", v)
	}
	// The WAL was synced and the store closed: it reopens with the write.
	rs2 := start(t, rs.srv.o.DataDir, nil)
	c2 := newClient(t, rs2.url)
	if got := searchIDs(t, c2, "docs", map[string]any{"text": "alpha"}); len(got) != 1 {
		t.Fatalf("after restart: %v", got)
	}
	// The job store is durable: the job still reads interrupted.
	var after JobView
	c2.must(http.StatusOK, "GET", "/v1/jobs/"+jv.ID, nil, &after)
	if after.State != JobInterrupted || after.Error != v.Error || after.Kind != "sleep" {
		t.Fatalf("job after restart: %+v", after)
	}
}

func waitJob(t testing.TB, c *client, id string, want ...JobState) JobView {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var v JobView
		c.must(http.StatusOK, "GET", "/v1/jobs/"+id, nil, &v)
		for _, w := range want {
			if v.State == w {
				return v
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: state %s, want %v (log %v)", id, v.State, want, v.Log)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ---- jobs ----

func TestJobs(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "proj")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"a.go":      "package proj\n\n// FrobnicateWidget turns a widget inside out.\nfunc FrobnicateWidget() int { return 1 }\n",
		"README.md": "# Proj\n\nThe quux subsystem.\n",
	}
	for n, s := range files {
		if err := os.WriteFile(filepath.Join(src, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gate := make(chan struct{})
	rs := start(t, t.TempDir(), func(o *Options) { o.IndexRoots = []string{root} }, func(s *Server) error {
		s.RegisterJobKind("gate", func(_ *engine.DB, req JobRequest) (JobFunc, error) {
			return func(ctx context.Context, p *Progress) error {
				select {
				case <-gate:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}, nil
		})
		s.RegisterJobKind("note", CollectionJobParams(func(ctx context.Context, col *engine.Collection, p *Progress, o struct {
			Text string `json:"text"`
		}) error {
			p.Logf("note on %s: %s", col.Name(), o.Text)
			return nil
		}))
		return nil
	})
	c := newClient(t, rs.url)
	createDocs(c, "docs", 4)
	c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("a", "alpha", "", nil)), nil)

	var jv JobView
	// A kind with params: decoded strictly; unknown params are a 400.
	code, _, b := c.do("POST", "/v1/jobs", map[string]any{"kind": "note", "collection": "docs", "params": map[string]any{"txt": "x"}})
	if code != http.StatusBadRequest || !strings.Contains(string(b), `"loc":["params","txt"]`) {
		t.Fatalf("unknown param: %d %s", code, b)
	}
	code, _, b = c.do("POST", "/v1/jobs", map[string]any{"kind": "flush", "collection": "docs", "params": map[string]any{"x": 1}})
	if code != http.StatusBadRequest {
		t.Fatalf("params on a kind without params: %d %s", code, b)
	}
	c.must(http.StatusAccepted, "POST", "/v1/jobs", map[string]any{"kind": "note", "collection": "docs", "params": map[string]any{"text": "hello"}}, &jv)
	if v := waitJob(t, c, jv.ID, JobDone, JobFailed); v.State != JobDone || !strings.Contains(strings.Join(v.Log, "\n"), "note on docs: hello") {
		t.Fatalf("note job %+v", v)
	}

	c.must(http.StatusAccepted, "POST", "/v1/jobs", map[string]any{"kind": "flush", "collection": "docs"}, &jv)
	v := waitJob(t, c, jv.ID, JobDone, JobFailed)
	if v.State != JobDone || v.Progress != 1 || v.Finished == nil || len(v.Log) == 0 {
		t.Fatalf("flush job %+v", v)
	}
	var cv CollectionView
	c.must(http.StatusOK, "GET", "/v1/collections/docs", nil, &cv)
	if cv.Stats == nil || cv.Stats.WarmSegments != 1 || cv.Stats.LiveDocs != 1 {
		t.Fatalf("after flush: %+v", cv.Stats)
	}
	c.must(http.StatusAccepted, "POST", "/v1/jobs", map[string]any{"kind": "compact", "collection": "docs"}, &jv)
	if v := waitJob(t, c, jv.ID, JobDone, JobFailed); v.State != JobDone {
		t.Fatalf("compact job %+v", v)
	}

	// archive moves the warm segment to the cold tier: only a query that
	// asks for cold finds "a"; promote brings it back to warm.
	c.must(http.StatusAccepted, "POST", "/v1/jobs", map[string]any{"kind": "archive", "collection": "docs", "params": map[string]any{"oldest": 1}}, &jv)
	if v := waitJob(t, c, jv.ID, JobDone, JobFailed); v.State != JobDone {
		t.Fatalf("archive job %+v", v)
	}
	if got := searchIDs(t, c, "docs", map[string]any{"text": "alpha", "mode": "lexical"}); len(got) != 0 {
		t.Fatalf("archived doc found without tiers=cold: %v", got)
	}
	if got := searchIDs(t, c, "docs", map[string]any{"text": "alpha", "mode": "lexical", "tiers": []string{"hot", "warm", "cold"}}); len(got) != 1 || got[0] != "a" {
		t.Fatalf("cold search: %v", got)
	}
	c.must(http.StatusOK, "GET", "/v1/collections/docs", nil, &cv)
	if cv.Stats.WarmSegments != 0 {
		t.Fatalf("after archive: %+v", cv.Stats)
	}
	code, _, b = c.do("POST", "/v1/jobs", map[string]any{"kind": "promote", "collection": "docs", "params": map[string]any{"archive": 1}})
	if code != http.StatusBadRequest {
		t.Fatalf("promote with an unknown param: %d %s", code, b)
	}
	var archiveID uint64
	{
		col, err := rs.srv.db.Collection("docs")
		if err != nil {
			t.Fatal(err)
		}
		as := col.Archives()
		if len(as) != 1 {
			t.Fatalf("archives: %+v", as)
		}
		archiveID = as[0].ID
	}
	c.must(http.StatusAccepted, "POST", "/v1/jobs", map[string]any{"kind": "promote", "collection": "docs", "params": map[string]any{"archive_id": archiveID}}, &jv)
	if v := waitJob(t, c, jv.ID, JobDone, JobFailed); v.State != JobDone || v.Progress != 1 {
		t.Fatalf("promote job %+v", v)
	}
	if got := searchIDs(t, c, "docs", map[string]any{"text": "alpha", "mode": "lexical"}); len(got) != 1 || got[0] != "a" {
		t.Fatalf("promoted doc not found in warm: %v", got)
	}

	c.must(http.StatusAccepted, "POST", "/v1/jobs", map[string]any{"kind": "index", "collection": "code", "path": src}, &jv)
	v = waitJob(t, c, jv.ID, JobDone, JobFailed)
	if v.State != JobDone || v.Progress != 1 {
		t.Fatalf("index job %+v", v)
	}
	if got := searchIDs(t, c, "code", map[string]any{"text": "frobnicate widget", "mode": "lexical"}); len(got) == 0 || !strings.Contains(got[0], "a.go#L") {
		t.Fatalf("indexed search: %v", got)
	}

	// A symlink under the root that leads outside it passes the lexical
	// check but fails when the job resolves it.
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.go"), []byte("package secret\n\n// Secret is private.\nvar Secret = 1\n"), 0o644)
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	c.must(http.StatusAccepted, "POST", "/v1/jobs", map[string]any{"kind": "index", "collection": "code", "path": filepath.Join(root, "escape")}, &jv)
	v = waitJob(t, c, jv.ID, JobDone, JobFailed)
	if v.State != JobFailed || !strings.Contains(v.Error, "outside every index root") {
		t.Fatalf("symlink escape job %+v", v)
	}
	if got := searchIDs(t, c, "code", map[string]any{"text": "secret private", "mode": "lexical"}); len(got) != 0 {
		t.Fatalf("escaped files indexed: %v", got)
	}

	// Queue: a gate job holds the worker; a flush queued behind it is
	// cancelled before it runs; then the gate job is cancelled while running.
	var g, q JobView
	c.must(http.StatusAccepted, "POST", "/v1/jobs", map[string]any{"kind": "gate"}, &g)
	waitJob(t, c, g.ID, JobRunning)
	c.must(http.StatusAccepted, "POST", "/v1/jobs", map[string]any{"kind": "flush", "collection": "docs"}, &q)
	var qc JobView
	c.must(http.StatusOK, "POST", "/v1/jobs/"+q.ID+"/cancel", nil, &qc)
	if qc.State != JobCancelled || qc.Started != nil {
		t.Fatalf("queued cancel: %+v", qc)
	}
	c.must(http.StatusOK, "POST", "/v1/jobs/"+g.ID+"/cancel", nil, nil)
	if v := waitJob(t, c, g.ID, JobCancelled, JobDone, JobFailed); v.State != JobCancelled {
		t.Fatalf("running cancel: %+v", v)
	}
	code, _, b = c.do("POST", "/v1/jobs/"+g.ID+"/cancel", nil)
	if code != http.StatusConflict || checkErrShape(t, b).Status != StatusConflict {
		t.Fatalf("cancel finished job: %d %s", code, b)
	}
	var list struct{ Jobs []JobView }
	c.must(http.StatusOK, "GET", "/v1/jobs", nil, &list)
	if len(list.Jobs) != 9 {
		t.Fatalf("job list has %d jobs", len(list.Jobs))
	}
	close(gate)
}
