package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/remote"
	"github.com/stratasearch/strata/internal/testenv/s3gw"
	"github.com/stratasearch/strata/vfs/objstore"
)

// TestServeObjectStore: one writer publishes a DB to the gateway; two
// `searchd serve --object-store --read-only` processes serve it, answer
// exactly what the writer's DB answers, refuse writes, report degraded
// while the gateway is down, and follow a new version (one by polling,
// one on SIGHUP).
func TestServeObjectStore(t *testing.T) {
	if args := os.Getenv("STRATA_TEST_OBJSTORE_ARGS"); args != "" {
		json.Unmarshal([]byte(args), &os.Args)
		main()
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("starts reader processes")
	}
	g := s3gw.Start(t)
	ctx := context.Background()
	st, err := objstore.New(objstore.Config{Endpoint: g.Endpoint, AccessKey: s3gw.AccessKey, SecretKey: s3gw.SecretKey,
		Bucket: "strata", Prefix: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	db, err := engine.Open(t.TempDir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.CreateCollection("docs", engine.CollectionOptions{Dim: 2, Metric: "l2", Analyzer: engine.AnalyzerProse})
	if err != nil {
		t.Fatal(err)
	}
	put := func(lo, hi int) {
		var docs []contract.Document
		for i := lo; i < hi; i++ {
			docs = append(docs, contract.Document{ID: fmt.Sprint("doc", i), Content: fmt.Sprintf("word%d common text %d", i%7, i),
				Vector: []float32{float32(i), 1}, Trust: contract.Authoritative})
		}
		if _, err := c.Upsert(ctx, docs); err != nil {
			t.Fatal(err)
		}
		if err := c.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	put(0, 60)
	w, err := remote.OpenWriter(ctx, st, db, remote.WriterOptions{LeaseTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	v1, err := w.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Reader 0 polls every 50ms; reader 1 polls hourly and refreshes on
	// SIGHUP (poke).
	var addrs []string
	var cmds []*exec.Cmd
	poke := func(i int) {
		if i == 1 {
			cmds[1].Process.Signal(syscall.SIGHUP)
		}
	}
	for i := 0; i < 2; i++ {
		poll := "50ms"
		if i == 1 {
			poll = "1h"
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		args, _ := json.Marshal([]string{"searchd", "serve", "--object-store", "s3://strata/e2e", "--read-only",
			"--cache-dir", t.TempDir(), "--cache-bytes", "10000000", "--addr", addr, "--poll-interval", poll,
			"--log-level", "warn", "--data", t.TempDir()})
		cmd := exec.Command(os.Args[0], "-test.run=^TestServeObjectStore$")
		cmd.Env = append(append(os.Environ(), g.Env()...), "STRATA_TEST_OBJSTORE_ARGS="+string(args))
		var serr bytes.Buffer
		cmd.Stderr = &serr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Signal(os.Interrupt)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
			}
		})
		for j := 0; ; j++ {
			if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					break
				}
			}
			if j > 400 {
				t.Fatalf("reader %d did not become healthy:\n%s", i, serr.String())
			}
			time.Sleep(25 * time.Millisecond)
		}
		addrs = append(addrs, addr)
		cmds = append(cmds, cmd)
	}
	search := func(addr string, q contract.Query) ([]string, uint64) {
		b, _ := json.Marshal(q)
		resp, err := http.Post("http://"+addr+"/v1/collections/docs/search", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var res contract.Result
		if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&res) != nil {
			t.Fatalf("search on %s: status %d", addr, resp.StatusCode)
		}
		v, _ := strconv.ParseUint(resp.Header.Get("X-Strata-Manifest-Version"), 10, 64)
		var ids []string
		for _, h := range res.Hits {
			ids = append(ids, h.DocID)
		}
		return ids, v
	}
	local := func(q contract.Query) []string {
		res, err := c.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range res.Hits {
			ids = append(ids, h.DocID)
		}
		return ids
	}
	qs := []contract.Query{{Text: "word3 common", Mode: contract.Lexical, TopK: 5},
		{Vector: []float32{17.2, 1}, Mode: contract.Dense, TopK: 5},
		{Text: "word5", Vector: []float32{40, 1}, Mode: contract.Hybrid, TopK: 5}}
	for _, addr := range addrs {
		for _, q := range qs {
			got, v := search(addr, q)
			if v != v1 || !reflect.DeepEqual(got, local(q)) {
				t.Fatalf("reader %s (version %d): %v, local %v", addr, v, got, local(q))
			}
		}
		resp, err := http.Post("http://"+addr+"/v1/collections/docs/documents", "application/json", strings.NewReader(`{"documents":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Fatalf("write to a read-only replica: status %d", resp.StatusCode)
		}
	}
	// The gateway goes away: the replicas keep answering from their
	// caches and report degraded; they recover once it is back.
	health := func(addr string) int {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	g.Stop()
	for i, addr := range addrs {
		for j := 0; health(addr) != http.StatusServiceUnavailable; j++ {
			poke(i)
			if j > 400 {
				t.Fatalf("reader %s not degraded with the gateway stopped", addr)
			}
			time.Sleep(25 * time.Millisecond)
		}
		if got, v := search(addr, qs[0]); v != v1 || !reflect.DeepEqual(got, local(qs[0])) {
			t.Fatalf("reader %s stopped serving during the outage", addr)
		}
	}
	if err := g.Restart(); err != nil {
		t.Fatal(err)
	}
	for i, addr := range addrs {
		for j := 0; health(addr) != http.StatusOK; j++ {
			poke(i)
			if j > 400 {
				t.Fatalf("reader %s did not recover after the gateway restart", addr)
			}
			time.Sleep(25 * time.Millisecond)
		}
	}
	put(60, 90)
	v2, err := w.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, addr := range addrs {
		for j := 0; ; j++ {
			poke(i)
			got, v := search(addr, qs[1])
			if v == v2 {
				if !reflect.DeepEqual(got, local(qs[1])) {
					t.Fatalf("reader %s at version %d: %v, local %v", addr, v, got, local(qs[1]))
				}
				break
			}
			if j > 400 {
				t.Fatalf("reader %s still at version %d, published %d", addr, v, v2)
			}
			time.Sleep(25 * time.Millisecond)
		}
	}
}

// TestServeObjectStoreWriter: `searchd serve --object-store` (no
// --read-only) publishes what its API writes once flushed; a writer
// killed with SIGKILL and restarted waits for its old lease, replays its
// WAL and publishes the rest; a read-only replica follows throughout.
func TestServeObjectStoreWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("starts searchd processes")
	}
	g := s3gw.Start(t)
	data := t.TempDir()
	start := func(args ...string) (*exec.Cmd, string, *bytes.Buffer) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		a, _ := json.Marshal(append([]string{"searchd", "serve", "--addr", addr, "--log-level", "warn"}, args...))
		cmd := exec.Command(os.Args[0], "-test.run=^TestServeObjectStore$")
		cmd.Env = append(append(os.Environ(), g.Env()...), "STRATA_TEST_OBJSTORE_ARGS="+string(a))
		var serr bytes.Buffer
		cmd.Stderr = &serr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, addr, &serr
	}
	call := func(addr, method, path string, body any) (int, []byte) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, "http://"+addr+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		var out bytes.Buffer
		out.ReadFrom(resp.Body)
		return resp.StatusCode, out.Bytes()
	}
	waitFor := func(what string, serr *bytes.Buffer, ok func() bool) {
		t.Helper()
		for i := 0; !ok(); i++ {
			if i > 600 {
				t.Fatalf("timed out waiting for %s:\n%s", what, serr.String())
			}
			time.Sleep(25 * time.Millisecond)
		}
	}
	wargs := []string{"--data", data, "--object-store", "s3://strata/w2e", "--publish-interval", "50ms", "--lease-ttl", "1s"}
	wcmd, waddr, werr := start(wargs...)
	waitFor("the writer", werr, func() bool { c, _ := call(waddr, "GET", "/healthz", nil); return c == 200 })
	if c, b := call(waddr, "POST", "/v1/collections", map[string]any{"name": "docs",
		"options": map[string]any{"dim": 2, "metric": "l2", "analyzer": "prose"}}); c != 201 {
		t.Fatalf("create: %d %s", c, b)
	}
	put := func(lo, hi int) {
		var docs []map[string]any
		for i := lo; i < hi; i++ {
			docs = append(docs, map[string]any{"id": fmt.Sprint("doc", i), "content": fmt.Sprint("zebra number ", i),
				"vector": []float32{float32(i), 1}, "trust": "authoritative"})
		}
		if c, b := call(waddr, "POST", "/v1/collections/docs/documents", map[string]any{"documents": docs}); c != 200 {
			t.Fatalf("upsert: %d %s", c, b)
		}
	}
	put(0, 30)
	if c, b := call(waddr, "POST", "/v1/jobs", map[string]any{"kind": "flush", "collection": "docs"}); c/100 != 2 {
		t.Fatalf("flush job: %d %s", c, b)
	}
	_, raddr, rerr := start("--object-store", "s3://strata/w2e", "--read-only", "--cache-dir", t.TempDir(),
		"--poll-interval", "50ms", "--data", t.TempDir())
	count := func() int {
		c, b := call(raddr, "POST", "/v1/collections/docs/search", map[string]any{"text": "zebra", "mode": "lexical", "top_k": 100})
		if c != 200 {
			return -1
		}
		var res contract.Result
		json.Unmarshal(b, &res)
		return len(res.Hits)
	}
	waitFor("the replica to serve 30 documents", rerr, func() bool { return count() == 30 })
	// Acknowledged but unflushed writes, then kill -9 the writer.
	put(30, 50)
	wcmd.Process.Kill()
	wcmd.Wait()
	wcmd, waddr, werr = start(wargs...)
	waitFor("the restarted writer", werr, func() bool { c, _ := call(waddr, "GET", "/healthz", nil); return c == 200 })
	if c, b := call(waddr, "POST", "/v1/jobs", map[string]any{"kind": "flush", "collection": "docs"}); c/100 != 2 {
		t.Fatalf("flush job: %d %s", c, b)
	}
	waitFor("the replica to serve all 50 acknowledged documents", rerr, func() bool { return count() == 50 })
}
