package engine

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestPrefixExpansionIsTenantScoped (a regression test from review): in a
// MultiTenant collection a prefix query used to be expanded over the whole
// term dictionary (every tenant's terms), with every expansion — also the
// ones only in another tenant's documents — in the score's upper bound, so
// tenant a's scores for `pars*` dropped when tenant b wrote other `pars…`
// terms, and once b had MaxExpansions (64) terms sorting before a's, a's
// document was not found at all: a probe of another tenant's vocabulary.
// Expansion now only reaches terms of the tenant's own rows.
func TestPrefixExpansionIsTenantScoped(t *testing.T) {
	ctx := context.Background()
	aDocs := []contract.Document{
		{ID: "a1", Namespace: "a/", Content: "the parser reads tokens", Trust: contract.Authoritative},
		{ID: "a2", Namespace: "a/", Content: "a tree walker visits nodes", Trust: contract.Authoritative},
	}
	alice := &contract.Principal{Name: "alice", Namespaces: []string{"a/"}}
	query := func(c *Collection) map[string]float64 {
		t.Helper()
		res, err := c.Search(ctx, contract.Query{Text: "pars*", Syntax: contract.SyntaxOperators, Mode: contract.Lexical, TopK: 10,
			Scope: contract.Scope{Namespace: "a/"}, Principal: alice})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, h := range res.Hits {
			out[h.DocID] = h.Score
		}
		return out
	}
	c := newColl(t, CollectionOptions{Dim: 2, MultiTenant: true, Sync: "none"})
	if _, err := c.Upsert(ctx, aDocs); err != nil {
		t.Fatal(err)
	}
	before := query(c)
	if len(before) != 1 {
		t.Fatalf("tenant a alone: %d hits for pars*, want 1 (a1)", len(before))
	}
	// Tenant b writes a few documents with other pars… terms.
	var bDocs []contract.Document
	for i := range 3 {
		bDocs = append(bDocs, contract.Document{ID: fmt.Sprintf("b%d", i), Namespace: "b/",
			Content: fmt.Sprintf("parsecretproject%d", i), Trust: contract.Authoritative})
	}
	if _, err := c.Upsert(ctx, bDocs); err != nil {
		t.Fatal(err)
	}
	after := query(c)
	if g, w := after["a1"], before["a1"]; math.Abs(g-w) > 1e-12 {
		t.Errorf("tenant b's terms changed tenant a's score for pars*: a1 %.6f -> %.6f (upper bound counts b's expansions)", w, g)
	}
	// 64 more terms that sort before "parser": a's term falls out of the
	// expansion list.
	bDocs = bDocs[:0]
	for i := range 64 {
		bDocs = append(bDocs, contract.Document{ID: fmt.Sprintf("c%d", i), Namespace: "b/",
			Content: fmt.Sprintf("parsa%02d", i), Trust: contract.Authoritative})
	}
	if _, err := c.Upsert(ctx, bDocs); err != nil {
		t.Fatal(err)
	}
	if got := query(c); len(got) != 1 {
		t.Errorf("after tenant b wrote 64 parsa.. terms, tenant a's pars* finds %d hits, want 1: the expansion cut-off is taken over all tenants' terms", len(got))
	}
}
