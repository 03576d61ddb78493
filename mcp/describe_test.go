package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/memory"
)

// allToolsServer is a Server with every optional tool family enabled:
// the graph tools, the memory tools and the job tools.
func allToolsServer(t *testing.T) *Server {
	t.Helper()
	root, db := fixture(t)
	st := graphFixture(t, root)
	js := jobServer(t, db, t.TempDir(), root)
	t.Cleanup(func() { js.Close() })
	s := newServer(t, db, root, func(o *Options) { o.Graph = st; o.Jobs = js })
	col, err := db.CreateCollection("memory", memory.CollectionOptions(4))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := memory.Open(context.Background(), col, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnableMemory(MemoryOptions{Store: ms, Subject: "u"}); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDefinitionsBudgetAllTools: with the graph, memory and job tools all
// registered, the definitions an ordinary caller and an admin caller see
// both stay within MaxDefinitionTokens, and FullDefinitions reports the
// same figures.
func TestDefinitionsBudgetAllTools(t *testing.T) {
	s := allToolsServer(t)
	if got := strings.Join(s.ToolNames(), ","); got != "search,find_definition,read,list,repo_map,remember,recall,forget" {
		t.Fatalf("ordinary tools %s", got)
	}
	if got := strings.Join(s.AdminToolNames(), ","); got != "job" {
		t.Fatalf("admin-only tools %s", got)
	}
	defs, tokens := s.Definitions()
	adefs, atokens := s.DefinitionsFor(true)
	t.Logf("ordinary caller: %d tools, %d bytes, %d tokens; admin: %d tools, %d bytes, %d tokens",
		len(s.ToolNames()), len(defs), tokens, len(s.ToolNames())+len(s.AdminToolNames()), len(adefs), atokens)
	if tokens > MaxDefinitionTokens || atokens > MaxDefinitionTokens {
		t.Errorf("definitions cost %d tokens (ordinary), %d (admin); ceiling %d", tokens, atokens, MaxDefinitionTokens)
	}
	// FullDefinitions (searchd mcp --describe) registers the same set
	// without a store.
	fdefs, ftokens, fadmin, fatokens, err := FullDefinitions(Options{Roots: []string{"/r"}})
	if err != nil {
		t.Fatal(err)
	}
	if ftokens != tokens || len(fdefs) != len(defs) || fatokens != atokens || len(fadmin) != len(adefs) {
		t.Errorf("FullDefinitions: %d tokens (%d bytes), admin %d (%d bytes); the server: %d (%d), admin %d (%d)",
			ftokens, len(fdefs), fatokens, len(fadmin), tokens, len(defs), atokens, len(adefs))
	}
	// DefinitionSizes (the --describe table): every family and caller
	// within the ceiling, each family adding bytes, the last row the
	// full admin set.
	sizes, err := DefinitionSizes(Options{Roots: []string{"/r"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 8 {
		t.Fatalf("%d sizes", len(sizes))
	}
	for i, z := range sizes {
		if z.Tokens > MaxDefinitionTokens || z.Tokens != (z.Bytes+3)/4 || i > 0 && z.Bytes <= sizes[i-1].Bytes && z.Admin {
			t.Errorf("size %d: %+v", i, z)
		}
	}
	if last := sizes[len(sizes)-1]; !last.Graph || !last.Memory || !last.Admin || last.Bytes != len(adefs) || last.Tools != 9 {
		t.Errorf("last size %+v, want the full admin set (%d bytes)", last, len(adefs))
	}
}

// TestDefinitionsBudgetOnTheWire: the tools array of tools/list exactly as
// an admin client of a server with every tool family receives it over
// streamable HTTP (a loopback server; the JSON-RPC response's bytes, not
// re-encoded) costs at most MaxDefinitionTokens, and is byte for byte what
// DefinitionsFor(true) (searchd mcp --describe) counts. The same for an
// ordinary caller.
func TestDefinitionsBudgetOnTheWire(t *testing.T) {
	s := allToolsServer(t)
	ts := httptest.NewServer(s.HTTPHandler(HTTPOptions{Authenticate: func(r *http.Request) (Caller, bool) {
		return Caller{Admin: r.Header.Get("Authorization") == "Bearer admin"}, true
	}}))
	t.Cleanup(ts.Close)
	for _, key := range []string{"admin", "user"} {
		resp, body := postMCP(t, ts.URL, key, StatefulRevision, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
		id := resp.Header.Get("Mcp-Session-Id")
		if id == "" {
			t.Fatalf("no session id (%d %s)", resp.StatusCode, body)
		}
		postMCP(t, ts.URL, key, StatefulRevision, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		_, body = postMCP(t, ts.URL, key, StatefulRevision, id, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		// The reply is one JSON message, or one SSE event carrying it.
		msg := body
		if i := strings.Index(body, "data: "); i >= 0 {
			msg, _, _ = strings.Cut(body[i+len("data: "):], "\n")
		}
		var reply struct {
			Result struct {
				Tools json.RawMessage `json:"tools"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(msg), &reply); err != nil || len(reply.Result.Tools) == 0 {
			t.Fatalf("%s: tools/list reply %q: %v", key, body, err)
		}
		wire := reply.Result.Tools // json.RawMessage keeps the received bytes
		tokens := (len(wire) + contract.DefaultBytesPerToken - 1) / contract.DefaultBytesPerToken
		defs, dtokens := s.DefinitionsFor(key == "admin")
		t.Logf("%s caller on the wire: %d bytes, %d tokens (ceiling %d)", key, len(wire), tokens, MaxDefinitionTokens)
		if tokens > MaxDefinitionTokens {
			t.Errorf("%s caller: tools/list carries %d bytes of tool definitions, %d tokens; ceiling %d", key, len(wire), tokens, MaxDefinitionTokens)
		}
		// The SDK lists the tools by name; DefinitionsFor in registration
		// order: the same tools, byte for byte.
		if w, d := toolsByName(t, wire), toolsByName(t, defs); !maps.EqualFunc(w, d, bytes.Equal) || tokens != dtokens {
			t.Errorf("%s caller: the wire's tools (%d bytes) differ from DefinitionsFor (%d bytes)", key, len(wire), len(defs))
		}
	}
}

// toolsByName splits a JSON array of tools into each tool's bytes by name.
func toolsByName(t *testing.T, arr []byte) map[string][]byte {
	t.Helper()
	var tools []json.RawMessage
	if err := json.Unmarshal(arr, &tools); err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, tl := range tools {
		var v struct{ Name string }
		json.Unmarshal(tl, &v)
		m[v.Name] = tl
	}
	return m
}

// TestSchemasNoDuplicateKeys: no JSON object in any tool's input or output
// schema repeats a key (a repeated key is silently the last one to most
// parsers, so the schema would not say what its text shows).
func TestSchemasNoDuplicateKeys(t *testing.T) {
	s := allToolsServer(t)
	for _, tl := range s.tools {
		for what, sch := range map[string]any{"input": tl.def.InputSchema, "output": tl.def.OutputSchema} {
			if err := noDuplicateKeys(sch.(json.RawMessage)); err != nil {
				t.Errorf("%s %s schema: %v", tl.def.Name, what, err)
			}
		}
	}
}

func noDuplicateKeys(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key := k.(string)
				if seen[key] {
					return fmt.Errorf("key %q repeated", key)
				}
				seen[key] = true
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	return walk()
}
