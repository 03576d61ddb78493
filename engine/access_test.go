package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestAccessIndexMatchesRowTests: queries whose tenancy (namespace scope,
// principal) the plan resolves from the warm segments' access classes
// return exactly the hits and scores of testing every row, over
// namespaces, ACLs, deleted rows, MemTable rows, indexed and non-indexed
// filters and a URI prefix (which keeps the row tests), in MultiTenant
// collections and others.
func TestAccessIndexMatchesRowTests(t *testing.T) {
	ctx := context.Background()
	words := []string{"alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa"}
	for _, mt := range []bool{false, true} {
		t.Run(fmt.Sprintf("multitenant=%v", mt), func(t *testing.T) {
			c := newColl(t, CollectionOptions{Dim: 2, MultiTenant: mt, IndexedFields: map[string]FieldType{"kind": FieldKeyword}})
			rng := rand.New(rand.NewPCG(21, 22))
			nss := []string{"t1/", "t1/sub/", "t2/", "t3/"}
			acls := [][]string{nil, {"alice"}, {"bob", "g1"}, {"g2"}}
			id := 0
			batch := func(n int) {
				var docs []contract.Document
				for range n {
					var text string
					for range 1 + rng.IntN(6) {
						text += words[rng.IntN(len(words))] + " "
					}
					d := doc(fmt.Sprintf("d%04d", id), text, []float32{1, float32(id)})
					d.Namespace = nss[rng.IntN(len(nss))]
					d.ACL = acls[rng.IntN(len(acls))]
					d.SourceURI = fmt.Sprintf("file:///src/%s/f%d.txt", []string{"x", "y"}[id%2], id)
					d.Metadata = map[string]contract.Value{"kind": contract.String([]string{"a", "b", "c"}[rng.IntN(3)]),
						"color": contract.String([]string{"red", "blue"}[rng.IntN(2)])}
					docs = append(docs, d)
					id++
				}
				if _, err := c.Upsert(ctx, docs); err != nil {
					t.Fatal(err)
				}
			}
			batch(150)
			if err := c.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			batch(120)
			if err := c.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			var del []string
			for i := 0; i < 270; i += 7 {
				del = append(del, fmt.Sprintf("d%04d", i))
			}
			if _, err := c.Delete(ctx, del); err != nil {
				t.Fatal(err)
			}
			batch(40) // MemTable rows
			principals := []*contract.Principal{nil,
				{Name: "alice", Namespaces: []string{"t1/"}},
				{Name: "bob", Groups: []string{"g1"}, Namespaces: []string{"*"}},
				{Name: "carol", Groups: []string{"g2"}, Namespaces: []string{"t2/", "t3/"}},
				{Name: "dave", Namespaces: []string{"*"}},
			}
			kindB := contract.Eq("kind", contract.String("b"))
			red := contract.Eq("color", contract.String("red"))
			n := 0
			for _, p := range principals {
				for _, scope := range []contract.Scope{{}, {Namespace: "t1/"}, {Namespace: "t2/"}, {Namespace: "t1/", URIPrefix: "file:///src/x/"}} {
					if mt && scope.Namespace == "" && p == nil {
						continue // a MultiTenant query names its namespace
					}
					for _, f := range []*contract.Filter{nil, &kindB, &red} {
						for _, text := range []string{"alpha", "beta gamma", "omega sigma kappa", "delta alph*"} {
							q := contract.Query{Text: text, Mode: contract.Lexical, TopK: 50, Principal: p, Scope: scope, Filter: f}
							testNoAccessIndex = true
							want, err1 := c.Search(ctx, q)
							testNoAccessIndex = false
							got, err2 := c.Search(ctx, q)
							if (err1 == nil) != (err2 == nil) {
								t.Fatalf("%+v: errors %v / %v", q, err1, err2)
							}
							if err1 != nil {
								continue
							}
							if len(got.Hits) != len(want.Hits) {
								t.Fatalf("principal %+v scope %+v filter %v %q: %d hits, row tests %d", p, scope, f, text, len(got.Hits), len(want.Hits))
							}
							for i := range got.Hits {
								if got.Hits[i].DocID != want.Hits[i].DocID || got.Hits[i].Score != want.Hits[i].Score {
									t.Fatalf("principal %+v scope %+v filter %v %q hit %d: %s %v, row tests %s %v", p, scope, f, text, i,
										got.Hits[i].DocID, got.Hits[i].Score, want.Hits[i].DocID, want.Hits[i].Score)
								}
							}
							n += len(got.Hits)
						}
					}
				}
			}
			if n == 0 {
				t.Fatal("no hits at all")
			}
		})
	}
}
