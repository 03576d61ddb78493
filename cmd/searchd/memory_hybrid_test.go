package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMemoryServeEmbedder: a memory collection `serve --memory-collection`
// creates embeds its records with the built-in embedder, so recall is
// hybrid: a query sharing no word with any record ("cappuccino") ranks
// the record it is nearest in meaning to ("drinks espresso") first, where
// --memory-embedder none finds nothing.
// --memory-retention reaches the store's policy: a bad value is refused at
// startup.
func TestMemoryServeEmbedder(t *testing.T) {
	if args := os.Getenv("STRATA_TEST_MAIN_ARGS"); args != "" {
		json.Unmarshal([]byte(args), &os.Args)
		main()
		os.Exit(0)
	}
	for _, c := range []struct {
		embedder string
		want     int
	}{{"builtin", 3}, {"none", 0}} {
		base := startServeSubprocess(t, "^TestMemoryServeEmbedder$", "--data", filepath.Join(t.TempDir(), "d"), "--memory-collection", "memory", "--memory-embedder", c.embedder,
			"--memory-retention", "note=720h,100")
		post := func(path string, body any, out any) {
			t.Helper()
			b, _ := json.Marshal(body)
			resp, err := http.Post(base+path, "application/json", bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				var e bytes.Buffer
				e.ReadFrom(resp.Body)
				t.Fatalf("%s %s: %d %s", c.embedder, path, resp.StatusCode, e.String())
			}
			if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
				t.Fatal(err)
			}
		}
		var rr map[string]any
		post("/v1/memory/remember", map[string]any{"writes": []map[string]any{
			{"subject": "u1", "kind": "preference", "content": "the user drinks espresso every morning", "provenance": "conv:1", "evidence": "user_stated"},
			{"subject": "u1", "kind": "preference", "content": "indent the code with tabs, never spaces", "provenance": "conv:2", "evidence": "user_stated"},
			{"subject": "u1", "kind": "preference", "content": "reports are sent on friday afternoons", "provenance": "conv:3", "evidence": "user_stated"},
		}}, &rr)
		var res struct {
			Hits []struct {
				Framed string `json:"framed"`
			} `json:"hits"`
		}
		post("/v1/memory/recall", map[string]any{"subject": "u1", "text": "cappuccino"}, &res)
		if len(res.Hits) != c.want || (c.want > 0 && !strings.Contains(res.Hits[0].Framed, "espresso")) {
			t.Fatalf("--memory-embedder %s: recall of a paraphrase: %+v, want %d hit(s)", c.embedder, res.Hits, c.want)
		}
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryServeEmbedder$")
	args, _ := json.Marshal([]string{"searchd", "serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--memory-collection", "m", "--memory-retention", "rumour=1h"})
	cmd.Env = append(os.Environ(), "STRATA_TEST_MAIN_ARGS="+string(args))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "KIND=TTL") {
		t.Fatalf("a bad --memory-retention: err %v, output %s", err, out)
	}
}

// startServeSubprocess runs `searchd serve` on a free loopback port with
// flags (--data and the rest; --addr and --log-level warn are added) as
// the test binary re-run with only test run (whose body must call main
// when STRATA_TEST_MAIN_ARGS is set), stops it at cleanup, and returns its
// base URL once /healthz answers.
func startServeSubprocess(t *testing.T, run string, flags ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	args, _ := json.Marshal(append([]string{"searchd", "serve", "--addr", addr, "--log-level", "warn"}, flags...))
	srv := exec.Command(os.Args[0], "-test.run="+run)
	srv.Env = append(os.Environ(), "STRATA_TEST_MAIN_ARGS="+string(args))
	var serr bytes.Buffer
	srv.Stderr = &serr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- srv.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			srv.Process.Kill()
		}
	})
	base := "http://" + addr
	for i := 0; ; i++ {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			return base
		}
		if i > 400 {
			t.Fatalf("serve did not start: %s", serr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
