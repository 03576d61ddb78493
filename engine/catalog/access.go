package catalog

import (
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier"
)

// AccessIndex groups one segment's rows by access class, the pair
// (namespace, ACL) that decides who may read them, each with the bitmap
// of its rows. A query's tenancy (Scope.Namespace and Principal) then
// selects rows by testing each class once instead of each row.
type AccessIndex struct {
	classes []accessClass
}

type accessClass struct {
	ns   string
	acl  []string
	rows *roaring.Bitmap
}

// maxAccessClasses bounds an AccessIndex: a segment whose rows fall into
// more classes than max(64, rows/8) gets none (testing each class would
// cost about as much as testing each row).
func maxAccessClasses(rows int) int { return max(64, rows/8) }

// NewAccessIndex builds the access index of docs (row r = docs[r]), or
// returns nil when they have too many classes (maxAccessClasses).
func NewAccessIndex(docs []*tier.Document) *AccessIndex {
	ai := &AccessIndex{}
	byKey := map[string][]int{}
	limit := maxAccessClasses(len(docs))
	var kb strings.Builder
	for r, d := range docs {
		kb.Reset()
		kb.WriteString(d.Namespace)
		for _, a := range d.ACL {
			kb.WriteByte(0)
			kb.WriteString(a)
		}
		key := kb.String()
		ci := -1
		for _, i := range byKey[key] {
			if c := &ai.classes[i]; c.ns == d.Namespace && slices.Equal(c.acl, d.ACL) {
				ci = i
				break
			}
		}
		if ci < 0 {
			if len(ai.classes) == limit {
				return nil
			}
			ci = len(ai.classes)
			ai.classes = append(ai.classes, accessClass{ns: d.Namespace, acl: d.ACL, rows: roaring.New()})
			byKey[key] = append(byKey[key], ci)
		}
		ai.classes[ci].rows.Add(uint32(r))
	}
	for i := range ai.classes {
		ai.classes[i].rows.RunOptimize()
	}
	return ai
}

// Allowed returns a new bitmap of the rows whose namespace starts with
// ns and that p may read (contract.Principal.CanRead; p nil: any
// principal), the rows compileTenancy's test passes.
func (ai *AccessIndex) Allowed(ns string, p *contract.Principal) *roaring.Bitmap {
	var in []*roaring.Bitmap
	for i := range ai.classes {
		c := &ai.classes[i]
		if strings.HasPrefix(c.ns, ns) && (p == nil || p.CanRead(c.ns, c.acl)) {
			in = append(in, c.rows)
		}
	}
	switch len(in) {
	case 0:
		return roaring.New()
	case 1:
		return in[0].Clone()
	}
	return roaring.FastOr(in...)
}
