package bm25

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stratasearch/strata/engine/text"
)

// TestSkipVarints checks the word-at-a-time varint skipper against the
// sum of the encoded lengths, for every count over random mixes of 1- to
// 5-byte varints (so terminators fall at every byte of a word).
func TestSkipVarints(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 1))
	for iter := 0; iter < 200; iter++ {
		var buf []byte
		ends := []int{0}
		for i := 0; i < r.IntN(80); i++ {
			v := r.Uint64N(1 << (7 * (1 + r.IntN(5)) % 64))
			buf = binary.AppendUvarint(buf, v)
			ends = append(ends, len(buf))
		}
		// Trailing garbage continuation bytes must not count.
		tail := append(slices.Clone(buf), 0x80, 0x81)
		for _, b := range [][]byte{buf, tail} {
			for n := 0; n < len(ends); n++ {
				got, ok := skipVarints(b, n)
				if !ok || got != ends[n] {
					t.Fatalf("iter %d: skipVarints(n=%d) = %d, %v; want %d", iter, n, got, ok, ends[n])
				}
			}
			if _, ok := skipVarints(b, len(ends)); ok {
				t.Fatalf("iter %d: skipping %d of %d varints succeeded", iter, len(ends), len(ends)-1)
			}
		}
	}
}

// longDocs makes n documents of 50..maxLen tokens over a small vocabulary
// (so terms co-occur everywhere and phrases often almost match), with
// occasional large position gaps so position deltas need multi-byte
// varints.
func longDocs(r *rand.Rand, n, vocab, maxLen int) []modelDoc {
	zipf := rand.NewZipf(r, 1.2, 1, uint64(vocab-1))
	docs := make([]modelDoc, n)
	for i := range docs {
		l := 50 + r.IntN(maxLen-50)
		pos := 0
		var toks []text.Token
		for j := 0; j < l; j++ {
			if r.IntN(40) == 0 {
				pos += r.IntN(1 << 16)
			}
			toks = append(toks, text.Token{Term: fmt.Sprintf("t%d", zipf.Uint64()), Pos: pos})
			pos++
		}
		docs[i] = modelDoc{ext: uint64((i*7919)%n) + 5000, toks: toks}
	}
	return docs
}

// TestPositionsRandomAccess walks every posting list with random NextGEQ
// jumps (so the incremental position pointer resumes, restarts at block
// starts, and is re-read for the same document) and compares each visited
// document's positions with the sequential decoder of Postings.
func TestPositionsRandomAccess(t *testing.T) {
	r := rand.New(rand.NewPCG(62, 2))
	n := 900
	if testing.Short() {
		n = 300
	}
	segs := buildSegs(t, longDocs(r, n, 40, 400), nil, Options{})
	s := segs[0]
	for i := 0; i < s.NumTerms(); i++ {
		docs, tfs, pos, err := s.postingsAt(i)
		if err != nil {
			t.Fatal(err)
		}
		want := map[uint32][]uint32{}
		k := 0
		for j, d := range docs {
			want[d] = pos[k : k+int(tfs[j])]
			k += int(tfs[j])
		}
		c, err := s.openCursor(i)
		if err != nil {
			t.Fatal(err)
		}
		for d := c.doc(); d != efEnd; {
			reads := 1 + r.IntN(3) // re-reading one doc: a phrase repeating a term
			for ; reads > 0; reads-- {
				it := c.positions()
				var got []uint32
				stop := len(want[d])
				if r.IntN(3) == 0 {
					stop = r.IntN(stop + 1) // a phrase check that stops early
				}
				for len(got) < stop && it.next() {
					got = append(got, uint32(it.cur))
				}
				if !slices.Equal(got, want[d][:stop]) {
					t.Fatalf("term %q doc %d: positions %v, want %v", s.Term(i), d, got, want[d][:stop])
				}
			}
			if c.err != nil {
				t.Fatal(c.err)
			}
			if r.IntN(2) == 0 {
				c.next()
			} else {
				c.nextGEQ(d + 1 + uint32(r.IntN(300)))
			}
			d = c.doc()
		}
	}
}

