package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stratasearch/strata/engine/contract"
)

// deepCall is a tools/call whose filter argument nests n "not" objects: a
// model can emit it, and the SDK refuses to decode beyond 1000 levels.
func deepCall(id, n int) string {
	f := strings.Repeat(`{"not":`, n) + `{"exists":{"field":"lang"}}` + strings.Repeat(`}`, n)
	return `{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","filter":` + f + `}}}`
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// malformedMessages are valid JSON that is not a JSON-RPC message the SDK
// decodes, each with the id its error must carry ("null" when it has no
// valid one). The SDK's stdio transport ends the session on every one.
var malformedMessages = []struct{ msg, id string }{
	{deepCall(2, 1500), "2"},
	{`[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`, "null"},
	{`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, "null"},
	{`{"jsonrpc":"2.0","id":true,"method":"tools/list"}`, "null"},
	{`{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, "null"},
	{`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, "null"},
	{`{"jsonrpc":"1.0","id":4,"method":"tools/list"}`, "4"},
	{`{"id":5}`, "5"},
	{`"str"`, "null"},
	{`7`, "null"},
	{`{"jsonrpc":"2.0","id":6}`, "6"},
	{`{"jsonrpc":"2.0","id":"x","method":5}`, `"x"`},
	{`{"jsonrpc":"2.0","id":8,"error":5}`, "8"},
}

// TestMCPStdioMalformedMessages: each malformed message gets an
// invalid-request error (-32600) carrying its id when it has a valid one,
// and the session goes on (the SDK's transport alone ends the session, so
// one bad line, or one tool argument nested 1500 deep, loses the client
// its server).
func TestMCPStdioMalformedMessages(t *testing.T) {
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
	br := bufio.NewReader(outR)
	read := func(what string) map[string]any {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: the session ended: %v", what, err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s: answer is not JSON: %q", what, l)
		}
		return m
	}
	go io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	read("initialize")
	for i, tc := range malformedMessages {
		go io.WriteString(inW, tc.msg+"\n"+`{"jsonrpc":"2.0","id":"after","method":"ping"}`+"\n")
		m := read(clip(tc.msg))
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32600) || string(mustJSON(m["id"])) != tc.id {
			t.Errorf("%d %s: want an invalid-request error with id %s, got %v", i, clip(tc.msg), tc.id, m)
		}
		if m := read("ping after " + clip(tc.msg)); m["id"] != "after" || m["result"] == nil {
			t.Errorf("ping after %s: %v", clip(tc.msg), m)
		}
	}
	inW.Close()
	cancel()
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// TestMCPHTTPMalformedMessages: over HTTP the same messages get a JSON-RPC
// error (not the SDK's plain-text 400), and depth 1000 still passes.
func TestMCPHTTPMalformedMessages(t *testing.T) {
	root, db := fixture(t)
	ts := httptest.NewServer(newServer(t, db, root, nil).HTTPHandler(HTTPOptions{Authenticate: bearer}))
	t.Cleanup(ts.Close)
	for _, tc := range malformedMessages {
		resp, body := postMCP(t, ts.URL, "root", StatelessRevision, "", tc.msg)
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &m); err != nil || m.Error.Code != -32600 || string(m.ID) != tc.id || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d %s", clip(tc.msg), resp.StatusCode, body)
		}
	}
	for _, n := range []int{1500, 9000} {
		resp, body := postMCP(t, ts.URL, "root", StatelessRevision, "", deepCall(5, n))
		var m struct {
			ID    any `json:"id"`
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &m); err != nil || m.Error.Code != -32600 || m.ID != float64(5) || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("depth %d: %d %s", n, resp.StatusCode, body)
		}
	}
	if d := jsonDepth([]byte(deepCall(1, 995))); d != 1000 {
		t.Fatalf("depth of the 995-filter call: %d", d)
	}
	if inboundReply([]byte(deepCall(1, 995))) != nil {
		t.Error("a message 1000 levels deep was refused")
	}
	if str := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"[[[[{{{{\"\\"}}`); inboundReply(str) != nil || jsonDepth(str) != 2 {
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
		return postMCP(t, ts.URL, key, StatefulRevision, session, body)
	}
	resp, _ := post("admin-key", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatalf("no session id (%d)", resp.StatusCode)
	}
	post("admin-key", id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	flush := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"job","arguments":{"kind":"flush"}}}`
	if r, body := post("user-key", id, flush); r.StatusCode != http.StatusNotFound {
		t.Errorf("the user key used the admin key's session: %d %s", r.StatusCode, body)
	}
	if r, body := post("admin-key", id, flush); r.StatusCode != http.StatusOK || !strings.Contains(body, "job_id") {
		t.Errorf("the admin key's own session: %d %s", r.StatusCode, body)
	}
}

// FuzzInboundReply: a message inboundReply lets through is one the SDK's
// own decoder accepts (so the stdio session cannot end on it), and every
// reply is one JSON-RPC error object.
func FuzzInboundReply(f *testing.F) {
	for _, tc := range malformedMessages {
		f.Add([]byte(tc.msg))
	}
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"query":"x"}}}`,
		`garbage`, `{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		reply := inboundReply(msg)
		if reply == nil {
			if _, err := jsonrpc.DecodeMessage(msg); err != nil {
				t.Fatalf("let through %q, which the SDK refuses: %v", msg, err)
			}
			return
		}
		var r struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(reply, &r); err != nil || r.JSONRPC != "2.0" || r.Error == nil || (r.Error.Code != -32600 && r.Error.Code != -32700) || len(r.ID) == 0 {
			t.Fatalf("reply to %q is not a JSON-RPC error: %s", msg, reply)
		}
	})
}
