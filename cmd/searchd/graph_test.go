package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/ingest/codegraph"
	"github.com/stratasearch/strata/ingest/lang"
)

// TestCLIIndexGraph: index --graph writes the code graph beside the
// manifest, its nodes name the chunks the run wrote, and loadGraph (what
// serve and mcp use) reads it back; without --graph there is none.
func TestCLIIndexGraph(t *testing.T) {
	root, data := t.TempDir(), filepath.Join(t.TempDir(), "d")
	src := "package p\n\n// Frobnicate turns widgets blue.\nfunc Frobnicate() {}\n\nfunc other() { Frobnicate(); Frobnicate() }\n"
	if err := os.WriteFile(filepath.Join(root, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := loadGraph(data, "code"); err != nil || st != nil {
		t.Fatalf("before indexing: %v %v", st, err)
	}
	out, err := capture(t, func() error { return runIndex([]string{root, "--data", data, "--graph"}) })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "graph:   1 Go files (syntax-level)") {
		t.Errorf("index output:\n%s", out)
	}
	st, err := loadGraph(data, "code")
	if err != nil || st == nil {
		t.Fatalf("loadGraph: %v", err)
	}
	cs := codegraph.Calls(st.View(), "Frobnicate", true, 10)
	if len(cs) != 1 || cs[0].Name != "other" || cs[0].Count != 2 || cs[0].DocID != filepath.Join(root, "p.go")+"#L6-L6" {
		t.Fatalf("callers of Frobnicate: %+v", cs)
	}
	os.WriteFile(graphPath(data, "code"), []byte("STRGRAF\x00garbage"), 0o644)
	if _, err := loadGraph(data, "code"); err == nil || !strings.Contains(err.Error(), "code.graph") {
		t.Fatalf("corrupt graph file: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and polling readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// graphTree writes a module whose Entry calls helper in another file,
// indexes it with --graph into data, and returns the root.
func graphTree(t *testing.T, data string) string {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"go.mod": "module example.com/w\n\ngo 1.22\n",
		"a.go":   "package w\n\n// Entry frobnicates the widgets.\nfunc Entry() int { return helper() }\n",
		"b.go":   "package w\n\nfunc helper() int { return 1 }\n",
	})
	if _, err := capture(t, func() error {
		return runIndex([]string{root, "--data", data, "--graph", "--embedder", "none", "--bridge=false"})
	}); err != nil {
		t.Fatal(err)
	}
	return root
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// editTree makes Entry call zap in a new file and removes helper's file.
func editTree(t *testing.T, root string) {
	t.Helper()
	writeFiles(t, root, map[string]string{
		"a.go": "package w\n\n// Entry frobnicates the widgets.\nfunc Entry() int { return zap() }\n",
		"c.go": "package w\n\nfunc zap() int { return 2 }\n",
	})
	if err := os.Remove(filepath.Join(root, "b.go")); err != nil {
		t.Fatal(err)
	}
}

func callees(v *graph.View, key string) string {
	var ns []string
	for _, c := range codegraph.Calls(v, key, false, 100) {
		ns = append(ns, c.Name)
	}
	return strings.Join(ns, ",")
}

// checkGraphEdited checks the edited tree's graph: Entry calls zap, helper
// is gone, and no edge leads into a node that is not live.
func checkGraphEdited(t *testing.T, v *graph.View) {
	t.Helper()
	if got := callees(v, "example.com/w.Entry"); got != "zap" {
		t.Fatalf("callees of Entry: %q", got)
	}
	if v.Lookup("example.com/w.helper") != graph.None {
		t.Fatal("helper, whose file is gone, is still in the graph")
	}
	for id := graph.NodeID(0); int(id) < v.N(); id++ {
		v.Out(id, func(e graph.Edge) bool {
			if !v.Live(e.To) {
				t.Fatalf("edge from %s into a replaced node", v.Node(id).Key)
			}
			return true
		})
	}
}

// TestCLIIndexUpdatesGraph: a plain re-index of a tree whose collection
// has a graph updates the graph of the files that changed and saves it.
func TestCLIIndexUpdatesGraph(t *testing.T) {
	data := filepath.Join(t.TempDir(), "d")
	root := graphTree(t, data)
	st, err := loadGraph(data, "code")
	if err != nil || callees(st.View(), "example.com/w.Entry") != "helper" {
		t.Fatalf("graph after index --graph: %v", err)
	}
	editTree(t, root)
	out, err := capture(t, func() error { return runIndex([]string{root, "--data", data, "--embedder", "none", "--bridge=false"}) })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "graph:   3 files updated") {
		t.Errorf("index output:\n%s", out)
	}
	st, err = loadGraph(data, "code")
	if err != nil {
		t.Fatal(err)
	}
	checkGraphEdited(t, st.View())
}

// TestCLIIndexGraphPaths: index --graph takes several PATHs, like plain
// index, and graphs them all into one graph.
func TestCLIIndexGraphPaths(t *testing.T) {
	a, b, data := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "d")
	writeFiles(t, a, map[string]string{"a.go": "package a\n\nfunc Alpha() { beta() }\n\nfunc beta() {}\n"})
	writeFiles(t, b, map[string]string{"b.py": "def gamma():\n    return delta()\n\ndef delta():\n    return 1\n"})
	out, err := capture(t, func() error {
		return runIndex([]string{a, b, "--data", data, "--graph", "--embedder", "none", "--bridge=false"})
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	st, err := loadGraph(data, "code")
	if err != nil || st == nil {
		t.Fatalf("loadGraph: %v", err)
	}
	v := st.View()
	if got := callees(v, "Alpha"); got != "beta" {
		t.Errorf("callees of Alpha (first PATH): %q", got)
	}
	if lang.Available() {
		if got := callees(v, "gamma"); got != "delta" {
			t.Errorf("callees of gamma (second PATH): %q", got)
		}
	}
}

// TestCLIWatchUpdatesGraph: under index --watch (watchTree), a real edit
// of the tree (a call rewired into a new file, a file removed) reaches
// the graph without a rebuild: an expansion from the edited function
// follows the new edge and never one into a replaced node, and the saved
// graph holds the edit once the watch stops.
func TestCLIWatchUpdatesGraph(t *testing.T) {
	data := filepath.Join(t.TempDir(), "d")
	root := graphTree(t, data)
	db, col, err := openCollection(data, "code", false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	o := ingest.Options{ExcludePaths: []string{data}}
	o.EnsureDefaults()
	ix, err := ingest.NewIndexer(col, manifestPath(data, "code"), o)
	if err != nil {
		t.Fatal(err)
	}
	gst, err := loadGraph(data, "code")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- watchTree(ctx, &out, ix, gst, data, "code", root, o, 10*time.Millisecond) }()
	// The watcher is registered once a pass reports a sentinel write.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "re-indexed:"); {
		if time.Now().After(deadline) {
			t.Fatalf("watcher saw no event within 10s:\n%s", out.String())
		}
		writeFiles(t, root, map[string]string{"sentinel.txt": time.Now().String()})
		time.Sleep(20 * time.Millisecond)
	}
	editTree(t, root)
	for deadline := time.Now().Add(10 * time.Second); callees(gst.View(), "example.com/w.Entry") != "zap" || gst.View().Lookup("example.com/w.helper") != graph.None; {
		if time.Now().After(deadline) {
			t.Fatalf("graph not updated within 10s:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	checkGraphEdited(t, gst.View())
	res, err := codegraph.Expand(ctx, col, gst.View(), contract.Query{Text: "frobnicates widgets", Mode: contract.Lexical}, codegraph.ExpandOptions{SeedK: 1})
	if err != nil {
		t.Fatal(err)
	}
	paths := strings.Join(res.Paths, "\n")
	if !strings.Contains(paths, "Entry() -> CALLS c.go:zap()") || strings.Contains(paths, "helper") {
		t.Fatalf("expansion after the edit:\n%s", paths)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "graph: ") {
		t.Errorf("watch output:\n%s", out.String())
	}
	st, err := loadGraph(data, "code")
	if err != nil {
		t.Fatal(err)
	}
	checkGraphEdited(t, st.View())
}
