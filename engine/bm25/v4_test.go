package bm25

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/text"
)

// oneWordCorpus is n documents of one distinct word each (a word-vector
// set with its words as text), every tenth also holding the word "common"
// and every hundredth a word twice, so the lists are mostly of one
// posting, some of them with tf 2.
func oneWordCorpus(n int) []modelDoc {
	docs := make([]modelDoc, n)
	for i := range docs {
		w := fmt.Sprintf("w%05d", (i*7919)%n)
		toks := []text.Token{{Term: w, Pos: 0}}
		if i%10 == 0 {
			toks = append(toks, text.Token{Term: "common", Pos: 1})
		}
		if i%100 == 0 {
			toks = append(toks, text.Token{Term: w, Pos: 3})
		}
		docs[i] = modelDoc{ext: uint64(i)*0x9e3779b97f4a7c15 ^ 0x5555, toks: toks}
	}
	return docs
}

// TestSingleListPositionsOnly: in format 4 a list of one posting is its
// positions alone (no doc id, no tf block; the record holds both), which
// saves at least 3 bytes a list against format 3 on 3,000 one-word
// documents (a doc id of 2 bytes at that count, and the tf block's width
// byte), and decodes to exactly the postings format 3 holds.
func TestSingleListPositionsOnly(t *testing.T) {
	docs := oneWordCorpus(3000)
	v3b := segmentBytes(t, docs, Options{formatVersion: 3})
	v4b := segmentBytes(t, docs, Options{})
	v3, err := Open(v3b, "v3")
	if err != nil {
		t.Fatal(err)
	}
	v4, err := Open(v4b, "v4")
	if err != nil {
		t.Fatal(err)
	}
	if v4.Info().Version != 4 {
		t.Fatalf("default format %d, want 4", v4.Info().Version)
	}
	if err := v4.Verify(); err != nil {
		t.Fatal(err)
	}
	if in, err := Inspect(v4b); err != nil || !in.OK() {
		t.Fatalf("inspect: %v %+v", err, in)
	}
	singles := 0
	for i := 0; i < v4.NumTerms(); i++ {
		r := v4.rec(i)
		d3, f3, p3, err := v3.postingsAt(i)
		if err != nil {
			t.Fatal(err)
		}
		d4, f4, p4, err := v4.postingsAt(i)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(d3, f3, p3) != fmt.Sprint(d4, f4, p4) {
			t.Fatalf("term %q: v3 postings %v %v %v, v4 %v %v %v", v4.Term(i), d3, f3, p3, d4, f4, p4)
		}
		if r.df != 1 {
			continue
		}
		singles++
		var want []byte
		prev := uint32(0)
		for _, p := range p4 {
			want = binary.AppendUvarint(want, uint64(p-prev))
			prev = p
		}
		if !v4.single(r) || r.efLen != 0 || string(v4.post[r.off:r.off+uint64(r.blobLen)]) != string(want) {
			t.Fatalf("term %q: single %v, efLen %d, blob %x, want positions %x", v4.Term(i), v4.single(r), r.efLen, v4.post[r.off:r.off+uint64(r.blobLen)], want)
		}
	}
	if singles < 2900 {
		t.Fatalf("%d single-posting lists, want ≥ 2900", singles)
	}
	if saved := len(v3b) - len(v4b); saved < 3*singles {
		t.Errorf("format 4 saves %d bytes over %d single-posting lists (v3 %d, v4 %d bytes), want ≥ 3 a list", saved, singles, len(v3b), len(v4b))
	}
	t.Logf("%d documents, %d single-posting lists: v3 %d bytes, v4 %d (%.1f bytes a list saved)", len(docs), singles, len(v3b), len(v4b), float64(len(v3b)-len(v4b))/float64(singles))
	for _, m := range searchModes {
		p := DefaultSearchParams()
		p.Exhaustive, p.Algorithm, p.K = m.exh, m.alg, 20
		for _, q := range []Query{
			{Should: []string{"w00007", "common", "w02999"}},
			{Must: []string{"w00000", "common"}},
			{Phrases: [][]PhraseTerm{{{"w00000", 0}, {"common", 1}}}},
			{Should: []string{"w00100"}},
		} {
			want, err := Search([]View{{Seg: v3}}, q, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Search([]View{{Seg: v4}}, q, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatalf("%s %+v: no hits", m.name, q)
			}
			sameHits(t, fmt.Sprintf("%s %+v", m.name, q), got, want)
		}
	}
}

// TestSingleListCorrupt: a single-posting record whose maxTF is 0 or
// whose minDL is not its document's length is refused at Open, and one
// whose blob has a byte changed fails Verify; none panics.
func TestSingleListCorrupt(t *testing.T) {
	docs := oneWordCorpus(50)
	sw := func() *segWriter {
		b := NewBuilder(Options{})
		for _, d := range docs {
			b.Add(d.ext, d.toks)
		}
		w, err := b.seal(false)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	i := 1 // a single-posting list ("common" sorts first)
	if w := sw(); w.recs[i].df != 1 {
		t.Fatalf("term %d df %d", i, w.recs[i].df)
	}
	for name, edit := range map[string]func(w *segWriter){
		"maxTF 0":  func(w *segWriter) { w.recs[i].maxTF = 0 },
		"minDL":    func(w *segWriter) { w.recs[i].minDL++ },
		"efLen":    func(w *segWriter) { w.recs[i].efLen = 1 },
		"maxTF +1": func(w *segWriter) { w.recs[i].maxTF++ },
	} {
		w := sw()
		edit(w)
		s, err := Open(w.appendTo(nil), name)
		if err == nil {
			err = s.Verify()
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

// TestOmitExtIDs: a segment written without external ids is 8 bytes a
// document smaller; opened without them it refuses searches
// (ErrNoExtIDs) and a Merge that would store them, and merges into
// another such segment; opened with them (OpenWith) it answers every
// query exactly as the segment that stores them, tie order included.
func TestOmitExtIDs(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	docs := synthCorpus(r, 600, 40)
	// Equal scores: documents identical but for their ids.
	for i := 0; i < 40; i++ {
		docs = append(docs, modelDoc{ext: r.Uint64(), toks: []text.Token{{Term: "tie", Pos: 0}}})
	}
	ext := make([]uint64, len(docs))
	for i, d := range docs {
		ext[i] = d.ext
	}
	withB := segmentBytes(t, docs, Options{})
	noB := segmentBytes(t, docs, Options{OmitExtIDs: true})
	if len(withB)-len(noB) != 8*len(docs) {
		t.Fatalf("omitting external ids saved %d bytes for %d documents, want %d", len(withB)-len(noB), len(docs), 8*len(docs))
	}
	with, err := Open(withB, "with")
	if err != nil {
		t.Fatal(err)
	}
	bare, err := Open(noB, "bare")
	if err != nil {
		t.Fatal(err)
	}
	if !with.StoresExtIDs() || bare.StoresExtIDs() || bare.ExtID(3) != 0 {
		t.Fatalf("StoresExtIDs %v / %v, bare ExtID %d", with.StoresExtIDs(), bare.StoresExtIDs(), bare.ExtID(3))
	}
	if err := bare.Verify(); err != nil {
		t.Fatal(err)
	}
	if in, err := Inspect(noB); err != nil || !in.OK() {
		t.Fatalf("inspect: %v %+v", err, in)
	}
	q := Query{Should: []string{"tie", docs[0].toks[0].Term}}
	if _, err := Search([]View{{Seg: bare}}, q, DefaultSearchParams(), nil); !errors.Is(err, ErrNoExtIDs) {
		t.Fatalf("search without external ids: %v, want ErrNoExtIDs", err)
	}
	if _, err := SearchFields([]FieldsView{{Segs: []*Segment{bare}}}, []FieldSpec{{Name: "body", Boost: 1}}, []Query{q}, DefaultSearchParams(), nil); !errors.Is(err, ErrNoExtIDs) {
		t.Fatalf("SearchFields without external ids: %v, want ErrNoExtIDs", err)
	}
	if _, err := Merge(&bytes.Buffer{}, []*Segment{with, bare}, nil); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("Merge storing ids from a segment without them: %v, want ErrInvalidOptions", err)
	}
	if _, err := OpenWith(noB, "short", OpenOptions{ExtIDs: ext[1:]}); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("OpenWith %d ids for %d docs: %v", len(ext)-1, len(docs), err)
	}
	given, err := OpenWith(noB, "given", OpenOptions{ExtIDs: ext})
	if err != nil {
		t.Fatal(err)
	}
	// A merge of both kinds, without ids, drops every third document.
	del := roaring.New()
	for d := uint32(0); d < uint32(len(docs)); d += 3 {
		del.Add(d)
	}
	var mb, wantB bytes.Buffer
	if _, err := MergeWith(&mb, []*Segment{bare, with}, []*roaring.Bitmap{del, nil}, MergeOptions{OmitExtIDs: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(&wantB, []*Segment{with, with}, []*roaring.Bitmap{del, nil}); err != nil {
		t.Fatal(err)
	}
	var mext []uint64
	for d := range docs {
		if !del.Contains(uint32(d)) {
			mext = append(mext, ext[d])
		}
	}
	mext = append(mext, ext...)
	merged, err := OpenWith(mb.Bytes(), "merged", OpenOptions{ExtIDs: mext})
	if err != nil {
		t.Fatal(err)
	}
	if err := merged.Verify(); err != nil {
		t.Fatal(err)
	}
	wantMerged, err := Open(wantB.Bytes(), "want-merged")
	if err != nil {
		t.Fatal(err)
	}
	for qi := 0; qi < 100; qi++ {
		q := Query{Should: []string{"tie"}}
		for k := 0; k < r.IntN(3); k++ {
			q.Should = append(q.Should, with.Term(r.IntN(with.NumTerms())))
		}
		if qi%3 == 1 {
			q = Query{Must: q.Should[:1+r.IntN(len(q.Should))]}
		}
		for _, m := range searchModes {
			p := DefaultSearchParams()
			p.Exhaustive, p.Algorithm, p.K = m.exh, m.alg, 15
			for _, c := range []struct{ got, want *Segment }{{given, with}, {merged, wantMerged}} {
				want, err := Search([]View{{Seg: c.want}}, q, p, nil)
				if err != nil {
					t.Fatal(err)
				}
				got, err := Search([]View{{Seg: c.got}}, q, p, nil)
				if err != nil {
					t.Fatal(err)
				}
				sameHits(t, fmt.Sprintf("q%d %s %s", qi, m.name, c.got.Path()), got, want)
			}
		}
	}
}
