package catalog

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/engine/tier"
)

var warmTestFields = map[string]FieldType{"n": FieldNumber, "kw": FieldKeyword}

// TestWarmCacheIncremental: a set assembled from cached segment parts
// (after a flush adds a segment, after a compaction replaces two) equals
// the catalog a fresh cache builds of the same set, row for row, key for
// key and filter for filter, and reuses the parts of the segments it
// keeps; parts of segments no cached set holds are dropped.
func TestWarmCacheIncremental(t *testing.T) {
	an := text.MustNew(text.CodeOptions())
	rng := rand.New(rand.NewPCG(11, 12))
	seg := func(id uint64, prefix string, n int) tier.WarmSegment {
		return tier.WarmSegment{ID: id, Path: prefix, Docs: randDocs(rng, prefix, n)}
	}
	s1, s2, s3 := seg(1, "a", 40), seg(2, "b", 25), seg(3, "c", 60)
	s4 := tier.WarmSegment{ID: 4, Path: "d", Docs: append(append([]*tier.Document(nil), s1.Docs[5:]...), s2.Docs...)}
	wcache := NewWarmCache(an, warmTestFields)
	var prev *Warm
	for step, set := range [][]tier.WarmSegment{{s1, s2}, {s1, s2, s3}, {s3, s4}, {s3, s4}} {
		got, err := wcache.get(set)
		if err != nil {
			t.Fatal(err)
		}
		want, err := NewWarmCache(an, warmTestFields).get(set)
		if err != nil {
			t.Fatal(err)
		}
		sameWarm(t, step, got, want)
		if step == 1 && (got.Segs[0] != prev.Segs[0] || got.Segs[1] != prev.Segs[1]) {
			t.Fatalf("step %d: the kept segments' parts were rebuilt", step)
		}
		if step == 3 && got != prev {
			t.Fatalf("step %d: an unchanged set was rebuilt", step)
		}
		prev = got
	}
	// Cached sets {s1,s2}, {s1,s2,s3}, {s3,s4}: every part is still held.
	if len(wcache.parts) != 4 {
		t.Fatalf("%d parts cached, want 4", len(wcache.parts))
	}
	// Push the first sets out of the cache: s1's and s2's parts go.
	for i := range warmCacheSize {
		if _, err := wcache.get([]tier.WarmSegment{s3, seg(uint64(10+i), "e", 3)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []uint64{1, 2, 4} {
		if wcache.parts[id] != nil {
			t.Fatalf("part of segment %d kept after its sets left the cache", id)
		}
	}
	// A segment id whose rows changed (a reopened store) is rebuilt.
	s3b := seg(3, "c", 60)
	got, err := wcache.get([]tier.WarmSegment{s3b})
	if err != nil {
		t.Fatal(err)
	}
	if got.Rows[0].Doc != s3b.Docs[0] {
		t.Fatal("a part was reused for other documents under the same segment id")
	}
}

// sameWarm compares two catalogs of one set: rows, keys, segment
// contents and the field index's answers.
func sameWarm(t *testing.T, step int, got, want *Warm) {
	t.Helper()
	if !reflect.DeepEqual(got.Bases, want.Bases) || len(got.Rows) != len(want.Rows) || len(got.Segs) != len(want.Segs) {
		t.Fatalf("step %d: bases %v / %v, %d / %d rows", step, got.Bases, want.Bases, len(got.Rows), len(want.Rows))
	}
	for k := range got.Rows {
		if got.Rows[k].Doc != want.Rows[k].Doc || !reflect.DeepEqual(got.Rows[k].Meta, want.Rows[k].Meta) || got.ByDoc[got.Rows[k].Doc] != uint32(k) {
			t.Fatalf("step %d: row %d differs", step, k)
		}
	}
	if !reflect.DeepEqual(got.ByDoc, want.ByDoc) {
		t.Fatalf("step %d: ByDoc differs", step)
	}
	for i := range got.Segs {
		if got.Segs[i].NumDocs() != want.Segs[i].NumDocs() || got.Segs[i].NumTerms() != want.Segs[i].NumTerms() {
			t.Fatalf("step %d: segment %d differs", step, i)
		}
	}
	n := uint32(len(got.Rows))
	filters := []contract.Filter{
		contract.Exists("kw"), contract.Exists("n"),
		contract.Range("n", nil, ptr(3.0), ptr(30.0), nil),
		contract.Eq("n", contract.Number(7)),
		contract.Not(contract.Eq("kw", contract.String("b"))),
		contract.Or(contract.Eq("kw", contract.String("a")), contract.Not(contract.Exists("n"))),
		contract.And(contract.Not(contract.Range("n", nil, nil, ptr(10.0), nil)), contract.Prefix("kw", "c")),
	}
	for _, p := range []string{"a", "b", "c", "d", "e"} {
		filters = append(filters, contract.Eq("kw", contract.String(p)))
	}
	for _, f := range filters {
		a, ok1 := got.Fields.Compile(&f, n)
		b, ok2 := want.Fields.Compile(&f, n)
		if !ok1 || !ok2 || !a.Equals(b) {
			t.Fatalf("step %d: filter %+v: %v vs %v", step, f, bitmapList(a), bitmapList(b))
		}
	}
}

func bitmapList(b *roaring.Bitmap) []uint32 {
	if b == nil {
		return nil
	}
	return b.ToArray()
}

func ptr[T any](v T) *T { return &v }
