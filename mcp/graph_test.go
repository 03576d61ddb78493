package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// TestMCPGraphTools: with a graph, expand, callers and callees are listed
// (within the definitions' token ceiling) and answer over it; their
// results are framed evidence; bad arguments are validation errors; a
// caller confined to another namespace sees nothing.
func TestMCPGraphTools(t *testing.T) {
	root, db := fixture(t)
	st := graphFixture(t, root)
	s := newServer(t, db, root, func(o *Options) { o.Graph = st })
	cs := connect(t, s, Caller{})
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, tl := range lt.Tools {
		have[tl.Name] = true
	}
	for _, n := range []string{"expand", "callers", "callees", "search", "repo_map"} {
		if !have[n] {
			t.Errorf("tool %s not listed", n)
		}
	}
	defs, tokens := s.Definitions()
	t.Logf("definitions with the graph tools: %d tokens", tokens)
	if tokens > MaxDefinitionTokens {
		t.Fatalf("tool definitions with the graph tools cost %d tokens (%d bytes), ceiling %d", tokens, len(defs), MaxDefinitionTokens)
	}

	res, m, text := callTool(t, cs, "callers", map[string]any{"symbol": "Frobnicate"})
	if res.IsError || !strings.Contains(text, "Widget.Paint") || !strings.Contains(text, "<retrieved_evidence") {
		t.Fatalf("callers: %v %s", m, text)
	}
	entries, _ := m["entries"].([]any)
	if len(entries) != 1 || entries[0].(map[string]any)["line"].(float64) != 10 {
		t.Fatalf("callers entries %v", m["entries"])
	}
	if _, _, text := callTool(t, cs, "callees", map[string]any{"symbol": "Widget.Paint"}); !strings.Contains(text, "Frobnicate") {
		t.Fatalf("callees: %s", text)
	}

	res, m, text = callTool(t, cs, "expand", map[string]any{"query": "paints it", "seeds": 1, "token_budget": 500})
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

	res, m, _ = callTool(t, cs, "expand", map[string]any{"query": "", "seeds": 0, "mode": "fuzzy"})
	if !res.IsError || m["status"] != "validation_error" || m["error_count"].(float64) != 3 {
		t.Fatalf("bad expand args: %v", m)
	}

	// repo_map over the graph: signatures ranked, in the budget.
	res, m, text = callTool(t, cs, "repo_map", map[string]any{"token_budget": 200, "focus": "Paint"})
	if res.IsError || !strings.Contains(text, "a.go:") || !strings.Contains(text, "func (w *Widget) Paint()") ||
		!strings.Contains(text, "func Frobnicate()") || m["tokens"].(float64) > 230 {
		t.Fatalf("ranked repo_map: %v\n%s", m, text)
	}

	// A caller confined to a namespace without these documents.
	other := connect(t, s, Caller{Principal: &contract.Principal{Name: "eve", Namespaces: []string{"tenant-x/"}}})
	_, m, _ = callTool(t, other, "expand", map[string]any{"query": "paints it"})
	if hits, _ := m["hits"].([]any); len(hits) != 0 {
		t.Fatalf("out-of-namespace caller got %d hits", len(hits))
	}
	_, _, text = callTool(t, other, "repo_map", map[string]any{})
	if strings.Contains(text, "Frobnicate") {
		t.Fatalf("out-of-namespace caller's map shows a.go:\n%s", text)
	}
	_, m, _ = callTool(t, other, "callers", map[string]any{"symbol": "Frobnicate"})
	if e, _ := m["entries"].([]any); len(e) != 0 {
		t.Fatalf("out-of-namespace caller got callers %v", e)
	}
}
