package bm25

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// TestOpenFetchOtherReaders: the readers besides Search (SearchFields,
// CountIn with an allow-list, Merge) over segments whose posting blobs
// are absent at open answer exactly as over the same segments opened
// whole.
func TestOpenFetchOtherReaders(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 8))
	docs := synthCorpus(r, 400, 120)
	build := func(lo, hi int) []byte {
		b := NewBuilder(Options{})
		for _, d := range docs[lo:hi] {
			if _, err := b.Add(d.ext, d.toks); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if _, err := b.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	pair := func(b []byte) (*Segment, *Segment) {
		full, err := Open(b, "full")
		if err != nil {
			t.Fatal(err)
		}
		f := holed(t, b)
		lazy, err := OpenFetch(f.holed, "lazy", f)
		if err != nil {
			t.Fatal(err)
		}
		return full, lazy
	}
	// Two "fields" over the same 200 documents: two halves of the corpus
	// reindexed as field texts of docs 0..199.
	f0, l0 := pair(build(0, 200))
	f1, l1 := pair(build(200, 400))
	fields := []FieldSpec{{Name: "a", Boost: 1}, {Name: "b", Boost: 2.5}}
	allow := roaring.New()
	for d := uint32(0); d < 200; d += 3 {
		allow.Add(d)
	}
	nonEmpty := 0
	for qi := 0; qi < 40; qi++ {
		q := Query{Should: []string{randTerm(r, 120), randTerm(r, 120), randTerm(r, 120)}, MustNot: []string{randTerm(r, 120)}}
		p := DefaultSearchParams()
		p.Exhaustive = qi%3 == 0
		want, werr := SearchFields([]FieldsView{{Segs: []*Segment{f0, f1}, Allow: allow}}, fields, []Query{q, q}, p, nil)
		got, gerr := SearchFields([]FieldsView{{Segs: []*Segment{l0, l1}, Allow: allow}}, fields, []Query{q, q}, p, nil)
		if werr != nil || gerr != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("SearchFields %+v: lazy %v (%v), whole %v (%v)", q, got, gerr, want, werr)
		}
		if len(want) > 0 {
			nonEmpty++
		}
		term := randTerm(r, 120)
		wn, werr := f0.CountIn(term, allow, 0)
		gn, gerr := l0.CountIn(term, allow, 0)
		if werr != nil || gerr != nil || wn != gn {
			t.Fatalf("CountIn %q: lazy %d (%v), whole %d (%v)", term, gn, gerr, wn, werr)
		}
	}
	if nonEmpty < 20 {
		t.Fatalf("only %d of 40 queries matched", nonEmpty)
	}
	// Merge of fresh lazy segments writes the bytes Merge of whole ones
	// writes.
	f2, l2 := pair(build(0, 150))
	f3, l3 := pair(build(150, 400))
	del := []*roaring.Bitmap{roaring.BitmapOf(1, 5, 9), nil}
	var wb, gb bytes.Buffer
	if _, err := Merge(&wb, []*Segment{f2, f3}, del); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(&gb, []*Segment{l2, l3}, del); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(wb.Bytes(), gb.Bytes()) {
		t.Fatal("Merge of lazy segments differs from Merge of whole ones")
	}
}

// randTerm is one of the synthCorpus words w0..w(vocab-1), the low ones
// (frequent) more often.
func randTerm(r *rand.Rand, vocab int) string {
	if r.IntN(2) == 0 {
		return fmt.Sprintf("w%d", r.IntN(10))
	}
	return fmt.Sprintf("w%d", r.IntN(vocab))
}
