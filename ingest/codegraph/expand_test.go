package codegraph

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
)

func indexTestdata(t *testing.T, root string) *engine.Collection {
	t.Helper()
	dir := t.TempDir()
	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	col, err := db.CreateCollection("code", engine.CollectionOptions{Dim: 8, Sync: "none",
		IndexedFields: map[string]engine.FieldType{ingest.MetaNames: engine.FieldKeyword, ingest.MetaLang: engine.FieldKeyword}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.Index(context.Background(), col, filepath.Join(dir, "manifest.json"), root, ingest.Options{}, ingest.Progress{}); err != nil {
		t.Fatal(err)
	}
	return col
}

// TestExpand: a query about the entry point (app.Run's doc comment)
// reaches, through CALLS, the store's Put and its callee checkLen, which
// share no word with the query; every chosen hit is an indexed chunk, the
// tokens fit the budget, and paths start at a seed.
func TestExpand(t *testing.T) {
	_, g := loadTestdata(t, DynamicCHA)
	root, _ := filepath.Abs("testdata/mod")
	col := indexTestdata(t, root)
	v := graph.NewView(g)
	ctx := context.Background()
	q := contract.Query{Text: "stores every value", Mode: contract.Lexical, Verify: true}
	res, err := Expand(ctx, col, v, q, ExpandOptions{SeedK: 1, BudgetTokens: 400})
	if err != nil {
		t.Fatal(err)
	}
	if res.TokensUsed > 400 || len(res.Hits) == 0 || len(res.Hits) != len(res.Paths) {
		t.Fatalf("tokens %d, %d hits, %d paths", res.TokensUsed, len(res.Hits), len(res.Paths))
	}
	sum := 0
	found := map[string]string{}
	for i, h := range res.Hits {
		sum += TokensOf(h.Content, h.Metadata)
		found[h.DocID] = res.Paths[i]
	}
	if sum != res.TokensUsed {
		t.Errorf("tokens used %d, hits hold %d", res.TokensUsed, sum)
	}
	put := g.Node(g.Lookup("example.com/mod/store.Store.Put")).DocID
	chk := g.Node(g.Lookup("example.com/mod/store.checkLen")).DocID
	if p, ok := found[chk]; !ok || !strings.Contains(p, "CALLS store.go:checkLen()") {
		t.Errorf("checkLen not reached (path %q); hits %v", p, found)
	}
	if _, ok := found[put]; !ok {
		t.Errorf("Put not reached; hits %v", found)
	}
	if len(res.Seeds) != 1 || !strings.HasSuffix(res.Seeds[0], "app.go#L11-L22") && !strings.Contains(res.Seeds[0], "app.go") {
		t.Errorf("seeds %v", res.Seeds)
	}
	for i, h := range res.Hits {
		t.Logf("%.4f %s  %s", h.Score, filepath.Base(h.DocID), res.Paths[i])
	}
	// A smaller budget takes a prefix of the same ranking.
	small, err := Expand(ctx, col, v, q, ExpandOptions{SeedK: 1, BudgetTokens: 60})
	if err != nil {
		t.Fatal(err)
	}
	if small.TokensUsed > 60 || len(small.Hits) >= len(res.Hits) {
		t.Errorf("budget 60: %d tokens, %d hits (400: %d)", small.TokensUsed, len(small.Hits), len(res.Hits))
	}
	// A principal that may read nothing gets nothing.
	none, err := Expand(ctx, col, v, contract.Query{Text: "stores every value", Mode: contract.Lexical,
		Scope: contract.Scope{Namespace: "elsewhere/"}}, ExpandOptions{SeedK: 1})
	if err == nil && len(none.Hits) > 0 {
		t.Errorf("out-of-scope expansion returned %d hits", len(none.Hits))
	}
	// callers / callees.
	if cs := Calls(v, "Store.Put", true, 10); len(cs) != 1 || cs[0].Name != "apply" {
		t.Errorf("callers of Store.Put: %+v", cs)
	}
	if cs := Calls(v, "Store.Put", false, 10); len(cs) != 2 {
		t.Errorf("callees of Store.Put: %+v", cs)
	}
}

// TestExpandHidesUnreadablePaths: a chunk reached only through a chunk
// the principal may not read is not returned, and no path names the
// unreadable one.
func TestExpandHidesUnreadablePaths(t *testing.T) {
	db, err := engine.Open(t.TempDir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	col, err := db.CreateCollection("code", engine.CollectionOptions{Dim: 2, Sync: "none"})
	if err != nil {
		t.Fatal(err)
	}
	docs := []contract.Document{
		{ID: "a", Content: "alpha entry handler", Namespace: "ta/", Trust: contract.Authoritative},
		{ID: "b", Content: "secret middle", Namespace: "tb/", Trust: contract.Authoritative},
		{ID: "c", Content: "zzz leaf", Namespace: "ta/", Trust: contract.Authoritative},
		{ID: "d", Content: "zzz direct", Namespace: "ta/", Trust: contract.Authoritative},
	}
	if _, err := col.Upsert(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	b := graph.NewBuilder()
	id := map[string]graph.NodeID{}
	for _, n := range []string{"a", "b", "c", "d"} {
		id[n] = b.AddNode(graph.Node{Kind: graph.Func, Key: n, Name: "fn_" + n, File: "/r/" + n + ".go", DocID: n})
	}
	b.AddEdge(id["a"], id["b"], graph.Calls, 1)
	b.AddEdge(id["b"], id["c"], graph.Calls, 1)
	b.AddEdge(id["a"], id["d"], graph.Calls, 2)
	v := graph.NewView(b.Build())
	q := contract.Query{Text: "alpha entry", Mode: contract.Lexical, Principal: &contract.Principal{Name: "u", Namespaces: []string{"ta/"}}}
	res, err := Expand(context.Background(), col, v, q, ExpandOptions{SeedK: 1, BudgetTokens: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, h := range res.Hits {
		got = append(got, h.DocID)
		if strings.Contains(res.Paths[i], "fn_b") {
			t.Errorf("path names the unreadable chunk: %q", res.Paths[i])
		}
	}
	if strings.Join(got, ",") != "a,d" {
		t.Fatalf("hits %v, want a,d", got)
	}
	// The trusted caller sees all four.
	q.Principal = nil
	res, _ = Expand(context.Background(), col, v, q, ExpandOptions{SeedK: 1, BudgetTokens: 1000})
	if len(res.Hits) != 4 {
		t.Fatalf("trusted caller: %d hits", len(res.Hits))
	}
}
