package codegraph

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
)

// TestUpdater: after an edit through the Updater, one search finds the
// new function and an expansion from it reaches its callee in the
// edited file; a deleted file leaves the graph.
func TestUpdater(t *testing.T) {
	root := t.TempDir()
	src, _ := filepath.Abs("testdata/mod")
	for _, f := range []string{"go.mod", "store/store.go", "app/app.go"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755)
		os.WriteFile(filepath.Join(root, f), b, 0o644)
	}
	col := indexTestdata(t, root)
	r, err := BuildGo(context.Background(), root, []string{"./..."}, GoOptions{Dynamic: DynamicNone})
	if err != nil {
		t.Fatal(err)
	}
	st := graph.NewStore(r.Graph())
	mf := filepath.Join(t.TempDir(), "m.json")
	ix, err := ingest.NewIndexer(col, mf, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Index(context.Background(), root, ingest.Progress{}); err != nil {
		t.Fatal(err)
	}
	u := NewUpdater(ix, st, root, r.PkgOfDir, ingest.Options{})
	file := filepath.Join(root, "store", "store.go")
	b, _ := os.ReadFile(file)
	b = append(b, "\n// Zorblax flushes quixotically.\nfunc Zorblax(s *Store) int { return checkLen(nil) }\n"...)
	os.WriteFile(file, b, 0o644)
	us, err := u.Update(context.Background(), []string{file, filepath.Join(root, "app", "gone.go")}, ingest.Progress{})
	if err != nil {
		t.Fatal(err)
	}
	if us.Index.Indexed != 1 || us.Fragments != 2 || us.GraphEpoch != 1 {
		t.Fatalf("update stats %+v", us)
	}
	res, err := Expand(context.Background(), col, st.View(), contract.Query{Text: "flushes quixotically", Mode: contract.Lexical}, ExpandOptions{SeedK: 1})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i := range res.Hits {
		paths = append(paths, res.Paths[i])
	}
	if !strings.Contains(strings.Join(paths, "\n"), "Zorblax() -> CALLS store.go:checkLen()") {
		t.Fatalf("paths after the update:\n%s", strings.Join(paths, "\n"))
	}
	os.Remove(filepath.Join(root, "app", "app.go"))
	if _, err := u.Update(context.Background(), []string{filepath.Join(root, "app", "app.go")}, ingest.Progress{}); err != nil {
		t.Fatal(err)
	}
	if st.View().Lookup("example.com/mod/app.Run") != graph.None {
		t.Fatal("deleted file's function still in the graph")
	}
}

// copyMod copies testdata/mod into a new temporary tree and returns it.
func copyMod(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	src, _ := filepath.Abs("testdata/mod")
	for _, f := range []string{"go.mod", "store/store.go", "app/app.go"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755)
		os.WriteFile(filepath.Join(root, f), b, 0o644)
	}
	return root
}

// checkNoDeadEdges fails when an edge of v leads into or out of a node
// that is not live.
func checkNoDeadEdges(t *testing.T, v *graph.View) {
	t.Helper()
	for id := graph.NodeID(0); int(id) < v.N(); id++ {
		if !v.Live(id) {
			continue
		}
		v.Out(id, func(e graph.Edge) bool {
			if !v.Live(e.To) {
				t.Fatalf("edge %s -> dead node %d", v.Node(id).Key, e.To)
			}
			return true
		})
	}
}

func calleeNames(v *graph.View, key string) string {
	var ns []string
	for _, c := range Calls(v, key, false, 100) {
		ns = append(ns, c.Name)
	}
	return strings.Join(ns, ",")
}

// TestUpdaterLoadedGraph: an Updater over a graph read back from its
// file (no PkgOfDir) keeps the module's import paths, so a caller in an
// unchanged file still reaches the edited file's functions; with no
// edited paths given (an index job) it updates exactly the files the
// index pass rewrote or dropped, a new file included; and no edge ever
// leads into a replaced node.
func TestUpdaterLoadedGraph(t *testing.T) {
	ctx := context.Background()
	root := copyMod(t)
	col := indexTestdata(t, root)
	r, err := BuildGo(ctx, root, []string{"./..."}, GoOptions{Dynamic: DynamicNone})
	if err != nil {
		t.Fatal(err)
	}
	gf := filepath.Join(t.TempDir(), "code.graph")
	if _, err := graph.WriteFile(gf, r.Graph()); err != nil {
		t.Fatal(err)
	}
	g, err := graph.ReadFile(gf)
	if err != nil {
		t.Fatal(err)
	}
	st := graph.NewStore(g)
	ix, err := ingest.NewIndexer(col, filepath.Join(t.TempDir(), "m.json"), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Index(ctx, root, ingest.Progress{}); err != nil {
		t.Fatal(err)
	}
	u := NewUpdater(ix, st, root, nil, ingest.Options{})
	if got := u.PkgOfDir[filepath.Join(root, "store")]; got != "example.com/mod/store" {
		t.Fatalf("package of store/: %q", got)
	}
	if got := calleeNames(st.View(), "example.com/mod/app.Run"); !strings.Contains(got, "New") {
		t.Fatalf("callees of Run before: %s", got)
	}
	file := filepath.Join(root, "store", "store.go")
	b, _ := os.ReadFile(file)
	b = []byte(strings.Replace(string(b), "return len(b)", "return validate(b)", 1))
	os.WriteFile(file, b, 0o644)
	os.WriteFile(filepath.Join(root, "store", "extra.go"), []byte("package store\n\nfunc validate(b []byte) int { return len(b) }\n"), 0o644)
	us, err := u.Update(ctx, nil, ingest.Progress{})
	if err != nil {
		t.Fatal(err)
	}
	if us.Index.Indexed != 2 || us.Fragments != 2 || us.Rebuilt != 2 {
		t.Fatalf("update stats %+v", us)
	}
	v := st.View()
	checkNoDeadEdges(t, v)
	if got := calleeNames(v, "example.com/mod/store.checkLen"); got != "validate" {
		t.Fatalf("callees of checkLen after the edit: %q", got)
	}
	if got := calleeNames(v, "example.com/mod/app.Run"); !strings.Contains(got, "New") {
		t.Fatalf("callees of Run (unchanged file) after the edit: %q", got)
	}
	// Nothing changed: no fragment, same epoch.
	if us2, err := u.Update(ctx, []string{file}, ingest.Progress{}); err != nil || us2.Fragments != 0 || us2.GraphEpoch != us.GraphEpoch {
		t.Fatalf("idle update: %+v %v", us2, err)
	}
	os.Remove(filepath.Join(root, "store", "extra.go"))
	if _, err := u.Update(ctx, nil, ingest.Progress{}); err != nil {
		t.Fatal(err)
	}
	v = st.View()
	checkNoDeadEdges(t, v)
	if v.Lookup("example.com/mod/store.validate") != graph.None || calleeNames(v, "example.com/mod/store.checkLen") != "" {
		t.Fatalf("removed file's function still reachable: %q", calleeNames(v, "example.com/mod/store.checkLen"))
	}
}
