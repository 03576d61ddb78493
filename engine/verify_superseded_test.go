package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// A hit found before its document was replaced (a watcher re-indexing an
// edit between a search's retrieval and its verification) is stale, and
// verification drops it: it used to fall back to the non-entitled rule
// (the fresh snapshot's version no longer matched the hit) and keep the
// hit unread.
func TestVerifyDropsHitSupersededBeforeVerification(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2})
	dir := t.TempDir()
	path := filepath.Join(dir, "w.go")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := func(s string) contract.Document {
		x := doc("w.go#L1-L1", s, nil)
		x.SourceURI = "file://" + filepath.ToSlash(path) + "#L1-L1"
		x.VersionHash = VersionHash([]byte(s + "\n"))
		return x
	}
	write("marker1x\n")
	mustUpsertVerifiable(t, c, d("marker1x"))
	res := mustSearch(t, c, contract.Query{Text: "marker1x", TopK: 5, Mode: contract.Lexical})
	if len(res.Hits) != 1 {
		t.Fatalf("search: %v", ids(res.Hits))
	}
	old := res.Hits[0]
	// Verified at once, the hit is current.
	if kept, dropped := c.verifyHits(&contract.Query{Verify: true}, []contract.Envelope{old}); len(kept) != 1 || len(dropped) != 0 {
		t.Fatalf("current hit: kept %d, dropped %v", len(kept), dropped)
	}
	// The file is edited (same size) and re-indexed before verification.
	write("marker2x\n")
	mustUpsertVerifiable(t, c, d("marker2x"))
	kept, dropped := c.verifyHits(&contract.Query{Verify: true}, []contract.Envelope{old})
	if len(kept) != 0 || len(dropped) != 1 || dropped[0].Reason != contract.DropStale {
		t.Fatalf("superseded hit: kept %v, dropped %v; want it dropped as stale", ids(kept), dropped)
	}
}
