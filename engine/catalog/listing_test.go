package catalog

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier"
)

// TestListingClasses compares a Listing (built at once, and added to one
// document at a time in random order, splitting blocks) with a brute-force
// filter: for random principals and cursors, the merged classes nominate
// exactly the ids some version of which the principal may read.
func TestListingClasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	nss := []string{"a/", "a/b/", "b/", "", "c/"}
	acls := [][]string{nil, {"u1"}, {"u2", "g"}, {"g"}, {"u3"}}
	var docs []*tier.Document
	for i := range 5000 {
		docs = append(docs, &tier.Document{ID: fmt.Sprintf("id%05d", rng.IntN(4000)+i%7),
			Namespace: nss[rng.IntN(len(nss))], ACL: acls[rng.IntN(len(acls))]})
	}
	built := BuildListing(docs)
	added := NewListing()
	for _, i := range rng.Perm(len(docs)) {
		added.Add(docs[i])
	}
	principals := []*contract.Principal{nil,
		{Name: "u1", Namespaces: []string{"a/"}},
		{Name: "u2", Groups: []string{"g"}, Namespaces: []string{"a/b/", "c/", "a/b/"}},
		{Name: "u3", Namespaces: []string{"*"}},
		{Name: "u4", Namespaces: []string{"b/"}},
		{Name: "u5"},
	}
	for _, p := range principals {
		want := map[string]bool{}
		for _, d := range docs {
			if p == nil || p.CanRead(d.Namespace, d.ACL) {
				want[d.ID] = true
			}
		}
		var all []string
		for id := range want {
			all = append(all, id)
		}
		sort.Strings(all)
		for range 30 {
			after := fmt.Sprintf("id%05d", rng.IntN(4100))
			if rng.IntN(5) == 0 {
				after = ""
			}
			limit := 1 + rng.IntN(2000)
			i := sort.SearchStrings(all, after)
			if i < len(all) && all[i] == after {
				i++
			}
			ref := all[i:min(len(all), i+limit)]
			for name, l := range map[string]*Listing{"built": built, "added": added} {
				var got []string
				Merge(l.Classes(p, after), func(id string) bool {
					got = append(got, id)
					return len(got) < limit
				})
				if !slices.Equal(got, ref) {
					t.Fatalf("%s listing, principal %+v after %q limit %d: got %d ids %v…, want %d %v…",
						name, p, after, limit, len(got), got[:min(5, len(got))], len(ref), ref[:min(5, len(ref))])
				}
			}
		}
	}
}
