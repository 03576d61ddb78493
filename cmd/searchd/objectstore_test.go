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
// exactly what the writer's DB answers, refuse writes, and follow a new
// version.
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
	var addrs []string
	for i := 0; i < 2; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		args, _ := json.Marshal([]string{"searchd", "serve", "--object-store", "s3://strata/e2e", "--read-only",
			"--cache-dir", t.TempDir(), "--cache-bytes", "10000000", "--addr", addr, "--poll-interval", "50ms",
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
	put(60, 90)
	v2, err := w.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range addrs {
		for j := 0; ; j++ {
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
