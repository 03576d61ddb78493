package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/ingest/codegraph"
)

// graphPath is where `searchd index --graph` keeps a collection's code
// graph, beside its ingest manifest (engine/graph's file format).
func graphPath(dir, col string) string {
	return filepath.Join(dir, "ingest", col+".graph")
}

// writeGraph builds the code graph of roots (codegraph.BuildTrees: Go
// type-checked under a root with a go.mod, the tree-sitter languages by
// scope and import), writes it to graphPath and returns it as a store.
func writeGraph(ctx context.Context, out io.Writer, dataDir, col string, roots []string, o ingest.Options) (*graph.Store, error) {
	t := time.Now()
	g, st, err := codegraph.BuildTrees(ctx, roots, codegraph.GoOptions{}, o)
	if err != nil {
		return nil, fmt.Errorf("index: graph: %w", err)
	}
	n, err := graph.WriteFile(graphPath(dataDir, col), g)
	if err != nil {
		return nil, fmt.Errorf("index: graph: %w", err)
	}
	fmt.Fprintf(out, "graph:   %s: %d nodes, %d edges, %.1f MiB in %v\n", st, g.N(), g.NumEdges(), float64(n)/(1<<20), time.Since(t).Round(time.Millisecond))
	return graph.NewStore(g), nil
}

// saveGraph folds the store's current view into its base (Store.SetBase
// of View.Graph) and writes it to graphPath, after live updates.
func saveGraph(dataDir, col string, st *graph.Store) error {
	v := st.View()
	g := v.Graph()
	if _, err := graph.WriteFile(graphPath(dataDir, col), g); err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	st.SetBase(g, v.Epoch())
	return nil
}

// loadGraph reads a collection's code graph, nil when it has none.
func loadGraph(dataDir, col string) (*graph.Store, error) {
	g, err := graph.ReadFile(graphPath(dataDir, col))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return graph.NewStore(g), nil
}

// loadGraphs reads the code graph of every collection that has one,
// by collection name.
func loadGraphs(dataDir string) (map[string]*graph.Store, error) {
	des, err := os.ReadDir(filepath.Join(dataDir, "ingest"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m map[string]*graph.Store
	for _, de := range des {
		col, ok := strings.CutSuffix(de.Name(), ".graph")
		if !ok || !de.Type().IsRegular() {
			continue
		}
		st, err := loadGraph(dataDir, col)
		if err != nil {
			return nil, err
		}
		if m == nil {
			m = map[string]*graph.Store{}
		}
		m[col] = st
	}
	return m, nil
}
