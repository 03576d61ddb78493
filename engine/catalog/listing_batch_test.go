package catalog

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/stratasearch/strata/engine/tier"
)

// flatten returns il's ids in block order, and checks its blocks: none
// empty, none over maxBlock, ascending within and across blocks.
func flatten(t *testing.T, il *idList) []string {
	t.Helper()
	var out []string
	for _, b := range il.blocks {
		if len(b) == 0 || len(b) > maxBlock {
			t.Fatalf("block of %d ids", len(b))
		}
		out = append(out, b...)
	}
	for i := 1; i < len(out); i++ {
		if out[i-1] >= out[i] {
			t.Fatalf("ids out of order: %q then %q", out[i-1], out[i])
		}
	}
	return out
}

// listingIDs is every class of l as sorted id lists, keyed by class.
func listingIDs(t *testing.T, l *Listing) map[string][]string {
	out := map[string][]string{"all": flatten(t, &l.all)}
	for ns, nc := range l.byNS {
		out["open "+ns] = flatten(t, &nc.open)
		for tok, il := range nc.acl {
			out["acl "+ns+" "+tok] = flatten(t, il)
		}
	}
	if !slices.IsSorted(l.nss) || len(l.nss) != len(l.byNS) {
		t.Fatalf("namespaces %q for %d classes", l.nss, len(l.byNS))
	}
	return out
}

// TestListingAddBatchMatchesAdd: batches of every size (under and over
// listBatchMin, against lists empty, small and large next to them) give
// the listing that Add of each document gives, class by class, after
// every batch, with repeated ids, namespaces and ACL entries (an empty
// one too).
func TestListingAddBatchMatchesAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	nss := []string{"a/", "a/b/", "", "c/"}
	acls := [][]string{nil, {"u1"}, {"u2", "g"}, {"g", ""}, {""}}
	one, batched := NewListing(), NewListing()
	for _, n := range []int{0, 1, 63, 64, 500, 3, 2000, 100, 9000, 64, 20000, 700} {
		docs := make([]*tier.Document, n)
		for i := range docs {
			docs[i] = &tier.Document{ID: fmt.Sprintf("d%d", rng.IntN(40000)),
				Namespace: nss[rng.IntN(len(nss))], ACL: acls[rng.IntN(len(acls))]}
		}
		for _, d := range docs {
			one.Add(d)
		}
		batched.AddBatch(docs)
		if a, b := listingIDs(t, one), listingIDs(t, batched); !reflect.DeepEqual(a, b) {
			for k := range a {
				if !reflect.DeepEqual(a[k], b[k]) {
					t.Fatalf("after a batch of %d, class %s: Add %d ids, AddBatch %d", n, k, len(a[k]), len(b[k]))
				}
			}
			t.Fatalf("after a batch of %d: classes %d, %d", n, len(a), len(b))
		}
	}
}

// TestListingAddBatchAllocs: a batch of 20,000 ids into an empty listing
// allocates about the ids' slice headers once per class (all, open),
// not the growth and block splits of one insert each (about 4.4× that).
func TestListingAddBatchAllocs(t *testing.T) {
	docs := make([]*tier.Document, 20000)
	for i := range docs {
		docs[i] = &tier.Document{ID: fmt.Sprintf("d%d", i)}
	}
	var l *Listing
	bytes := allocBytes(func() { l = NewListing(); l.AddBatch(docs) })
	if ids := listingIDs(t, l); len(ids["all"]) != len(docs) || len(ids["open "]) != len(docs) {
		t.Fatalf("%d and %d ids", len(ids["all"]), len(ids["open "]))
	}
	t.Logf("AddBatch allocated %d bytes", bytes)
	// Two classes of 20,000 16-byte headers: 640,000 bytes.
	if want := 2 * 16 * len(docs); bytes > uint64(want)*3/2 {
		t.Errorf("AddBatch allocated %d bytes, want ≤ 1.5 × %d", bytes, want)
	}
}

// allocBytes is the bytes f allocates (runtime.MemStats.TotalAlloc).
func allocBytes(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}
