package engine

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestTenantStatsColdIgnoreNarrowing (a regression test from review):
// tenant statistics count the tenant's readable rows in the namespace, not
// narrowed by Scope.URIPrefix or the filter (compileTenancy's doc), in the
// cold tier too (addCold builds a tenancy bitmap per archive), so the same
// query over the same documents scores the same hot, warm and cold.
func TestTenantStatsColdIgnoreNarrowing(t *testing.T) {
	ctx := context.Background()
	c := newColl(t, CollectionOptions{Dim: 2, MultiTenant: true, Sync: "none", MemTableSizeBytes: -1})
	var docs []contract.Document
	for i := range 12 {
		txt := "lexer tokens walker"
		if i%3 == 0 {
			txt = "parser tokens parser"
		}
		dir := "x"
		if i%2 == 0 {
			dir = "y"
		}
		docs = append(docs, contract.Document{ID: fmt.Sprintf("a%02d", i), Namespace: "a/", Content: txt,
			SourceURI: fmt.Sprintf("file:///%s/%d.md", dir, i), Trust: contract.Authoritative})
	}
	if _, err := c.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	alice := &contract.Principal{Name: "alice", Namespaces: []string{"a/"}}
	q := contract.Query{Text: "parser tokens", Mode: contract.Lexical, TopK: 10, Principal: alice,
		Scope: contract.Scope{Namespace: "a/", URIPrefix: "file:///y/"},
		Tiers: []contract.Tier{contract.Hot, contract.Warm, contract.Cold}}
	run := func() map[string]float64 {
		res, err := c.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]float64{}
		for _, h := range res.Hits {
			m[h.DocID] = h.Score
		}
		return m
	}
	hot := run()
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	warm := run()
	if _, err := c.Archive(ctx, ArchiveOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(c.Archives()) != 1 {
		t.Fatalf("archives %v", c.Archives())
	}
	cold := run()
	if len(hot) == 0 || len(cold) != len(hot) || len(warm) != len(hot) {
		t.Fatalf("hits hot %d warm %d cold %d", len(hot), len(warm), len(cold))
	}
	for id, s := range hot {
		if math.Abs(warm[id]-s) > 1e-9 {
			t.Errorf("%s: hot %.6f warm %.6f", id, s, warm[id])
		}
		if math.Abs(cold[id]-s) > 1e-9 {
			t.Errorf("%s: hot %.6f cold %.6f (cold stats narrowed by URIPrefix)", id, s, cold[id])
		}
	}
}
