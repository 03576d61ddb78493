package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/verify"
)

// TestVerifyHitsOutsideScope: VerifyHits takes envelopes from its caller,
// so a hit on a document the query's principal may not read, or that its
// scope does not admit, must be dropped without reading the file: the
// outcome is the same whether the file still matches or not, and the same
// as for a document that does not exist. (Search and Fetch filter by
// principal and scope before they verify; without the same checks in
// verifyHits, alice's envelope replayed by bob would be kept exactly when
// the file matched.)
func TestVerifyHitsOutsideScope(t *testing.T) {
	root := t.TempDir()
	db := openDBWith(t, Options{VerifyRoots: []verify.Root{{Namespace: "*", Dir: root}}})
	c, err := db.CreateCollection("c", CollectionOptions{Dim: 2, Sync: "none", SourceRoots: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p := filepath.Join(root, "a.txt")
	body := "probe alpha\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := contract.Document{ID: "a", Namespace: "alice", Content: body, SourceURI: "file://" + p, Trust: contract.Authoritative}
	if _, err := c.Upsert(ctx, []contract.Document{doc}, VerifiableSources()); err != nil {
		t.Fatal(err)
	}
	r := mustSearch(t, c, contract.Query{Text: "probe", TopK: 10, Mode: contract.Lexical})
	if len(r.Hits) != 1 {
		t.Fatalf("want 1 hit, got %+v", r)
	}
	hit := r.Hits[0]
	ghost := hit
	ghost.DocID = "no-such-document"
	alice := &contract.Principal{Name: "alice", Namespaces: []string{"alice"}}
	bob := &contract.Principal{Name: "bob", Namespaces: []string{"bob"}}

	outcome := func(q contract.Query, h contract.Envelope) (kept int, detail string) {
		t.Helper()
		k, d, err := c.VerifyHits(ctx, q, []contract.Envelope{h})
		if err != nil {
			t.Fatal(err)
		}
		if len(d) > 0 {
			detail = string(d[0].Reason) + ": " + d[0].Detail
		}
		return len(k), detail
	}
	if k, d := outcome(contract.Query{Verify: true, Principal: alice}, hit); k != 1 {
		t.Fatalf("alice's own fresh hit: kept %d (%s), want kept", k, d)
	}
	_, ghostDetail := outcome(contract.Query{Verify: true, Principal: bob}, ghost)
	for _, stale := range []bool{false, true} {
		if stale {
			if err := os.WriteFile(p, []byte("probe omega\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for name, q := range map[string]contract.Query{
			"bob":          {Verify: true, Principal: bob},
			"scope ns":     {Verify: true, Scope: contract.Scope{Namespace: "bob"}},
			"scope prefix": {Verify: true, Scope: contract.Scope{URIPrefix: "file:///elsewhere/"}},
		} {
			k, d := outcome(q, hit)
			if k != 0 || d != ghostDetail {
				t.Errorf("file changed %v, %s: kept %d, dropped %q; want dropped exactly as a missing document (%q)", stale, name, k, d, ghostDetail)
			}
		}
	}
	if k, _ := outcome(contract.Query{Verify: true, Principal: alice}, hit); k != 0 {
		t.Errorf("alice's hit after the file changed: kept, want dropped as stale")
	}
	if k, _ := outcome(contract.Query{}, hit); k != 1 {
		t.Errorf("without Verify or Freshness: dropped, want returned as it is")
	}
}
