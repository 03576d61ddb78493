package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestLexicalScoreBelowOne: the lexical upper bound stays an upper
// bound for random queries mixing plain terms, duplicates, prefixes and
// phrases, in MultiTenant and shared collections, MemTable and warm
// segments: every reported score lies in (0, 1) — strictly below 1, since
// LexicalScore clamps and a true bound is never reached (tf/(tf+K) < 1).
func TestLexicalScoreBelowOne(t *testing.T) {
	ctx := context.Background()
	words := strings.Fields("parser parse parsed token tokens tree trees walker lexer node nodes graph grammar")
	rng := rand.New(rand.NewPCG(3, 4))
	for _, mt := range []bool{false, true} {
		c := newColl(t, CollectionOptions{Dim: 2, MultiTenant: mt, Sync: "none"})
		var docs []contract.Document
		for i := range 120 {
			var sb []string
			for range 1 + rng.IntN(12) {
				sb = append(sb, words[rng.IntN(len(words))])
			}
			ns := "a/"
			if i%3 == 0 {
				ns = "b/"
			}
			docs = append(docs, contract.Document{ID: fmt.Sprintf("d%03d", i), Namespace: ns, Content: strings.Join(sb, " "), Trust: contract.Authoritative})
		}
		if _, err := c.Upsert(ctx, docs[:60]); err != nil {
			t.Fatal(err)
		}
		if err := c.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Upsert(ctx, docs[60:]); err != nil {
			t.Fatal(err)
		}
		total := 0
		alice := &contract.Principal{Name: "alice", Namespaces: []string{"a/"}}
		for qi := 0; qi < 60; qi++ {
			var parts []string
			for range 1 + rng.IntN(4) {
				w := words[rng.IntN(len(words))]
				switch rng.IntN(4) {
				case 0:
					parts = append(parts, w[:3]+"*")
				case 1:
					parts = append(parts, `"`+w+" "+words[rng.IntN(len(words))]+`"`)
				default:
					parts = append(parts, w)
				}
			}
			text := strings.Join(parts, " ")
			q := contract.Query{Text: text, Mode: contract.Lexical, TopK: 50}
			if mt {
				q.Scope.Namespace, q.Principal = "a/", alice
			}
			res, err := c.Search(ctx, q)
			if err != nil {
				t.Fatalf("%q: %v", text, err)
			}
			total += len(res.Hits)
			for _, h := range res.Hits {
				if !(h.Score > 0 && h.Score < 1) {
					t.Errorf("multiTenant=%v query %q: hit %s score %v outside (0,1)", mt, text, h.DocID, h.Score)
				}
			}
		}
		if total < 100 {
			t.Fatalf("multiTenant=%v: only %d hits over all queries: the test checks too little", mt, total)
		}
	}
}
