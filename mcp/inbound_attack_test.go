package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// deepCall is a tools/call whose filter argument nests n "not" objects: a
// model can emit it, and the SDK refuses to decode beyond 1000 levels.
func deepCall(id, n int) string {
	f := strings.Repeat(`{"not":`, n) + `{"exists":{"field":"lang"}}` + strings.Repeat(`}`, n)
	return `{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","filter":` + f + `}}}`
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestMCPStdioDeepMessage: a message nested deeper than the SDK decodes
// gets an invalid-request error carrying its id, and the session goes on
// (the SDK's transport alone ends the session, so the client loses the
// server to one tool argument).
func TestMCPStdioDeepMessage(t *testing.T) {
	root, db := fixture(t)
	s := newServer(t, db, root, nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- s.serveStream(ctx, inR, outW)
		outW.Close() // a session that ends fails the reads below
	}()
	go func() {
		io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`+"\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		io.WriteString(inW, deepCall(2, 1500)+"\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`+"\n")
	}()
	br := bufio.NewReader(outR)
	got := map[string]map[string]any{}
	for range 3 {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("session ended after %d answers: %v (%v)", len(got), err, got)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("answer is not JSON: %q", l)
		}
		got[string(mustJSON(m["id"]))] = m
	}
	e, _ := got["2"]["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32600) {
		t.Errorf("deep message: want an invalid-request error with id 2, got %v", got)
	}
	if got["3"]["result"] == nil {
		t.Errorf("tools/list after the deep message: %v", got["3"])
	}
	inW.Close()
	cancel()
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// TestMCPHTTPDeepMessage: over HTTP the same message gets a JSON-RPC
// error (not the SDK's plain-text 400), and depth 1000 still passes.
func TestMCPHTTPDeepMessage(t *testing.T) {
	root, db := fixture(t)
	ts := httptest.NewServer(newServer(t, db, root, nil).HTTPHandler(HTTPOptions{Authenticate: bearer}))
	t.Cleanup(ts.Close)
	for _, n := range []int{1500, 9000} {
		req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(deepCall(5, n)))
		req.Header.Set("Authorization", "Bearer root")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", StatelessRevision)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		resp.Body.Close()
		var m struct {
			ID    any `json:"id"`
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil || m.Error.Code != -32600 || m.ID != float64(5) || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("depth %d: %d %s", n, resp.StatusCode, buf.String())
		}
	}
	if d := jsonDepth([]byte(deepCall(1, 995))); d != 1000 {
		t.Fatalf("depth of the 995-filter call: %d", d)
	}
	if inboundReply([]byte(deepCall(1, 995))) != nil {
		t.Error("a message 1000 levels deep was refused")
	}
	if str := []byte(`{"s":"[[[[{{{{\"\\"}`); inboundReply(str) != nil || jsonDepth(str) != 1 {
		t.Error("brackets inside strings counted")
	}
}

// TestMCPHTTPSessionAdminBinding: one principal with an admin key and a
// user key; the user key naming the session the admin key opened is
// answered 404, so it cannot run the admin's job tools through it.
func TestMCPHTTPSessionAdminBinding(t *testing.T) {
	root, db := fixture(t)
	js := jobServer(t, db, t.TempDir(), root)
	defer js.Close()
	s := newServer(t, db, root, func(o *Options) { o.Jobs = js })
	auth := func(r *http.Request) (Caller, bool) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		p := &contract.Principal{Name: "ops", Namespaces: []string{"*"}}
		return Caller{Principal: p, Admin: tok == "admin-key"}, ok && (tok == "admin-key" || tok == "user-key")
	}
	ts := httptest.NewServer(s.HTTPHandler(HTTPOptions{Authenticate: auth}))
	t.Cleanup(ts.Close)
	post := func(key, session, body string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", StatefulRevision)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		resp.Body.Close()
		return resp, buf.String()
	}
	resp, _ := post("admin-key", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatalf("no session id (%d)", resp.StatusCode)
	}
	post("admin-key", id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	flush := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flush","arguments":{}}}`
	if r, body := post("user-key", id, flush); r.StatusCode != http.StatusNotFound {
		t.Errorf("the user key used the admin key's session: %d %s", r.StatusCode, body)
	}
	if r, body := post("admin-key", id, flush); r.StatusCode != http.StatusOK || !strings.Contains(body, "job_id") {
		t.Errorf("the admin key's own session: %d %s", r.StatusCode, body)
	}
}
