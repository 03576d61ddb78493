package catalog

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/engine/tier"
)

var words = []string{"alpha", "beta", "gamma", "delta", "parseHTTP", "user_name", "getUserName", "café"}

func randDocs(rng *rand.Rand, prefix string, n int) []*tier.Document {
	out := make([]*tier.Document, n)
	for i := range out {
		var content string
		for w := 0; w < 1+rng.IntN(12); w++ {
			content += words[rng.IntN(len(words))] + " "
		}
		meta, _ := EncodeMeta(map[string]contract.Value{"n": contract.Number(float64(i)), "kw": contract.String(prefix)})
		out[i] = &tier.Document{ID: fmt.Sprintf("%s-%03d", prefix, i), Content: content, Metadata: meta}
	}
	return out
}

// open opens the section b built (err) over docs, with their external ids.
func open(t *testing.T, b []byte, err error, docs []*tier.Document) *bm25.Segment {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	s, err := bm25.OpenWith(b, "test", bm25.OpenOptions{ExtIDs: ExtIDs(docs)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSegmentsMergeEqualsRebuild: merging two built sections without
// their deleted rows gives the segment BuildLexical makes of the kept
// documents: the same document count and, for every query, the same hits
// (external ids and scores).
func TestSegmentsMergeEqualsRebuild(t *testing.T) {
	an := text.MustNew(text.CodeOptions())
	sg := Segments{An: an}
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := randDocs(rng, "a", 60), randDocs(rng, "b", 45)
	var sections [][]byte
	var dels []*roaring.Bitmap
	var kept []*tier.Document
	for _, docs := range [][]*tier.Document{a, b} {
		sec, err := sg.BuildLexical(docs)
		if s := open(t, sec, err, docs); s.NumDocs() != len(docs) {
			t.Fatalf("built %d docs, want %d", s.NumDocs(), len(docs))
		}
		del := roaring.New()
		for r, d := range docs {
			if rng.IntN(3) == 0 {
				del.Add(uint32(r))
			} else {
				kept = append(kept, d)
			}
		}
		sections, dels = append(sections, sec), append(dels, del)
	}
	merged, err := sg.MergeLexical(sections, []string{"a", "b"}, dels)
	ms := open(t, merged, err, kept)
	ref, err := sg.BuildLexical(kept)
	rs := open(t, ref, err, kept)
	if ms.NumDocs() != len(kept) || rs.NumDocs() != len(kept) {
		t.Fatalf("merged %d docs, rebuilt %d, kept %d", ms.NumDocs(), rs.NumDocs(), len(kept))
	}
	p := bm25.DefaultSearchParams()
	p.K = 1000
	for _, qs := range []string{"alpha", "beta gamma", "getUserName", "user", "parse*", "+delta alpha", `"alpha beta"`, "café -alpha"} {
		q := bm25.ParseQuery(qs, an, false)
		got, err1 := bm25.Search([]bm25.View{{Seg: ms}}, q, p, nil)
		want, err2 := bm25.Search([]bm25.View{{Seg: rs}}, q, p, nil)
		if err1 != nil || err2 != nil {
			t.Fatalf("%q: %v %v", qs, err1, err2)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d hits merged, %d rebuilt", qs, len(got), len(want))
		}
		for i := range got {
			if got[i].ExtID != want[i].ExtID || math.Abs(got[i].Score-want[i].Score) > 1e-9 {
				t.Fatalf("%q hit %d: merged %+v, rebuilt %+v", qs, i, got[i], want[i])
			}
		}
	}
	// External ids are ExtID of the document ids.
	if ms.ExtID(0) != ExtID(kept[0].ID) {
		t.Fatalf("ExtID(0) = %d, want ExtID(%q)", ms.ExtID(0), kept[0].ID)
	}
}

// TestColdCache: a catalog per archive, rows in archive order with their
// decoded metadata; cached while the archive is in the snapshot, dropped
// when it leaves, rebuilt when the archive's documents change.
func TestColdCache(t *testing.T) {
	cc := NewColdCache(text.MustNew(text.CodeOptions()))
	rng := rand.New(rand.NewPCG(5, 6))
	a1 := tier.ColdArchive{ID: 1, Path: "a1", Docs: randDocs(rng, "x", 10)}
	a2 := tier.ColdArchive{ID: 2, Path: "a2", Docs: randDocs(rng, "y", 7)}
	cats, err := cc.Get([]tier.ColdArchive{a1, a2})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range []tier.ColdArchive{a1, a2} {
		c := cats[i]
		if c.Seg.NumDocs() != len(a.Docs) || len(c.Rows) != len(a.Docs) {
			t.Fatalf("archive %d: %d docs, %d rows, want %d", a.ID, c.Seg.NumDocs(), len(c.Rows), len(a.Docs))
		}
		for r, d := range a.Docs {
			if c.Rows[r].Doc != d || c.ByDoc[d] != uint32(r) {
				t.Fatalf("archive %d row %d: not its document", a.ID, r)
			}
			if n, _ := c.Rows[r].Meta["n"].Num(); n != float64(r) {
				t.Fatalf("archive %d row %d: metadata %v", a.ID, r, c.Rows[r].Meta)
			}
		}
	}
	again, _ := cc.Get([]tier.ColdArchive{a2, a1})
	if again[0] != cats[1] || again[1] != cats[0] {
		t.Fatal("catalogs not cached")
	}
	// a1 leaves the snapshot: evicted; a2 is rewritten under the same id.
	a2b := tier.ColdArchive{ID: 2, Path: "a2", Docs: randDocs(rng, "z", 3)}
	cats2, _ := cc.Get([]tier.ColdArchive{a2b})
	if cats2[0] == cats[1] || len(cats2[0].Rows) != 3 || cats2[0].Rows[0].Doc != a2b.Docs[0] {
		t.Fatal("a changed archive was not rebuilt")
	}
	if cats3, _ := cc.Get([]tier.ColdArchive{a1}); cats3[0] == cats[0] {
		t.Fatal("an archive that left the snapshot stayed cached")
	}
	// A row whose metadata does not decode is an error naming the archive.
	bad := tier.ColdArchive{ID: 9, Path: "bad.parquet", Docs: []*tier.Document{{ID: "q", Metadata: map[string]string{"k": "{"}}}}
	if _, err := cc.Get([]tier.ColdArchive{bad}); err == nil || !strings.Contains(err.Error(), "bad.parquet") {
		t.Fatalf("undecodable metadata: %v", err)
	}
}