// TestPhraseMatchVsReference compares the lazy, least-frequent-slot-driven
// phraseMatch with the reference phraseAt on random position lists and
// random (also negative, repeated and unsorted) slot offsets.
func TestPhraseMatchVsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 3))
	matches := 0
	for iter := 0; iter < 20000; iter++ {
		slots := 2 + r.IntN(3)
		ph := make([]PhraseTerm, slots)
		pos := make([][]uint32, slots)
		its := make([]posIter, slots)
		span := 1 + r.IntN(60)
		for j := range ph {
			ph[j] = PhraseTerm{Term: fmt.Sprint(j), Offset: r.IntN(5) - 1}
			seen := map[uint32]bool{}
			for k := 0; k < 1+r.IntN(12); k++ {
				p := uint32(r.IntN(span))
				if r.IntN(50) == 0 {
					p = 1<<32 - 1 - uint32(r.IntN(3))
				}
				if !seen[p] {
					seen[p] = true
					pos[j] = append(pos[j], p)
				}
			}
			slices.Sort(pos[j])
			var enc []byte
			prev := uint32(0)
			for _, p := range pos[j] {
				enc = binary.AppendUvarint(enc, uint64(p-prev))
				prev = p
			}
			its[j] = posIter{p: enc, left: len(pos[j]), cur: -1}
		}
		want := phraseAt(ph, pos)
		if got := phraseMatch(ph, its); got != want {
			t.Fatalf("iter %d: phrase %v over %v: phraseMatch %v, phraseAt %v", iter, ph, pos, got, want)
		}
		if want {
			matches++
		}
	}
	if matches < 1000 {
		t.Fatalf("only %d of 20000 random cases match: the test does not exercise matches", matches)
	}
}

// TestPhrasePruningExact compares pruned phrase queries (block-max region
// skips, exact-score check before positions, lazy positions) with the
// exhaustive reference and the naive model, over long documents where
// phrase terms co-occur far more often than the phrase, with optional,
// required and excluded terms, allow-lists, and one or three segments.
func TestPhrasePruningExact(t *testing.T) {
	r := rand.New(rand.NewPCG(64, 4))
	nDocs, nQ := 1200, 400
	if testing.Short() {
		nDocs, nQ = 400, 100
	}
	docs := longDocs(r, nDocs, 30, 300)
	m := &model{docs: docs}
	layouts := map[string][]*Segment{
		"one":   buildSegs(t, docs, nil, Options{}),
		"three": buildSegs(t, docs, []int{nDocs / 3, nDocs / 2}, Options{}),
	}
	phrase := func() []PhraseTerm {
		d := docs[r.IntN(len(docs))]
		k := 2 + r.IntN(3)
		at := r.IntN(len(d.toks) - k)
		var ph []PhraseTerm
		for j := 0; j < k; j++ {
			tk := d.toks[at+j]
			ph = append(ph, PhraseTerm{Term: tk.Term, Offset: tk.Pos - d.toks[at].Pos})
		}
		if r.IntN(3) == 0 { // usually no longer a real phrase
			ph[r.IntN(k)].Term = fmt.Sprintf("t%d", r.IntN(30))
		}
		return ph
	}
	for qi := 0; qi < nQ; qi++ {
		var q Query
		q.Phrases = [][]PhraseTerm{phrase()}
		switch r.IntN(6) {
		case 0:
			q.Phrases = append(q.Phrases, phrase())
		case 1:
			q.Should = []string{fmt.Sprintf("t%d", r.IntN(30)), fmt.Sprintf("t%d", r.IntN(30))}
		case 2:
			q.Must = []string{fmt.Sprintf("t%d", r.IntN(30))}
		case 3:
			q.MustNot = []string{fmt.Sprintf("t%d", 10+r.IntN(20))}
		}
		p := DefaultSearchParams()
		p.K = []int{1, 3, 10, 30}[r.IntN(4)]
		if r.IntN(4) == 0 {
			p.K1, p.B = r.Float64()*3, r.Float64()
		}
		var allow func(uint64) bool
		if r.IntN(5) == 0 {
			mod := uint64(2 + r.IntN(3))
			allow = func(ext uint64) bool { return ext%mod == 0 }
		}
		want := m.search(q, p, allow, 64)
		for _, name := range []string{"one", "three"} {
			segs := layouts[name]
			views := allowViews(segs, allow)
			for _, exh := range []bool{false, true} {
				p.Exhaustive = exh
				got, err := Search(views, q, p, nil)
				if err != nil {
					t.Fatal(err)
				}
				sameHits(t, fmt.Sprintf("q%d %+v %s exhaustive=%v k=%d", qi, q, name, exh, p.K), got, want)
			}
		}
	}
}
