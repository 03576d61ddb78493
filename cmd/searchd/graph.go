package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
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

// writeGraph builds the code graph of root (codegraph.BuildTree: Go
// type-checked when root has a go.mod, the tree-sitter languages by
// scope and import) and writes it to graphPath.
func writeGraph(ctx context.Context, out io.Writer, dataDir, col, root string, o ingest.Options) error {
	t := time.Now()
	g, st, err := codegraph.BuildTree(ctx, root, codegraph.GoOptions{}, o)
	if err != nil {
		return fmt.Errorf("index: graph: %w", err)
	}
	n, err := graph.WriteFile(graphPath(dataDir, col), g)
	if err != nil {
		return fmt.Errorf("index: graph: %w", err)
	}
	fmt.Fprintf(out, "graph:   %s: %d nodes, %d edges, %.1f MiB in %v\n", st, g.N(), g.NumEdges(), float64(n)/(1<<20), time.Since(t).Round(time.Millisecond))
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
