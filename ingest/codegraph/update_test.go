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
	us, err := u.Update(context.Background(), []string{file, filepath.Join(root, "app", "gone.go")})
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
	if _, err := u.Update(context.Background(), []string{filepath.Join(root, "app", "app.go")}); err != nil {
		t.Fatal(err)
	}
	if st.View().Lookup("example.com/mod/app.Run") != graph.None {
		t.Fatal("deleted file's function still in the graph")
	}
}
