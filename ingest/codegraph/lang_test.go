package codegraph

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/ingest/lang"
)

// TestBuildLang resolves calls in Python, TypeScript and C by scope and
// import, and resolves nothing it cannot know (p.parse on a local).
func TestBuildLang(t *testing.T) {
	if !lang.Available() {
		t.Skip("tree-sitter needs cgo")
	}
	root, _ := filepath.Abs("testdata/lang")
	files, _, err := ingest.Walk(root, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	r := BuildLang(paths, ingest.Options{})
	if len(r.Errors) > 0 || r.Files != 7 {
		t.Fatalf("%d files, errors %v", r.Files, r.Errors)
	}
	g := graph.FromFragments(r.Fragments)
	k := func(file, sym string) string { return "lang:" + filepath.Join(root, file) + "#" + sym }
	got := map[string]bool{}
	for e := range edges(g) {
		if strings.Contains(e, " CALLS ") {
			got[e] = true
		}
	}
	want := []string{
		k("pkg/app.py", "Parser.parse") + " CALLS " + k("pkg/app.py", "Parser.clean"), // self.clean
		k("pkg/app.py", "Parser.clean") + " CALLS " + k("pkg/util.py", "normalize"),   // from .util import normalize
		k("pkg/app.py", "main") + " CALLS " + k("pkg/util.py", "unused"),              // util.unused, from . import util
		k("pkg/app.py", "main") + " CALLS " + k("pkg/app.py", "Parser"),               // a constructor call
		k("web/store.ts", "Store.put") + " CALLS " + k("web/store.ts", "encode"),
		k("web/main.ts", "run") + " CALLS " + k("web/store.ts", "encode"),
		k("c/main.c", "main") + " CALLS " + k("c/buf.c", "buf_len"), // through the header's prototype
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("missing %s", w)
		}
		delete(got, w)
	}
	for e := range got {
		t.Errorf("unexpected %s", e)
	}
	// Nodes carry chunk ids.
	if n := g.Node(g.Lookup(k("pkg/app.py", "Parser.clean"))); n.DocID == "" || n.Kind != graph.Func {
		t.Errorf("Parser.clean: %+v", n)
	}
}

// TestBuildTree: a module tree is type-checked (BuildGo) and its other
// languages join the same graph; a tree without go.mod falls back to the
// syntax-level Go builder.
func TestBuildTree(t *testing.T) {
	root, _ := filepath.Abs("testdata/mod")
	g, st, err := BuildTree(context.Background(), root, GoOptions{Dynamic: DynamicNone}, ingest.Options{})
	if err != nil || !st.GoTyped || st.GoFiles != 2 || g.Lookup("example.com/mod/store.Store.Put") == graph.None {
		t.Fatalf("module tree: %v %+v", err, st)
	}
	root, _ = filepath.Abs("testdata/lang")
	g, st, err = BuildTree(context.Background(), root, GoOptions{}, ingest.Options{})
	if err != nil || st.GoFiles != 0 || (lang.Available() && st.LangFiles != 7) || g.N() == 0 && lang.Available() {
		t.Fatalf("lang tree: %v %+v", err, st)
	}
}

// TestBuildTreesSyntax: without a go.mod the Go files are read at syntax
// level, yet a call into another file of the package is an edge; and
// BuildTrees merges several roots into one graph.
func TestBuildTreesSyntax(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "alpha"), filepath.Join(t.TempDir(), "beta")
	for _, f := range []struct{ dir, name, src string }{
		{a, "a.go", "package alpha\n\nfunc Entry() int { return helper() }\n"},
		{a, "b.go", "package alpha\n\nfunc helper() int { return 1 }\n"},
		{b, "c.go", "package beta\n\nfunc Other() {}\n"},
	} {
		os.MkdirAll(f.dir, 0o755)
		if err := os.WriteFile(filepath.Join(f.dir, f.name), []byte(f.src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g, st, err := BuildTrees(context.Background(), []string{a, b}, GoOptions{}, ingest.Options{})
	if err != nil || st.GoFiles != 3 || st.GoTyped {
		t.Fatalf("BuildTrees: %v %+v", err, st)
	}
	if got := calleeNames(graph.NewView(g), "alpha.Entry"); got != "helper" {
		t.Fatalf("callees of Entry: %q", got)
	}
	if g.Lookup("beta.Other") == graph.None {
		t.Fatal("second root missing")
	}
}
