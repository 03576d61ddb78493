package server

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/ingest/codegraph"
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

// TestIndexJobUpdatesGraph: an index job into a collection with a code
// graph updates the graph for the files the pass rewrote, added or
// removed, so expand follows an edge the edit added at once, never one
// into a node the edit replaced; the graph is saved beside the manifest.
func TestIndexJobUpdatesGraph(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	os.MkdirAll(proj, 0o755)
	write := func(name, src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(proj, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", "package proj\n\n// Entry frobnicates the widgets.\nfunc Entry() int { return helper() }\n")
	write("b.go", "package proj\n\nfunc helper() int { return 1 }\n")
	data := t.TempDir()
	absData, _ := filepath.Abs(data)
	chunk := ingest.Options{ExcludePaths: []string{absData}}
	g, _, err := codegraph.BuildTree(context.Background(), proj, codegraph.GoOptions{}, chunk)
	if err != nil {
		t.Fatal(err)
	}
	st := graph.NewStore(g)
	rs := start(t, data, func(o *Options) {
		o.IndexRoots = []string{root}
		o.Graphs = map[string]*graph.Store{"code": st}
	})
	c := newClient(t, rs.url)
	index := func() JobView {
		t.Helper()
		var jv JobView
		c.must(http.StatusAccepted, "POST", "/v1/jobs", map[string]any{"kind": "index", "collection": "code", "path": proj}, &jv)
		v := waitJob(t, c, jv.ID, JobDone, JobFailed)
		if v.State != JobDone {
			t.Fatalf("index job %+v", v)
		}
		return v
	}
	expand := func() string {
		t.Helper()
		var res expandResponse
		body := map[string]any{"query": map[string]any{"text": "frobnicates widgets", "mode": "lexical"}, "seeds": 1, "token_budget": 1000}
		c.must(http.StatusOK, "POST", "/v1/collections/code/expand", body, &res)
		if !res.Graph {
			t.Fatalf("expand without graph: %+v", res)
		}
		return strings.Join(res.Paths, "\n")
	}
	index()
	if p := expand(); !strings.Contains(p, "Entry() -> CALLS b.go:helper()") {
		t.Fatalf("paths before the edit:\n%s", p)
	}
	// Entry now calls zap, declared in a new file; helper's file is gone.
	write("a.go", "package proj\n\n// Entry frobnicates the widgets.\nfunc Entry() int { return zap() }\n")
	write("c.go", "package proj\n\nfunc zap() int { return 2 }\n")
	os.Remove(filepath.Join(proj, "b.go"))
	v := index()
	if !strings.Contains(strings.Join(v.Log, "\n"), "graph: 3 files updated") {
		t.Fatalf("job log:\n%s", strings.Join(v.Log, "\n"))
	}
	p := expand()
	if !strings.Contains(p, "Entry() -> CALLS c.go:zap()") || strings.Contains(p, "helper") {
		t.Fatalf("paths after the edit:\n%s", p)
	}
	view := st.View()
	for id := graph.NodeID(0); int(id) < view.N(); id++ {
		view.Out(id, func(e graph.Edge) bool {
			if !view.Live(e.To) {
				t.Fatalf("edge from %s into a replaced node", view.Node(id).Key)
			}
			return true
		})
	}
	saved, err := graph.ReadFile(filepath.Join(data, "ingest", "code.graph"))
	if err != nil {
		t.Fatal(err)
	}
	if saved.Lookup("proj.zap") == graph.None || saved.Lookup("proj.helper") != graph.None {
		t.Fatal("saved graph does not hold the edit")
	}
	if v := index(); strings.Contains(strings.Join(v.Log, "\n"), "graph:") {
		t.Fatalf("an idle pass updated the graph:\n%s", strings.Join(v.Log, "\n"))
	}
}
