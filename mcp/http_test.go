package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/ingest"
)

// bearer is a test Authenticate: "Bearer NAME" runs as principal NAME with
// namespace NAME/ (and "Bearer root" as the trusted caller).
func bearer(r *http.Request) (Caller, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case !ok:
		return Caller{}, false
	case tok == "root":
		return Caller{}, true
	}
	return Caller{Principal: &contract.Principal{Name: tok, Namespaces: []string{tok + "/"}}}, true
}

type authTransport struct{ key string }

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+a.key)
	return http.DefaultTransport.RoundTrip(r)
}

func httpSession(t *testing.T, url, key, version string) *sdk.ClientSession {
	t.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: authTransport{key}}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), tr, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestMCPHTTPRevisions: both revisions over streamable HTTP, each caller
// confined to its principal's namespace.
func TestMCPHTTPRevisions(t *testing.T) {
	root, db := fixture(t)
	col, _ := db.Collection("code")
	p := filepath.Join(root, "alice.go")
	body := "package s\n\nfunc AliceOnly() {} // zebraquux\n"
	os.WriteFile(p, []byte(body), 0o644)
	if _, err := col.Upsert(context.Background(), []contract.Document{{ID: p + "#L1-L3", Content: body, SourceURI: ingest.FileURI(p) + "#L1-L3",
		Namespace: "alice/", Trust: contract.Authoritative, VersionHash: engine.VersionHash([]byte(body))}}, engine.VerifiableSources()); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, db, root, nil)
	ts := httptest.NewServer(s.HTTPHandler(HTTPOptions{Authenticate: bearer}))
	t.Cleanup(ts.Close) // after the sessions close (cleanups run last-in first-out)
	for _, version := range []string{StatefulRevision, StatelessRevision} {
		for _, who := range []string{"alice", "bob"} {
			cs := httpSession(t, ts.URL, who, version)
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Errorf("%s: negotiated %s", version, got)
			}
			_, m, text := callTool(t, cs, "search", map[string]any{"query": "zebraquux"})
			sees := strings.Contains(text, "AliceOnly")
			if sees != (who == "alice") {
				t.Errorf("%s %s: sees alice.go = %v: %v", version, who, sees, m)
			}
			_, m, _ = callTool(t, cs, "read", map[string]any{"uri": "alice.go"})
			if (m["status"] == nil) != (who == "alice") {
				t.Errorf("%s %s read: %v", version, who, m)
			}
		}
	}
	// No key: 401 before the SDK.
	resp, err := http.Post(ts.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no key: %d", resp.StatusCode)
	}
}

