package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// lossyTransport performs each request and then, for keys with drops
// left, throws the response away and reports a network error: the server
// applied the request but the client never learned it.
type lossyTransport struct {
	base  http.RoundTripper
	mu    sync.Mutex
	drops map[string]int
	first map[string][]byte // the first (lost) response body per key
}

func (l *lossyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	key := req.Header.Get(idemHeader)
	l.mu.Lock()
	drop := l.drops[key] > 0
	if drop {
		l.drops[key]--
	}
	l.mu.Unlock()
	if !drop {
		return resp, nil
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	l.mu.Lock()
	if _, ok := l.first[key]; !ok {
		l.first[key] = b
	}
	l.mu.Unlock()
	return nil, errors.New("injected: response lost")
}

// retry sends the request until a response arrives (a client's retry loop
// with the same Idempotency-Key).
func retry(t *testing.T, c *client, method, path string, body any, hdr ...string) (int, http.Header, []byte, int) {
	t.Helper()
	for attempt := 1; attempt <= 10; attempt++ {
		resp, err := c.hc.Do(c.req(method, path, body, hdr...))
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusConflict && strings.Contains(string(b), "idempotency_in_flight") {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		return resp.StatusCode, resp.Header, b, attempt
	}
	t.Fatalf("%s %s: no response after 10 attempts", method, path)
	return 0, nil, nil, 0
}

func TestIdempotencyExactlyOnceUnderResponseLoss(t *testing.T) {
	dir := t.TempDir()
	rs := start(t, dir, nil)
	c := newClient(t, rs.url)
	createDocs(c, "docs", 4)
	e0 := epochOf(t, c, "docs")

	lt := &lossyTransport{base: http.DefaultTransport, drops: map[string]int{}, first: map[string][]byte{}}
	lossy := &client{t: t, base: rs.url, hc: &http.Client{Transport: lt, Timeout: 10 * time.Second}}
	n := 8
	if testing.Short() {
		n = 3
	}
	replies := map[string][]byte{}
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("up-%d", i)
		lt.drops[key] = 1 + i%3
		body := upsertBody(mkDoc(fmt.Sprintf("d%d", i), fmt.Sprintf("version one of doc %d", i), "", nil))
		code, h, b, attempts := retry(t, lossy, "POST", "/v1/collections/docs/documents", body, idemHeader, key)
		if code != http.StatusOK || attempts != 2+i%3 {
			t.Fatalf("%s: status %d after %d attempts: %s", key, code, attempts, b)
		}
		if h.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("%s: the answer after a lost response is not a replay", key)
		}
		if !bytes.Equal(b, lt.first[key]) {
			t.Fatalf("%s: replay differs from the lost response:\n%s\n%s", key, b, lt.first[key])
		}
		var up UpsertResponse
		mustUnmarshal(t, b, &up)
		if up.Epoch != e0+uint64(i)+1 {
			t.Fatalf("%s: epoch %d, want %d (applied more than once?)", key, up.Epoch, e0+uint64(i)+1)
		}
		replies[key] = b
	}
	if e := epochOf(t, c, "docs"); e != e0+uint64(n) {
		t.Fatalf("epoch %d after %d idempotent writes with retries, want %d", e, n, e0+uint64(n))
	}

	// A connection closed right after sending: the server still applies the
	// write (exactly once) and keeps the answer for the retry.
	e1 := epochOf(t, c, "docs")
	req := c.req("POST", "/v1/collections/docs/documents", upsertBody(mkDoc("tcp", "sent and gone", "", nil)), idemHeader, "tcp-1")
	conn, err := net.Dial("tcp", strings.TrimPrefix(rs.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	code, h, b, _ := retry(t, c, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("tcp", "sent and gone", "", nil)), idemHeader, "tcp-1")
	if code != http.StatusOK {
		t.Fatalf("retry after closed connection: %d %s", code, b)
	}
	var up UpsertResponse
	mustUnmarshal(t, b, &up)
	if up.Epoch != e1+1 || epochOf(t, c, "docs") != e1+1 {
		t.Fatalf("closed-connection write: epoch %d, collection %d, want %d", up.Epoch, epochOf(t, c, "docs"), e1+1)
	}
	_ = h

	// Same key, different body → 422; different path → 422; nothing applied.
	code, _, b = c.do("POST", "/v1/collections/docs/documents", upsertBody(mkDoc("d0", "something else", "", nil)), idemHeader, "up-0")
	if code != http.StatusUnprocessableEntity || checkErrShape(t, b).Status != StatusIdempotencyReused {
		t.Fatalf("reused key with another body: %d %s", code, b)
	}
	code, _, _ = c.do("POST", "/v1/collections/docs/documents/delete", map[string]any{"ids": []string{"d0"}}, idemHeader, "up-0")
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("reused key on another path: %d", code)
	}
	eBefore := epochOf(t, c, "docs")

	// Keys survive a restart: the replay is byte-identical and applies nothing.
	if err := rs.stop(t); err != nil {
		t.Fatal(err)
	}
	rs2 := start(t, dir, nil)
	c2 := newClient(t, rs2.url)
	code, h, b = c2.do("POST", "/v1/collections/docs/documents", upsertBody(mkDoc("d1", "version one of doc 1", "", nil)), idemHeader, "up-1")
	if code != http.StatusOK || h.Get("Idempotent-Replayed") != "true" || !bytes.Equal(b, replies["up-1"]) {
		t.Fatalf("replay after restart: %d replayed=%q\n%s\n%s", code, h.Get("Idempotent-Replayed"), b, replies["up-1"])
	}
	if e := epochOf(t, c2, "docs"); e != eBefore {
		t.Fatalf("replay after restart changed the epoch %d → %d", eBefore, e)
	}
}

