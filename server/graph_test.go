package server

import (
	"net/http"
	"testing"

	"github.com/stratasearch/strata/engine/graph"
)

// TestExpandRoute: POST /v1/collections/{name}/expand on a real server:
// over the collection's graph the callee of the seed, which shares no
// word with the query, comes back with its path; a collection without a
// graph answers with its search hits (graph: false); bad bodies are
// validation errors.
func TestExpandRoute(t *testing.T) {
	b := graph.NewBuilder()
	a := b.AddNode(graph.Node{Kind: graph.Func, Key: "p.Entry", Name: "Entry", File: "/r/a.go", DocID: "a#1"})
	c := b.AddNode(graph.Node{Kind: graph.Func, Key: "p.helper", Name: "helper", File: "/r/b.go", DocID: "b#1"})
	b.AddEdge(a, c, graph.Calls, 3)
	st := graph.NewStore(b.Build())
	rs := start(t, t.TempDir(), func(o *Options) { o.Graphs = map[string]*graph.Store{"code": st} })
	cl := newClient(t, rs.url)
	for _, name := range []string{"code", "plain"} {
		createDocs(cl, name, 2)
		cl.must(http.StatusOK, "POST", "/v1/collections/"+name+"/documents", upsertBody(
			mkDoc("a#1", "alpha entry point of the service", "", nil),
			mkDoc("b#1", "zzz checks lengths", "", nil),
			mkDoc("c#1", "unrelated words", "", nil)), nil)
	}
	var res expandResponse
	body := map[string]any{"query": map[string]any{"text": "alpha entry", "mode": "lexical"}, "seeds": 1, "token_budget": 1000}
	cl.must(http.StatusOK, "POST", "/v1/collections/code/expand", body, &res)
	if !res.Graph || len(res.Hits) != 2 || res.Hits[0].DocID != "a#1" || res.Hits[1].DocID != "b#1" {
		t.Fatalf("expand: %+v", res)
	}
	if res.Paths[1] != "Entry() -> CALLS b.go:helper()" || res.TokensUsed > 1000 || res.TokensUsed == 0 {
		t.Fatalf("paths %q, tokens %d", res.Paths, res.TokensUsed)
	}
	res = expandResponse{}
	cl.must(http.StatusOK, "POST", "/v1/collections/plain/expand", body, &res)
	if res.Graph || len(res.Hits) != 1 || res.Hits[0].DocID != "a#1" {
		t.Fatalf("no graph: %+v", res)
	}
	cl.must(http.StatusBadRequest, "POST", "/v1/collections/code/expand", map[string]any{"query": map[string]any{"text": "x"}, "depth": 3}, nil)
	cl.must(http.StatusBadRequest, "POST", "/v1/collections/code/expand", map[string]any{"seeds": -1}, nil)
	cl.must(http.StatusNotFound, "POST", "/v1/collections/absent/expand", body, nil)
}
