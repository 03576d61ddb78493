package mcp

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stratasearch/strata/engine"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkToolCall: one tool call over the in-memory transport (client
// and server in this process: JSON-RPC encoding both ways, validation,
// the engine call, staging) on the test fixture.
func BenchmarkToolCall(b *testing.B) {
	root, db := fixture(b)
	s := newServer(b, db, root, nil)
	cs := connect(b, s, Caller{})
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		args map[string]any
	}{
		{"search", map[string]any{"query": "export deadline widgets", "top_k": 5}},
		{"find_definition", map[string]any{"symbol": "Frobnicate"}},
	} {
		b.Run("tool="+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: bc.name, Arguments: bc.args})
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkStoreToolCall is BenchmarkToolCall on a store indexed with
// `searchd index` (collection "code"): STRATA_MCP_BENCH_DATA names its
// data directory and STRATA_MCP_BENCH_ROOT the indexed root (default
// $GOROOT/src, the agent session's store). The calls are the agent
// session's (bench/cmd/mcp-session). Without STRATA_MCP_BENCH_DATA it is
// skipped.
func BenchmarkStoreToolCall(b *testing.B) {
	data := os.Getenv("STRATA_MCP_BENCH_DATA")
	if data == "" {
		b.Skip("STRATA_MCP_BENCH_DATA not set")
	}
	root := os.Getenv("STRATA_MCP_BENCH_ROOT")
	if root == "" {
		root = filepath.Join(runtime.GOROOT(), "src")
	}
	db, err := engine.Open(data, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	s := newServer(b, db, root, func(o *Options) { o.Collection = "code" })
	cs := connect(b, s, Caller{})
	ctx := context.Background()
	uri := "file://" + filepath.ToSlash(filepath.Join(root, "cmd/link/internal/wasm/asm.go")) + "#L413-L474"
	for _, bc := range []struct {
		name string
		args map[string]any
	}{
		{"repo_map", map[string]any{}},
		{"search", map[string]any{"query": "export times out for large accounts", "top_k": 5}},
		{"read", map[string]any{"uri": uri}},
		{"find_definition", map[string]any{"symbol": "Lookup"}},
		{"list", map[string]any{"path": "net/http", "limit": 50}},
	} {
		b.Run("tool="+bc.name, func(b *testing.B) {
			if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: bc.name, Arguments: bc.args}); err != nil {
				b.Fatal(err) // the first call builds the catalog
			}
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: bc.name, Arguments: bc.args})
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