func mustUnmarshal(t testing.TB, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
}

func TestIdempotencyInFlight409(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	rs := start(t, t.TempDir(), nil, func(s *Server) error {
		s.beforeHandler = func(r *http.Request) {
			if r.Header.Get("X-Test-Hold") != "" {
				close(entered)
				<-release
			}
		}
		return nil
	})
	c := newClient(t, rs.url)
	createDocs(c, "docs", 4)
	e0 := epochOf(t, c, "docs")
	body := upsertBody(mkDoc("a", "held", "", nil))
	type res struct {
		code int
		b    []byte
	}
	first := make(chan res, 1)
	go func() {
		code, _, b := c.do("POST", "/v1/collections/docs/documents", body, idemHeader, "k", "X-Test-Hold", "1")
		first <- res{code, b}
	}()
	<-entered
	code, h, b := c.do("POST", "/v1/collections/docs/documents", body, idemHeader, "k")
	if code != http.StatusConflict || h.Get("Retry-After") == "" {
		t.Fatalf("in-flight duplicate: %d %s", code, b)
	}
	if e := checkErrShape(t, b); e.Status != StatusConflict || e.Errors[0].ErrorType != "idempotency_in_flight" {
		t.Fatalf("in-flight body %s", b)
	}
	close(release)
	r := <-first
	if r.code != http.StatusOK {
		t.Fatalf("held request: %d %s", r.code, r.b)
	}
	code, h, b = c.do("POST", "/v1/collections/docs/documents", body, idemHeader, "k")
	if code != http.StatusOK || h.Get("Idempotent-Replayed") != "true" || !bytes.Equal(b, r.b) {
		t.Fatalf("after completion: %d %s", code, b)
	}
	if e := epochOf(t, c, "docs"); e != e0+1 {
		t.Fatalf("epoch %d, want %d", e, e0+1)
	}
	// A 4xx is final for its key too (replayed, not re-run).
	code, _, b1 := c.do("POST", "/v1/collections/docs/documents", `{"documents":[]}`, idemHeader, "bad")
	code2, h2, b2 := c.do("POST", "/v1/collections/docs/documents", `{"documents":[]}`, idemHeader, "bad")
	if code != 400 || code2 != 400 || h2.Get("Idempotent-Replayed") != "true" || !bytes.Equal(b1, b2) {
		t.Fatalf("4xx replay: %d %d %q", code, code2, h2.Get("Idempotent-Replayed"))
	}
}

func TestIdempotencyTTLAndPrune(t *testing.T) {
	dir := t.TempDir()
	rs := start(t, dir, func(o *Options) { o.IdempotencyTTL = 50 * time.Millisecond })
	c := newClient(t, rs.url)
	createDocs(c, "docs", 4)
	body := upsertBody(mkDoc("a", "x", "", nil))
	c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", body, nil, idemHeader, "ttl")
	e := epochOf(t, c, "docs")
	idemDir := filepath.Join(dir, "server", "idempotency")
	ents, _ := os.ReadDir(idemDir)
	if len(ents) != 1 {
		t.Fatalf("%d idempotency files, want 1", len(ents))
	}
	time.Sleep(80 * time.Millisecond)
	rs.srv.idem.prune()
	if ents, _ := os.ReadDir(idemDir); len(ents) != 0 {
		t.Fatalf("expired record not pruned: %d files", len(ents))
	}
	// After the window the key is new again: the write applies.
	h := c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", body, nil, idemHeader, "ttl")
	if h.Get("Idempotent-Replayed") != "" || epochOf(t, c, "docs") != e+1 {
		t.Fatalf("expired key replayed")
	}
}
