package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
)

// TestCorruptCollectionDegrades: a collection whose store no longer opens
// (its CURRENT removed after a flush) does not stop the server. The other
// collection serves; the damaged one answers 503 collection_unavailable
// with the reason; /healthz says degraded and names it (open mode; with
// API keys only for an admin key); /metrics counts it; CreateCollection
// cannot replace it and DB.Backup refuses rather than skip it; its files
// are left as they were.
func TestCorruptCollectionDegrades(t *testing.T) {
	dir := t.TempDir()
	db, err := engine.Open(dir, engine.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{"good", "bad"} {
		col, err := db.CreateCollection(name, engine.CollectionOptions{Dim: 4, Analyzer: engine.AnalyzerProse})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := col.Upsert(ctx, []contract.Document{mkDoc(name+"-1", "alpha beta "+name, "", []float32{1, 2, 3, 4})}); err != nil {
			t.Fatal(err)
		}
		if err := col.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	badStore := filepath.Join(dir, "collections", "bad", "store")
	if err := os.Remove(filepath.Join(badStore, "CURRENT")); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(badStore, "seg-*.sst"))
	if len(segs) == 0 {
		t.Fatal("setup: no segment in the damaged store")
	}

	db, err = engine.Open(dir, engine.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatalf("one corrupt collection stopped the database: %v", err)
	}
	defer db.Close()
	for _, keys := range []bool{false, true} {
		o := Options{DataDir: dir, Logger: quietLogger()}
		if keys {
			o.APIKeys = []APIKey{{Key: "admin-key-0123456789abcdef", Principal: "root", Admin: true},
				{Key: "user-key-0123456789abcdef0", Principal: "u", Namespaces: []string{"*"}}}
		}
		s, err := New(db, o)
		if err != nil {
			t.Fatal(err)
		}
		c := newClient(t, httptestServer(t, s))
		admin, user := c, c
		if keys {
			admin, user = c.with("admin-key-0123456789abcdef"), c.with("user-key-0123456789abcdef0")
		}
		if ids := searchIDs(t, user, "good", map[string]any{"text": "alpha"}); len(ids) != 1 || ids[0] != "good-1" {
			t.Fatalf("healthy collection: hits %v", ids)
		}
		for _, rq := range []struct{ method, path string }{
			{"POST", "/v1/collections/bad/search"},
			{"GET", "/v1/collections/bad/documents/bad-1"},
			{"GET", "/v1/collections/bad"},
		} {
			var body any
			if rq.method == "POST" {
				body = map[string]any{"text": "alpha"}
			}
			code, _, b := user.do(rq.method, rq.path, body)
			if code != http.StatusServiceUnavailable {
				t.Fatalf("%s %s on the corrupt collection: %d %s", rq.method, rq.path, code, b)
			}
			e := checkErrShape(t, b)
			if e.Status != StatusUnavailable || e.Errors[0].ErrorType != "collection_unavailable" || !strings.Contains(e.Errors[0].Message, "CURRENT") ||
				strings.Contains(e.Errors[0].Message, dir) {
				t.Fatalf("%s %s: error %+v; want collection_unavailable naming CURRENT, paths relative to the data dir", rq.method, rq.path, e)
			}
		}
		var h struct {
			Status      string `json:"status"`
			Count       int    `json:"unavailable_collections"`
			Unavailable []struct {
				Collection, Reason string
			} `json:"unavailable"`
		}
		admin.must(http.StatusOK, "GET", "/healthz", nil, &h)
		if h.Status != "degraded" || h.Count != 1 || len(h.Unavailable) != 1 || h.Unavailable[0].Collection != "bad" ||
			!strings.Contains(h.Unavailable[0].Reason, "CURRENT") {
			t.Fatalf("healthz: %+v", h)
		}
		if keys {
			_, _, b := c.do("GET", "/healthz", nil)
			var anon map[string]any
			json.Unmarshal(b, &anon)
			if anon["status"] != "degraded" || strings.Contains(string(b), "bad") {
				t.Fatalf("anonymous healthz: %s", b)
			}
		}
		_, _, m := admin.do("GET", "/metrics", nil)
		if !strings.Contains(string(m), "\nstrata_collections_unavailable 1\n") {
			t.Fatalf("metrics lack strata_collections_unavailable 1")
		}
		s.Close()
	}
	if _, err := db.CreateCollection("bad", engine.CollectionOptions{Dim: 4}); err == nil {
		t.Fatal("CreateCollection replaced the unavailable collection")
	}
	if _, err := db.Backup(ctx, filepath.Join(t.TempDir(), "bk")); !errors.Is(err, engine.ErrUnavailable) {
		t.Fatalf("Backup with an unavailable collection: %v", err)
	}
	for _, p := range segs {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("damaged collection's segment: %v", err)
		}
	}
}
