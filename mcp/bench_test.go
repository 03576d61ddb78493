package mcp

import (
	"context"
	"testing"

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
