package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/ingest/codegraph"
)

// graphFixture builds the code graph of the fixture's a.go (package p:
// Widget.Paint calls Frobnicate) with codegraph's syntax-level builder.
func graphFixture(t *testing.T, root string) *graph.Store {
	t.Helper()
	path := filepath.Join(root, "a.go")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := codegraph.SyntaxFragment(path, src, "p", nil, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return graph.NewStore(graph.FromFragments([]*graph.Fragment{fr}))
}

// TestMCPGraphTools: with a graph, search lists expand and find_definition
// calls (within the definitions' token ceiling; without a graph neither
// is listed nor accepted) and they answer over it; their results are
// framed evidence; bad arguments are validation errors; a caller confined
// to another namespace sees nothing.
func TestMCPGraphTools(t *testing.T) {
	root, db := fixture(t)
	st := graphFixture(t, root)
	s := newServer(t, db, root, func(o *Options) { o.Graph = st })
	cs := connect(t, s, Caller{})
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	props := func(lt *sdk.ListToolsResult) map[string]bool {
		have := map[string]bool{}
		for _, tl := range lt.Tools {
			b, _ := json.Marshal(tl.InputSchema)
			var sch struct{ Properties map[string]any }
			json.Unmarshal(b, &sch)
			for p := range sch.Properties {
				have[tl.Name+"."+p] = true
			}
		}
		return have
	}
	have := props(lt)
	if !have["search.expand"] || !have["find_definition.calls"] || !have["repo_map.focus"] {
		t.Errorf("graph arguments not listed: %v", have)
	}
	bare := newServer(t, db, root, nil)
	bcs := connect(t, bare, Caller{})
	blt, err := bcs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if have := props(blt); have["search.expand"] || have["find_definition.calls"] {
		t.Errorf("graph arguments listed without a graph: %v", have)
	}
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		field string
	}{{"search", map[string]any{"query": "x", "expand": 500}, "expand"}, {"find_definition", map[string]any{"symbol": "Frobnicate", "calls": "callers"}, "calls"}} {
		res, m, _ := callTool(t, bcs, tc.tool, tc.args)
		errs, _ := m["errors"].([]any)
		if !res.IsError || m["status"] != "validation_error" || len(errs) != 1 || errs[0].(map[string]any)["error_type"] != contract.ErrTypeUnknownField {
			t.Errorf("%s %v without a graph: %v", tc.tool, tc.args, m)
		}
	}
	defs, tokens := s.Definitions()
	t.Logf("definitions with the graph tools: %d tokens", tokens)
	if tokens > MaxDefinitionTokens {
		t.Fatalf("tool definitions with the graph tools cost %d tokens (%d bytes), ceiling %d", tokens, len(defs), MaxDefinitionTokens)
	}

	res, m, text := callTool(t, cs, "find_definition", map[string]any{"symbol": "Frobnicate", "calls": "callers"})
	if res.IsError || !strings.Contains(text, "Widget.Paint") || !strings.Contains(text, "<retrieved_evidence") {
		t.Fatalf("callers: %v %s", m, text)
	}
	entries, _ := m["entries"].([]any)
	if len(entries) != 1 || entries[0].(map[string]any)["line"].(float64) != 10 {
		t.Fatalf("callers entries %v", m["entries"])
	}
	if _, _, text := callTool(t, cs, "find_definition", map[string]any{"symbol": "Widget.Paint", "calls": "callees"}); !strings.Contains(text, "Frobnicate") {
		t.Fatalf("callees: %s", text)
	}

	res, m, text = callTool(t, cs, "search", map[string]any{"query": "paints it", "top_k": 1, "expand": 500})
	if res.IsError {
		t.Fatalf("expand: %v", m)
	}
	var er expandResult
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &er)
	found := false
	for i, h := range er.Hits {
		if strings.Contains(h.Content, "func Frobnicate") {
			found = true
			if er.Paths[i] != "Widget.Paint() -> CALLS a.go:Frobnicate()" {
				t.Errorf("path %q", er.Paths[i])
			}
		}
	}
	if !found || er.TokensUsed > er.BudgetTokens || er.Tokens > 500 || !strings.Contains(text, "CALLS a.go:Frobnicate()") {
		t.Fatalf("expand: %+v\n%s", er, text)
	}

	res, m, _ = callTool(t, cs, "search", map[string]any{"query": "", "top_k": 0, "mode": "fuzzy", "expand": 99, "cursor": "c"})
	if !res.IsError || m["status"] != "validation_error" || m["error_count"].(float64) != 5 {
		t.Fatalf("bad expand args: %v", m)
	}
	res, m, _ = callTool(t, cs, "find_definition", map[string]any{"symbol": "Frobnicate", "calls": "siblings"})
	if !res.IsError || m["status"] != "validation_error" || m["error_count"].(float64) != 1 {
		t.Fatalf("bad calls: %v", m)
	}

	// repo_map over the graph: signatures ranked, in the budget.
	res, m, text = callTool(t, cs, "repo_map", map[string]any{"token_budget": 200, "focus": "Paint"})
	if res.IsError || !strings.Contains(text, "a.go:") || !strings.Contains(text, "func (w *Widget) Paint()") ||
		!strings.Contains(text, "func Frobnicate()") || m["tokens"].(float64) > 230 {
		t.Fatalf("ranked repo_map: %v\n%s", m, text)
	}

	// A caller confined to a namespace without these documents.
	other := connect(t, s, Caller{Principal: &contract.Principal{Name: "eve", Namespaces: []string{"tenant-x/"}}})
	_, m, _ = callTool(t, other, "search", map[string]any{"query": "paints it", "expand": 500})
	if hits, _ := m["hits"].([]any); len(hits) != 0 {
		t.Fatalf("out-of-namespace caller got %d hits", len(hits))
	}
	_, _, text = callTool(t, other, "repo_map", map[string]any{})
	if strings.Contains(text, "Frobnicate") {
		t.Fatalf("out-of-namespace caller's map shows a.go:\n%s", text)
	}
	_, m, _ = callTool(t, other, "find_definition", map[string]any{"symbol": "Frobnicate", "calls": "callers"})
	if e, _ := m["entries"].([]any); len(e) != 0 {
		t.Fatalf("out-of-namespace caller got callers %v", e)
	}
}

