package catalog

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier"
)

// TestAccessIndexAllowed: Allowed selects exactly the rows that the
// per-row test (namespace prefix, then CanRead) passes, for seeded rows,
// principals and scopes; a segment of more classes than
// maxAccessClasses gets no index.
func TestAccessIndexAllowed(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	nss := []string{"", "a/", "a/b/", "b/"}
	acls := [][]string{nil, {"x"}, {"y", "g"}, {"x", "y"}}
	docs := make([]*tier.Document, 500)
	for i := range docs {
		docs[i] = &tier.Document{ID: fmt.Sprint(i), Namespace: nss[rng.IntN(len(nss))], ACL: acls[rng.IntN(len(acls))]}
	}
	ai := NewAccessIndex(docs)
	if ai == nil || len(ai.classes) > len(nss)*len(acls) {
		t.Fatalf("index %v", ai)
	}
	for _, p := range []*contract.Principal{nil, {Name: "x", Namespaces: []string{"a/"}}, {Name: "z", Groups: []string{"g"}, Namespaces: []string{"*"}},
		{Name: "y", Namespaces: []string{"b/", "a/b/"}}, {Name: "", Namespaces: nil}} {
		for _, ns := range []string{"", "a/", "a/b/", "b/", "c/"} {
			got := ai.Allowed(ns, p)
			for r, d := range docs {
				want := strings.HasPrefix(d.Namespace, ns) && (p == nil || p.CanRead(d.Namespace, d.ACL))
				if got.Contains(uint32(r)) != want {
					t.Fatalf("principal %+v scope %q row %d (%q %v): %v, want %v", p, ns, r, d.Namespace, d.ACL, !want, want)
				}
			}
		}
	}
	many := make([]*tier.Document, 1000)
	for i := range many {
		many[i] = &tier.Document{ID: fmt.Sprint(i), ACL: []string{fmt.Sprint("u", i%200)}}
	}
	if NewAccessIndex(many) != nil {
		t.Fatal("an index of 200 classes over 1,000 rows (limit 125)")
	}
	if NewAccessIndex(many[:400]) != nil {
		t.Fatal("an index of 200 classes over 400 rows (limit 64)")
	}
	few := make([]*tier.Document, 400)
	for i := range few {
		few[i] = &tier.Document{ID: fmt.Sprint(i), ACL: []string{fmt.Sprint("u", i%40)}}
	}
	if ai := NewAccessIndex(few); ai == nil || len(ai.classes) != 40 {
		t.Fatalf("400 rows of 40 classes: %v", ai)
	}
}
