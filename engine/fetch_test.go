package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestFetch: Fetch returns the named documents in order, once each, only
// within the scope and the principal's read rights (others are absent
// like unknown ids), and drops a verified document whose source changed.
func TestFetch(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2})
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.go")
	if err := os.WriteFile(path, []byte("package a\nfunc F() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := doc("src", "func F", []float32{1, 0})
	src.SourceURI = "file://" + path + "#L2-L2"
	src.VersionHash = VersionHash([]byte("func F() {}\n"))
	mustUpsertVerifiable(t, c, src)
	a := doc("a", "tenant a", []float32{0, 1})
	a.Namespace = "ta/"
	b := doc("b", "tenant b", []float32{0, 1})
	b.Namespace, b.ACL = "tb/", []string{"bob"}
	mustUpsert(t, c, a, b)

	ids := func(r contract.Result) []string {
		var out []string
		for _, h := range r.Hits {
			out = append(out, h.DocID)
		}
		return out
	}
	r, err := c.Fetch(ctx, contract.Query{}, []string{"b", "absent", "a", "src", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(r); len(got) != 3 || got[0] != "b" || got[1] != "a" || got[2] != "src" {
		t.Fatalf("trusted fetch: %v", got)
	}
	r, _ = c.Fetch(ctx, contract.Query{Scope: contract.Scope{Namespace: "ta/"}}, []string{"a", "b"})
	if got := ids(r); len(got) != 1 || got[0] != "a" {
		t.Fatalf("namespace scope: %v", got)
	}
	r, _ = c.Fetch(ctx, contract.Query{Principal: &contract.Principal{Name: "eve"}}, []string{"a", "b"})
	for _, id := range ids(r) {
		if id == "b" {
			t.Fatalf("eve read b: %v", ids(r))
		}
	}
	r, _ = c.Fetch(ctx, contract.Query{Verify: true}, []string{"src"})
	if len(r.Hits) != 1 {
		t.Fatalf("verified fresh source dropped: %+v", r.Dropped)
	}
	if err := os.WriteFile(path, []byte("package a\nfunc G() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, _ = c.Fetch(ctx, contract.Query{Verify: true}, []string{"src"})
	if len(r.Hits) != 0 || len(r.Dropped) != 1 || r.Dropped[0].Reason != contract.DropStale {
		t.Fatalf("stale source kept: %+v", r)
	}
}