// TestMCPGraphSchemasMatchValidation: with the code graph, search's and
// find_definition's advertised input schemas (checked by an independent
// JSON Schema validator) and the tools' validation agree; expand with a
// filter or a cursor (a rule stated in words) is schema-valid and refused
// by the tool.
func TestMCPGraphSchemasMatchValidation(t *testing.T) {
	root, db := fixture(t)
	s := newServer(t, db, root, func(o *Options) { o.Graph = graphFixture(t, root) })
	samples := map[string][]string{
		"search": {`{"query":"x","expand":500}`, `{"query":"x","expand":99}`, `{"query":"x","expand":2000}`, `{"query":"x","expand":2001}`,
			`{"query":"x","expand":500,"top_k":3,"mode":"dense"}`, `{"query":"x","expand":1.5}`, `{"query":"x","expand":"big"}`},
		"find_definition": {`{"symbol":"Foo","calls":"callers"}`, `{"symbol":"Foo.Bar","calls":"callees","top_k":50}`, `{"symbol":"Foo","calls":"siblings"}`,
			`{"symbol":"Foo","calls":"callers","top_k":51}`, `{"symbol":"a.b.c","calls":"callers"}`},
	}
	crossField := map[string][]string{
		"search": {`{"query":"x","expand":500,"cursor":"c"}`, `{"query":"x","expand":500,"filter":{"eq":{"field":"lang","value":"go"}}}`},
	}
	for _, tl := range s.tools {
		if samples[tl.def.Name] == nil {
			continue
		}
		var sch jsonschema.Schema
		if err := json.Unmarshal(tl.def.InputSchema.(json.RawMessage), &sch); err != nil {
			t.Fatalf("%s: %v", tl.def.Name, err)
		}
		rs, err := sch.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: %v", tl.def.Name, err)
		}
		for _, raw := range samples[tl.def.Name] {
			var v map[string]any
			json.Unmarshal([]byte(raw), &v)
			err := tl.check(&call{s: s, nonce: "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}, json.RawMessage(raw))
			if schemaOK := rs.Validate(v) == nil; schemaOK != (err == nil) {
				t.Errorf("%s %s: schema valid=%v, tool valid=%v (%v)", tl.def.Name, raw, schemaOK, err == nil, err)
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
		{"search", map[string]any{"query": "paints it", "expand": 500}}, {"search", map[string]any{"query": "x", "expand": 1}},
		{"find_definition", map[string]any{"symbol": "Frobnicate", "calls": "callers"}}, {"find_definition", map[string]any{"symbol": "Frobnicate"}},
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
