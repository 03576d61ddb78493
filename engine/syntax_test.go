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
