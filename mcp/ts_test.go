package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPCancellationTypeScript: the official TypeScript client aborts a
// call over streamable HTTP (it sends notifications/cancelled); the tool's
// context is cancelled — not timed out — and the session goes on
// answering. It skips without node or tools/mcp-client/node_modules,
// except under CI=true, where that fails.
func TestMCPCancellationTypeScript(t *testing.T) {
	ci := os.Getenv("CI") == "true"
	node, err := exec.LookPath("node")
	if err != nil {
		if ci {
			t.Fatal("CI=true but node is not installed")
		}
		t.Skip("node not installed")
	}
	dir, _ := filepath.Abs(filepath.Join("..", "tools", "mcp-client"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		if ci {
			t.Fatalf("CI=true but %s has no node_modules (npm ci there)", dir)
		}
		t.Skipf("%s/node_modules missing", dir)
	}
	root, db := fixture(t)
	s := newServer(t, db, root, func(o *Options) { o.Deadline = time.Minute })
	ended := make(chan error, 4)
	s.testHookCall = func(ctx context.Context, tool string) {
		if tool != "search" {
			return
		}
		select {
		case <-ctx.Done():
			ended <- context.Cause(ctx)
		case <-time.After(30 * time.Second):
			ended <- nil
		}
	}
	ts := httptest.NewServer(s.HTTPHandler(HTTPOptions{Authenticate: bearer}))
	t.Cleanup(ts.Close)
	cfg, _ := json.Marshal(map[string]any{"transport": "http", "url": ts.URL, "key": "root", "steps": []map[string]any{
		{"op": "cancel", "name": "search", "args": map[string]any{"query": "x"}, "after_ms": 200},
		{"op": "call", "name": "list", "args": map[string]any{}},
	}})
	cmd := exec.Command(node, filepath.Join(dir, "client.mjs"), string(cfg))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client: %v\n%s", err, stderr.String())
	}
	select {
	case cause := <-ended:
		if cause != context.Canceled {
			t.Fatalf("the tool's context ended with %v, want context.Canceled", cause)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the tool was not cancelled")
	}
	var o struct {
		Results []map[string]any `json:"results"`
	}
	json.Unmarshal(out, &o)
	if len(o.Results) != 2 || o.Results[0]["cancelled"] != true || o.Results[1]["isError"] == true || !strings.Contains(string(out), "a.go") {
		t.Fatalf("client results: %s", out)
	}
}
