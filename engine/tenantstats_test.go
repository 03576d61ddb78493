package engine

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestTenantScopedBM25Stats: in a MultiTenant collection a tenant's lexical
// scores are computed from its own documents only. Adding another tenant's
// documents full of the query terms — in the MemTable, then flushed to a
// warm segment — leaves tenant a's scores unchanged, and they equal the
// scores of a collection that holds only tenant a's documents.
func TestTenantScopedBM25Stats(t *testing.T) {
	ctx := context.Background()
	aDocs := []contract.Document{
		{ID: "a1", Namespace: "a/", Content: "the parser reads tokens and the parser builds a tree", Trust: contract.Authoritative},
		{ID: "a2", Namespace: "a/", Content: "tokens flow from the lexer into the parser", Trust: contract.Authoritative},
		{ID: "a3", Namespace: "a/", Content: "a tree walker visits every node of the tree", Trust: contract.Authoritative},
	}
	var bDocs []contract.Document
	for i := range 40 {
		bDocs = append(bDocs, contract.Document{ID: fmt.Sprintf("b%d", i), Namespace: "b/",
			Content: "parser parser tokens secret-project-" + fmt.Sprint(i), Trust: contract.Authoritative})
	}
	alice := &contract.Principal{Name: "alice", Namespaces: []string{"a/"}}
	query := func(c *Collection) map[string]float64 {
		t.Helper()
		res, err := c.Search(ctx, contract.Query{Text: "parser tokens tree", Mode: contract.Lexical, TopK: 10,
			Scope: contract.Scope{Namespace: "a/"}, Principal: alice})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, h := range res.Hits {
			if h.Namespace != "a/" {
				t.Fatalf("foreign hit %s in %q", h.DocID, h.Namespace)
			}
			out[h.DocID] = h.Score
		}
		return out
	}
	same := func(what string, got, want map[string]float64) {
		t.Helper()
		if len(got) != len(want) || len(got) != 3 {
			t.Fatalf("%s: %d hits, want %d (= 3)", what, len(got), len(want))
		}
		for id, w := range want {
			if g, ok := got[id]; !ok || math.Abs(g-w) > 1e-12 {
				t.Errorf("%s: %s score %v, want %v", what, id, g, w)
			}
		}
	}

	only := newColl(t, CollectionOptions{Dim: 2, MultiTenant: true, Sync: "none"})
	if _, err := only.Upsert(ctx, aDocs); err != nil {
		t.Fatal(err)
	}
	want := query(only)

	c := newColl(t, CollectionOptions{Dim: 2, MultiTenant: true, Sync: "none"})
	if _, err := c.Upsert(ctx, aDocs); err != nil {
		t.Fatal(err)
	}
	same("tenant a alone", query(c), want)
	if _, err := c.Upsert(ctx, bDocs); err != nil {
		t.Fatal(err)
	}
	same("after tenant b's writes (MemTable)", query(c), want)
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	same("after flush (warm segment)", query(c), want)

	// Without MultiTenant the statistics are collection-wide (documented):
	// the same writes do change the scores.
	shared := newColl(t, CollectionOptions{Dim: 2, Sync: "none"})
	if _, err := shared.Upsert(ctx, append(append([]contract.Document(nil), aDocs...), bDocs...)); err != nil {
		t.Fatal(err)
	}
	res, err := shared.Search(ctx, contract.Query{Text: "parser tokens tree", Mode: contract.Lexical, TopK: 50,
		Scope: contract.Scope{Namespace: "a/"}})
	if err != nil {
		t.Fatal(err)
	}
	changed := false
	for _, h := range res.Hits {
		if w, ok := want[h.DocID]; ok && math.Abs(h.Score-w) > 1e-9 {
			changed = true
		}
	}
	if !changed {
		t.Error("collection-wide statistics did not change any score: the test cannot tell the two modes apart")
	}
}