// TestMCPHTTPSessionBinding: a stateful session answers only the
// principal that opened it.
func TestMCPHTTPSessionBinding(t *testing.T) {
	root, db := fixture(t)
	ts := httptest.NewServer(newServer(t, db, root, nil).HTTPHandler(HTTPOptions{Authenticate: bearer}))
	t.Cleanup(ts.Close)
	post := func(key, session, body string) (*http.Response, string) {
		return postMCP(t, ts.URL, key, StatefulRevision, session, body)
	}
	resp, _ := post("alice", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatalf("no session id (%d)", resp.StatusCode)
	}
	post("alice", id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list","arguments":{}}}`
	if r, _ := post("bob", id, call); r.StatusCode != http.StatusNotFound {
		t.Errorf("bob used alice's session: %d", r.StatusCode)
	}
	if r, _ := post("alice", id, call); r.StatusCode != http.StatusOK {
		t.Errorf("alice's own session: %d", r.StatusCode)
	}
	// A malformed JSON-RPC message gets the protocol's parse error.
	r, body := post("alice", id, `{"jsonrpc":"2.0","id":3,"method":`)
	if !strings.Contains(body, `"code":-32700`) || r.StatusCode != http.StatusBadRequest {
		t.Errorf("malformed message: %d %s", r.StatusCode, body)
	}
}

// postMCP posts one JSON-RPC message to the streamable HTTP endpoint at
// url with key as the bearer token, at the given protocol revision (and
// session, if not empty), and returns the response with its body read.
func postMCP(t *testing.T, url, key, revision, session, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", revision)
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

// TestMCPSchemasMatchValidation: for every tool, the advertised input schema
// (checked by an independent JSON Schema validator) and the tool's own
// validation agree on a set of arguments, valid and not.
func TestMCPSchemasMatchValidation(t *testing.T) {
	root, db := fixture(t)
	s := newServer(t, db, root, nil)
	samples := map[string][]string{
		"search": {`{}`, `{"query":"x"}`, `{"query":""}`, `{"query":"x","top_k":1}`, `{"query":"x","top_k":50}`, `{"query":"x","top_k":51}`,
			`{"query":"x","top_k":0}`, `{"query":"x","mode":"dense"}`, `{"query":"x","mode":"fuzzy"}`, `{"query":"x","extra":1}`,
			`{"query":"x","top_k":2.5}`, `{"query":"x","filter":{"eq":{"field":"lang","value":"go"}}}`, `{"query":"x","filter":[]}`},
		"find_definition": {`{}`, `{"symbol":"Foo"}`, `{"symbol":"Foo.Bar"}`, `{"symbol":"a.b.c"}`, `{"symbol":"1x"}`, `{"symbol":"Foo","top_k":51}`, `{"symbol":"Foo","x":1}`},
		"read":            {`{"uri":"a.go"}`, `{"uri":""}`, `{"uri":"a.go","start_line":0}`, `{"uri":"a.go","start_line":2,"end_line":3}`, `{"uri":"a.go","line":1}`},
		"list":            {`{}`, `{"path":"sub"}`, `{"limit":0}`, `{"limit":500}`, `{"limit":501}`, `{"depth":1}`},
		"repo_map":        {`{}`, `{"token_budget":99}`, `{"token_budget":100}`, `{"token_budget":2000}`, `{"token_budget":2001}`, `{"symbols_per_file":11}`, `{"symbols_per_file":0}`, `{"x":1}`},
		"job": {`{"kind":"flush"}`, `{"kind":"index","path":"sub"}`, `{"kind":"index","path":""}`, `{"kind":"flush","timeout_seconds":0}`,
			`{"kind":"compact","timeout_seconds":86400}`, `{"kind":"compact","timeout_seconds":86401}`, `{"kind":"compact","timeout_seconds":2.5}`,
			`{"kind":"rebuild"}`, `{"kind":"flush","collection":"x"}`, `{"kind":"archive","segments":[1,2]}`, `{"kind":"archive","segments":[0]}`,
			`{"kind":"archive","segments":[3,3]}`, `{"kind":"archive","oldest":-1}`, `{"kind":"archive","oldest":2}`, `{"kind":"archive","nlist":65536}`,
			`{"kind":"archive","nlist":65537}`, `{"kind":"archive","omit_vectors":true}`, `{"kind":"archive","oldest":1000001}`,
			`{"kind":"promote","archive_id":7}`, `{"kind":"promote","archive_id":0}`, `{"kind":"promote","archive_id":-1}`, `{"kind":"promote","archive_id":7,"timeout_seconds":5}`,
			`{"job_id":"00112233445566778899aabbccddeeff"}`, `{"job_id":"00112233445566778899AABBCCDDEEFF"}`, `{"job_id":"abc"}`, `{"job_id":"00112233445566778899aabbccddeeff","log_lines":50}`,
			`{"job_id":"00112233445566778899aabbccddeeff","log_lines":51}`, `{"job_id":"00112233445566778899aabbccddeeff","cancel":true}`, `{"job_id":"00112233445566778899aabbccddeeff","x":1}`},
	}
	// Rules across fields that the schemas state in words (descriptions),
	// not as JSON Schema conditionals: the schema accepts these, the tool
	// refuses them with a validation error.
	crossField := map[string][]string{
		"job": {`{}`, `{"kind":"index"}`, `{"kind":"promote"}`, `{"kind":"flush","path":"sub"}`, `{"kind":"index","path":"sub","archive_id":3}`,
			`{"kind":"flush","segments":[1]}`, `{"kind":"flush","job_id":"00112233445566778899aabbccddeeff"}`, `{"job_id":"00112233445566778899aabbccddeeff","timeout_seconds":5}`, `{"job_id":"00112233445566778899aabbccddeeff","kind":"flush"}`,
			`{"cancel":true}`, `{"kind":"flush","log_lines":3}`, `{"log_lines":3}`},
	}
	for _, tl := range s.tools {
		var sch jsonschema.Schema
		if err := json.Unmarshal(tl.def.InputSchema.(json.RawMessage), &sch); err != nil {
			t.Fatalf("%s: %v", tl.def.Name, err)
		}
		rs, err := sch.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: resolve: %v", tl.def.Name, err)
		}
		var out jsonschema.Schema
		if err := json.Unmarshal(tl.def.OutputSchema.(json.RawMessage), &out); err != nil {
			t.Fatalf("%s output: %v", tl.def.Name, err)
		}
		if len(samples[tl.def.Name]) == 0 {
			t.Errorf("no samples for %s", tl.def.Name)
		}
		for _, raw := range samples[tl.def.Name] {
			var v map[string]any
			json.Unmarshal([]byte(raw), &v)
			schemaOK := rs.Validate(v) == nil
			c := &call{s: s, nonce: "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}
			err := tl.check(c, json.RawMessage(raw))
			ourOK := err == nil
			if schemaOK != ourOK {
				t.Errorf("%s %s: schema says valid=%v, the tool says valid=%v (%v)", tl.def.Name, raw, schemaOK, ourOK, err)
			}
		}
		for _, raw := range crossField[tl.def.Name] {
			var v map[string]any
			json.Unmarshal([]byte(raw), &v)
			err := tl.check(&call{s: s, nonce: "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}, json.RawMessage(raw))
			var ve *contract.ValidationError
			if rs.Validate(v) != nil || !errors.As(err, &ve) {
				t.Errorf("%s %s: want schema-valid and a validation error from the tool, got %v", tl.def.Name, raw, err)
			}
		}
	}
	// Every output, and the error shape, validates against the output schema.
	cs := connect(t, s, Caller{})
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"search", map[string]any{"query": "func"}}, {"search", map[string]any{"query": ""}},
		{"find_definition", map[string]any{"symbol": "Helper"}}, {"read", map[string]any{"uri": "a.go"}}, {"read", map[string]any{"uri": "nope.go"}},
		{"list", map[string]any{}}, {"repo_map", map[string]any{}}, {"repo_map", map[string]any{"path": "missing"}},
	} {
		var out jsonschema.Schema
		for _, tl := range s.tools {
			if tl.def.Name == tc.tool {
				json.Unmarshal(tl.def.OutputSchema.(json.RawMessage), &out)
			}
		}
		rs, err := out.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		_, m, _ := callTool(t, cs, tc.tool, tc.args)
		if err := rs.Validate(m); err != nil {
			t.Errorf("%s %v: output does not match its schema: %v\n%v", tc.tool, tc.args, err, m)
		}
	}
}
