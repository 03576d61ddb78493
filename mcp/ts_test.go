package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// TestMCPJobTypeScript: with the official TypeScript client over
// streamable HTTP, an admin key lists the job tools, a flush returns a job
// id at once and its completion arrives as a notifications/message; an
// ordinary key does not list them. Skips as TestMCPCancellationTypeScript.
func TestMCPJobTypeScript(t *testing.T) {
	node, dir := tsClient(t)
	root, db := fixture(t)
	js := jobServer(t, db, t.TempDir(), root)
	defer js.Close()
	s := newServer(t, db, root, func(o *Options) { o.Jobs = js })
	auth := func(r *http.Request) (Caller, bool) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		return Caller{Admin: tok == "admin"}, ok
	}
	ts := httptest.NewServer(s.HTTPHandler(HTTPOptions{Authenticate: auth}))
	t.Cleanup(ts.Close)
	run := func(key string, steps []map[string]any) []map[string]any {
		cfg, _ := json.Marshal(map[string]any{"transport": "http", "url": ts.URL, "key": key, "steps": steps})
		cmd := exec.Command(node, filepath.Join(dir, "client.mjs"), string(cfg))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("client: %v\n%s", err, stderr.String())
		}
		var o struct {
			Results []map[string]any `json:"results"`
		}
		if err := json.Unmarshal(out, &o); err != nil {
			t.Fatalf("client output %s: %v", out, err)
		}
		return o.Results
	}
	listed := func(r map[string]any) []string {
		var names []string
		tools, _ := r["tools"].([]any)
		for _, tl := range tools {
			n, _ := tl.(map[string]any)["name"].(string)
			names = append(names, n)
		}
		return names
	}
	res := run("admin", []map[string]any{{"op": "list"}, {"op": "job", "name": "job", "args": map[string]any{"kind": "flush"}}})
	if len(res) != 2 || !slices.Contains(listed(res[0]), "job") {
		t.Fatalf("admin results: %v", res)
	}
	note, _ := res[1]["notification"].(map[string]any)
	result, _ := res[1]["result"].(map[string]any)
	sc, _ := result["structuredContent"].(map[string]any)
	data, _ := note["data"].(map[string]any)
	if sc["job_id"] == nil || data["job_id"] != sc["job_id"] || data["state"] != "completed" || note["logger"] != "strata.jobs" {
		t.Fatalf("job step: %v", res[1])
	}
	res = run("user", []map[string]any{{"op": "list"}})
	if names := listed(res[0]); slices.Contains(names, "job") || len(names) == 0 {
		t.Fatalf("ordinary key lists %v", names)
	}
}

// tsClient returns node and tools/mcp-client, skipping the test without
// them (failing under CI=true).
func tsClient(t *testing.T) (node, dir string) {
	ci := os.Getenv("CI") == "true"
	node, err := exec.LookPath("node")
	if err != nil {
		if ci {
			t.Fatal("CI=true but node is not installed")
		}
		t.Skip("node not installed")
	}
	dir, _ = filepath.Abs(filepath.Join("..", "tools", "mcp-client"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		if ci {
			t.Fatalf("CI=true but %s has no node_modules (npm ci there)", dir)
		}
		t.Skipf("%s/node_modules missing", dir)
	}
	return node, dir
}
