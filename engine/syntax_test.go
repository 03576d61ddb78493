package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestQuerySyntaxDefaultText: the query text is matched as text unless
// the query asks for the operator syntax. A quoted sentence whose words
// are not adjacent in any document finds the documents holding them (as a
// phrase it would find none), "mkdir -p" finds the document with "p", and
// with Syntax operators both behave as operators again.
func TestQuerySyntaxDefaultText(t *testing.T) {
	ctx := context.Background()
	c := newColl(t, CollectionOptions{Dim: 2, Sync: "none"})
	docs := []contract.Document{
		{ID: "mk", Content: "mkdir -p creates parents p", Trust: contract.Authoritative},
		{ID: "mk2", Content: "mkdir makes one directory", Trust: contract.Authoritative},
		{ID: "rd", Content: "read the whole file into memory", Trust: contract.Authoritative},
	}
	if _, err := c.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	ids := func(q contract.Query) map[string]bool {
		t.Helper()
		q.Mode = contract.Lexical
		res, err := c.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, h := range res.Hits {
			out[h.DocID] = true
		}
		return out
	}
	if got := ids(contract.Query{Text: `"read file memory"`}); !got["rd"] {
		t.Errorf("quoted sentence as text: %v, want rd", got)
	}
	if got := ids(contract.Query{Text: `"read file memory"`, Syntax: contract.SyntaxOperators}); len(got) != 0 {
		t.Errorf("quoted sentence as a phrase: %v, want no hits", got)
	}
	if got := ids(contract.Query{Text: "mkdir -p"}); !got["mk"] || !got["mk2"] {
		t.Errorf("mkdir -p as text: %v, want mk and mk2", got)
	}
	if got := ids(contract.Query{Text: "mkdir -p", Syntax: contract.SyntaxOperators}); got["mk"] || !got["mk2"] {
		t.Errorf("mkdir -p with operators: %v, want mk2 only", got)
	}
	if _, err := c.Search(ctx, contract.Query{Text: "x", Syntax: "lucene"}); err == nil {
		t.Error("unknown syntax accepted")
	}
	var q contract.Query
	if err := json.Unmarshal([]byte(`{"text":"a -b","syntax":"operators"}`), &q); err != nil || q.Syntax != contract.SyntaxOperators {
		t.Errorf("JSON syntax: %+v, %v", q, err)
	}
}

// TestQueryExpansion: expansion terms are optional terms scaled by their
// weight: a document holding only an expansion term is found, scoring
// below one holding the query's own term; a term the text already has is
// not added twice; bad weights are rejected.
func TestQueryExpansion(t *testing.T) {
	ctx := context.Background()
	c := newColl(t, CollectionOptions{Dim: 2, Sync: "none"})
	docs := []contract.Document{
		{ID: "cap", Content: "capital letters", Trust: contract.Authoritative},
		{ID: "up", Content: "upper letters", Trust: contract.Authoritative},
		{ID: "none", Content: "digits only", Trust: contract.Authoritative},
	}
	if _, err := c.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	run := func(q contract.Query) []contract.Envelope {
		t.Helper()
		q.Mode = contract.Lexical
		res, err := c.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return res.Hits
	}
	if h := run(contract.Query{Text: "capital"}); len(h) != 1 {
		t.Fatalf("without expansion: %v", h)
	}
	h := run(contract.Query{Text: "capital", Expansion: []contract.WeightedTerm{{Term: "upper", Weight: 0.3}}})
	if len(h) != 2 || h[0].DocID != "cap" || h[1].DocID != "up" || !(h[1].Score < h[0].Score) {
		t.Fatalf("with expansion: %+v", h)
	}
	same := run(contract.Query{Text: "capital", Expansion: []contract.WeightedTerm{{Term: "capital", Weight: 0.1}}})
	plain := run(contract.Query{Text: "capital"})
	if len(same) != 1 || same[0].Score != plain[0].Score {
		t.Errorf("expansion of a query term changed its score: %+v vs %+v", same, plain)
	}
	for _, bad := range []contract.WeightedTerm{{Term: "x", Weight: 0}, {Term: "x", Weight: 1.5}, {Term: "", Weight: 0.5}} {
		if _, err := c.Search(ctx, contract.Query{Text: "capital", Expansion: []contract.WeightedTerm{bad}}); err == nil {
			t.Errorf("expansion %+v accepted", bad)
		}
	}
}