// TestPrefixQueryScores: a prefix query's expanded terms are scored with
// their real document frequencies and counted in the score's upper bound,
// so `pars*` scores exactly like `parser` when parser is its only
// expansion, and a prefix-only query does not score 0.
func TestPrefixQueryScores(t *testing.T) {
	ctx := context.Background()
	c := newColl(t, CollectionOptions{Dim: 2, Sync: "none"})
	var docs []contract.Document
	for i := range 20 {
		txt := "lexer tokens"
		if i%4 == 0 {
			txt = "parser tokens parser"
		}
		docs = append(docs, contract.Document{ID: fmt.Sprintf("d%02d", i), Content: txt, Trust: contract.Authoritative})
	}
	if _, err := c.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	run := func(q string) []contract.Envelope {
		res, err := c.Search(ctx, contract.Query{Text: q, Syntax: contract.SyntaxOperators, Mode: contract.Lexical, TopK: 10})
		if err != nil {
			t.Fatal(err)
		}
		return res.Hits
	}
	exact, pre := run("parser"), run("pars*")
	if len(exact) != 5 || len(pre) != len(exact) {
		t.Fatalf("parser: %d hits, pars*: %d hits, want 5 each", len(exact), len(pre))
	}
	for i := range exact {
		if exact[i].DocID != pre[i].DocID || math.Abs(exact[i].Score-pre[i].Score) > 1e-12 {
			t.Errorf("hit %d: parser %s %.6f, pars* %s %.6f", i, exact[i].DocID, exact[i].Score, pre[i].DocID, pre[i].Score)
		}
		if !(pre[i].Score > 0 && pre[i].Score <= 1) {
			t.Errorf("pars* hit %s score %v outside (0,1]", pre[i].DocID, pre[i].Score)
		}
	}
}

// TestPrincipalScopedBM25StatsShared: in a collection that is not
// MultiTenant, a query carrying a principal (every query of a server with
// API keys) is scored on statistics over the rows that principal may
// read: another principal's writes — MemTable, then warm — leave its
// scores exactly as in a collection holding only its documents. The same
// query without a principal still sees collection-wide statistics (the
// self-check that the writes would move the scores).
func TestPrincipalScopedBM25StatsShared(t *testing.T) {
	ctx := context.Background()
	aDocs := []contract.Document{
		{ID: "a1", Namespace: "a/", Content: "the parser reads tokens and the parser builds a tree", Trust: contract.Authoritative},
		{ID: "a2", Namespace: "a/", Content: "tokens flow from the lexer into the parser", Trust: contract.Authoritative},
		{ID: "a3", Namespace: "a/", Content: "a tree walker visits every node of the tree", Trust: contract.Authoritative, ACL: []string{"alice"}},
	}
	var bDocs []contract.Document
	for i := range 40 {
		bDocs = append(bDocs, contract.Document{ID: fmt.Sprintf("b%d", i), Namespace: "b/",
			Content: "parser parser tokens tree secret-project-" + fmt.Sprint(i), Trust: contract.Authoritative})
	}
	// An ACL'd document alice may not read, in her own namespace.
	bDocs = append(bDocs, contract.Document{ID: "a-hidden", Namespace: "a/", Content: "parser tree tree tokens",
		Trust: contract.Authoritative, ACL: []string{"carol"}})
	alice := &contract.Principal{Name: "alice", Namespaces: []string{"a/"}}
	scores := func(c *Collection, p *contract.Principal) map[string]float64 {
		t.Helper()
		res, err := c.Search(ctx, contract.Query{Text: "parser tokens tree", Mode: contract.Lexical, TopK: 50, Principal: p})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, h := range res.Hits {
			out[h.DocID] = h.Explain.LexicalScore
		}
		return out
	}
	only := newColl(t, CollectionOptions{Dim: 2, Sync: "none"})
	if _, err := only.Upsert(ctx, aDocs); err != nil {
		t.Fatal(err)
	}
	want := scores(only, alice)
	if len(want) != 3 {
		t.Fatalf("alice sees %d documents, want 3", len(want))
	}
	c := newColl(t, CollectionOptions{Dim: 2, Sync: "none"})
	if _, err := c.Upsert(ctx, aDocs); err != nil {
		t.Fatal(err)
	}
	before := scores(c, nil)
	check := func(what string) {
		t.Helper()
		got := scores(c, alice)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: alice's scores %v, want %v", what, got, want)
		}
	}
	check("alone")
	if _, err := c.Upsert(ctx, bDocs); err != nil {
		t.Fatal(err)
	}
	check("after the other writes (MemTable)")
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	check("after flush (warm segment)")
	if after := scores(c, nil); after["a1"] == before["a1"] {
		t.Error("the other writes did not move the collection-wide score: the test cannot see a leak")
	}
}
