package bm25

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stratasearch/strata/engine/text"
)

// TestCornersDominate checks appendCorners against the points it
// summarises: under random parameters the largest corner score is at least
// every point's score, and equal to the largest when the frontier fits.
func TestCornersDominate(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for it := 0; it < 3000; it++ {
		n := 1 + r.IntN(BlockSize)
		pts := make([]impactPoint, n)
		for i := range pts {
			pts[i] = impactPoint{uint32(1 + r.IntN(1+r.IntN(50))), uint32(1 + r.IntN(1+r.IntN(400)))}
		}
		maxC := []int{1, 2, 4, 8}[r.IntN(4)]
		orig := append([]impactPoint(nil), pts...)
		corners := appendCorners(nil, pts, maxC, 1+r.Float64()*100)
		if len(corners) == 0 || len(corners) > maxC {
			t.Fatalf("%d corners for max %d", len(corners), maxC)
		}
		// The exact frontier size decides whether the bound must be exact.
		front := appendCorners(nil, append([]impactPoint(nil), orig...), BlockSize, 40)
		var maxTF, minDL uint32 = 0, math.MaxUint32
		for _, p := range orig {
			maxTF, minDL = max(maxTF, p.a), min(minDL, p.b)
		}
		for pi := 0; pi < 5; pi++ {
			k1, b, avgdl := r.Float64()*3, r.Float64(), 1+r.Float64()*300
			if pi == 0 {
				k1, b, avgdl = 1.2, 0.75, 40
			}
			best := 0.0
			for _, p := range orig {
				best = max(best, TermScore(1, p.a, p.b, k1, b, avgdl))
			}
			got := cornerBound(corners, 1, k1, b, avgdl)
			if got < best*(1-1e-12) {
				t.Fatalf("it %d: corner bound %v below the best point %v (k1 %v b %v avgdl %v)", it, got, best, k1, b, avgdl)
			}
			if len(front) <= maxC && math.Abs(got-best) > 1e-12*best {
				t.Fatalf("it %d: frontier of %d fits %d corners, bound %v != best %v", it, len(front), maxC, got, best)
			}
			if loose := TermScore(1, maxTF, minDL, k1, b, avgdl); got > loose*(1+1e-12) {
				t.Fatalf("it %d: corner bound %v above the (max tf, min |D|) bound %v", it, got, loose)
			}
		}
	}
}

// openSegs builds the segments as buildSegs does but opens them from their
// bytes, as stored segments are (a Builder's own segment has no summaries).
func openSegs(t testing.TB, docs []modelDoc, cuts []int) []*Segment {
	var segs []*Segment
	start := 0
	for i, end := range append(cuts, len(docs)) {
		b := NewBuilder(Options{})
		for _, d := range docs[start:end] {
			if _, err := b.Add(d.ext, d.toks); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if _, err := b.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		s, err := Open(buf.Bytes(), fmt.Sprintf("seg%d", i))
		if err != nil {
			t.Fatal(err)
		}
		segs = append(segs, s)
		start = end
	}
	return segs
}

// TestImpactsPruningExact is TestPruningExactSynthetic over stored
// segments with every list summarised (impactMinBlocks 1), so the corner
// bounds and the seeded thresholds take part in every pruned search.
func TestImpactsPruningExact(t *testing.T) {
	defer func(v int) { impactMinBlocks = v }(impactMinBlocks)
	impactMinBlocks = 1
	r := rand.New(rand.NewPCG(17, 19))
	nDocs, nQ := 3000, 500
	if testing.Short() {
		nDocs, nQ = 800, 80
	}
	vocab := 300
	docs := synthCorpus(r, nDocs, vocab)
	m := &model{docs: docs}
	layouts := map[string][]*Segment{
		"one":   openSegs(t, docs, nil),
		"three": openSegs(t, docs, []int{nDocs / 5, nDocs / 2}),
	}
	for qi := 0; qi < nQ; qi++ {
		q := randQuery(r, docs, vocab)
		p := DefaultSearchParams()
		p.K = []int{1, 3, 10, 50}[r.IntN(4)]
		if r.IntN(3) == 0 {
			p.K1, p.B = r.Float64()*3, r.Float64()
		}
		if r.IntN(3) == 0 {
			p.IDF = IDFRobertson
		}
		var allow func(uint64) bool
		if r.IntN(4) == 0 {
			mod := []uint64{2, 3, 97}[r.IntN(3)]
			allow = func(ext uint64) bool { return ext%mod == 0 }
		}
		want := m.search(q, p, allow, 64)
		for name, segs := range layouts {
			views := allowViews(segs, allow)
			for _, mode := range searchModes[1:] {
				p.Exhaustive, p.Algorithm = false, mode.alg
				got, err := Search(views, q, p, nil)
				if err != nil {
					t.Fatal(err)
				}
				sameHits(t, fmt.Sprintf("q%d %+v %s %s k=%d k1=%g b=%g", qi, q, name, mode.name, p.K, p.K1, p.B), got, want)
			}
		}
	}
	for name, segs := range layouts {
		n := 0
		for _, s := range segs {
			n += len(s.impacts.m)
		}
		if n == 0 {
			t.Fatalf("%s: no list was summarised", name)
		}
	}
}

// TestImpactsSkipBlocks: a term in every document, with a high tf in long
// documents and in a few mid-sized ones (the top 10), so each block's
// (max tf, min |D|) bound, taken from a long and a one-word document, is
// above the top 10's scores. Without summaries a one-term top-10 query visits every
// posting; with them the blocks whose best posting cannot reach the seeded
// threshold are skipped, and the hits are the same.
func TestImpactsSkipBlocks(t *testing.T) {
	var docs []modelDoc
	r := rand.New(rand.NewPCG(23, 29))
	for i := 0; i < 20000; i++ {
		var toks []text.Token
		add := func(n, tf int) {
			for j := 0; j < n; j++ {
				w := "z"
				if j < tf {
					w = "x"
				}
				toks = append(toks, text.Token{Term: w, Pos: j})
			}
		}
		switch {
		case i%997 == 1: // the few best: |D| 40, tf 20
			add(40, 20)
		case i%2 == 0: // short: "x" alone
			add(1, 1)
		default: // long: |D| 200, tf 2-20
			add(200, 2+r.IntN(19))
		}
		docs = append(docs, modelDoc{ext: uint64(i), toks: toks})
	}
	segs := openSegs(t, docs, nil)
	views := []View{{Seg: segs[0]}}
	p := DefaultSearchParams()
	q := Query{Should: []string{"x"}}
	// Traversal steps, as the canceller counts them (a context that can
	// be cancelled makes it count).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var steps [2]int
	var hits [2][]Hit
	for i, off := range []bool{true, false} {
		segs[0].noImpacts = off
		cn := &canceller{done: ctx.Done()}
		h, _, err := searchWith(ctx, cn, views, q, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		hits[i], steps[i] = h, cn.looks*cancelCheck+int(cn.tick)
	}
	sameHits(t, "impacts on vs off", hits[1], hits[0])
	if steps[0] < len(docs)/2 {
		t.Fatalf("without summaries %d traversal steps; the test expects the loose bounds to visit most of %d postings", steps[0], len(docs))
	}
	if steps[1]*5 > steps[0] {
		t.Fatalf("with summaries %d traversal steps, without %d: want at least 5× fewer (only the blocks holding the 20 best are read)", steps[1], steps[0])
	}
	t.Logf("traversal steps: %d without summaries, %d with", steps[0], steps[1])
}

// TestImpactsConcurrent builds one segment's summaries from concurrent
// searches (run under -race) and checks every search gets the same hits.
func TestImpactsConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 37))
	docs := synthCorpus(r, 4000, 50)
	segs := openSegs(t, docs, nil)
	views := []View{{Seg: segs[0]}}
	qs := []Query{{Should: []string{"w0"}}, {Should: []string{"w1", "w2"}}, {Should: []string{"w0", "w3", "w5"}}}
	want := make([][]Hit, len(qs))
	p := DefaultSearchParams()
	for i, q := range qs {
		var err error
		p.Exhaustive = true
		if want[i], err = Search(views, q, p, nil); err != nil {
			t.Fatal(err)
		}
	}
	p.Exhaustive = false
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			for i := range qs {
				q := qs[(i+g)%len(qs)]
				got, err := Search(views, q, p, nil)
				if err == nil && fmt.Sprint(got) != fmt.Sprint(want[(i+g)%len(qs)]) {
					err = fmt.Errorf("query %+v: %v, want %v", q, got, want[(i+g)%len(qs)])
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if len(segs[0].impacts.m) == 0 {
		t.Fatal("no list was summarised")
	}
}

// TestSeedFromRareTerm: a rare term (30 documents, spread out) next to a
// term in every document. The rare term's documents are the top 10, and
// its whole list seeds the threshold, so the common list is non-essential
// from the start and the traversal visits about the rare term's documents
// (it used to walk the common list until 10 of them had been met). The
// summaries are off here, so the short-list seed alone is tested.
func TestSeedFromRareTerm(t *testing.T) {
	var docs []modelDoc
	r := rand.New(rand.NewPCG(41, 43))
	for i := 0; i < 20000; i++ {
		toks := []text.Token{{Term: "c", Pos: 0}}
		for j := 1; j < 1+r.IntN(5); j++ {
			toks = append(toks, text.Token{Term: "c", Pos: j})
		}
		if i%661 == 7 {
			toks = append(toks, text.Token{Term: "r", Pos: len(toks)})
		}
		docs = append(docs, modelDoc{ext: uint64(i), toks: toks})
	}
	segs := openSegs(t, docs, nil)
	segs[0].noImpacts = true
	views := []View{{Seg: segs[0]}}
	p := DefaultSearchParams()
	q := Query{Should: []string{"c", "r"}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cn := &canceller{done: ctx.Done()}
	got, _, err := searchWith(ctx, cn, views, q, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Exhaustive = true
	want, err := Search(views, q, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameHits(t, "rare + common", got, want)
	steps := cn.looks*cancelCheck + int(cn.tick)
	if steps > len(docs)/10 {
		t.Fatalf("%d traversal steps for a query whose top 10 are 10 of the rare term's 31 documents; want at most %d", steps, len(docs)/10)
	}
	t.Logf("traversal steps: %d", steps)
}

// TestImpactsMemory: a summary keeps no spare capacity, within the
// documented 68 bytes a block (8 corners of 8 bytes and a 4-byte offset).
func TestImpactsMemory(t *testing.T) {
	var docs []modelDoc
	for i := 0; i < BlockSize*33; i++ {
		j := i % 16
		var toks []text.Token
		for p := 0; p < 20+5*j; p++ {
			term := "y"
			if p <= j {
				term = "x" // tf j+1, |D| 20+5j: 16 frontier points a block
			}
			toks = append(toks, text.Token{Term: term, Pos: p})
		}
		docs = append(docs, modelDoc{ext: uint64(i), toks: toks})
	}
	s := openSegs(t, docs, nil)[0]
	i, _ := s.lookup("x")
	ti := s.impactsFor(i, s.rec(i))
	if ti == nil {
		t.Fatal("no summary")
	}
	nb := int(s.rec(i).nb)
	if len(ti.pts) != nb*impactCorners {
		t.Fatalf("%d corners for %d blocks of 16-point frontiers, want %d", len(ti.pts), nb, nb*impactCorners)
	}
	blockBytes := cap(ti.pts)*8 + cap(ti.start)*4
	if blockBytes > 68*nb+4 { // the offsets hold nb+1 entries
		t.Fatalf("summary holds %d bytes for %d blocks (%.1f a block), want at most 68 a block", blockBytes, nb, float64(blockBytes)/float64(nb))
	}
	if listBytes := cap(ti.list)*8 + cap(ti.top)*8; listBytes > 400 {
		t.Fatalf("list corners and top postings hold %d bytes, want at most 400", listBytes)
	}
}

// TestSubnormalTie: ten identical documents whose score is subnormal tie;
// the pruned single-list test must not reject the one with the smallest
// ExtID (its multiplied-out form rounds differently from the score, and a
// relative slack is no margin there).
func TestSubnormalTie(t *testing.T) {
	var docs []modelDoc
	for i := 0; i < 10; i++ {
		docs = append(docs, modelDoc{ext: uint64(100 - i), toks: []text.Token{{Term: "a", Pos: 0}, {Term: "b", Pos: 1}}})
	}
	docs = append(docs, modelDoc{ext: 1000, toks: []text.Token{{Term: "c", Pos: 0}}})
	views := []View{{Seg: buildSegs(t, docs, nil, Options{})[0]}}
	q := Query{Should: []string{"a"}, Weights: map[string]float64{"a": 1e-322}}
	p := DefaultSearchParams()
	p.K, p.K1 = 1, 0.5
	p.Exhaustive = true
	want, err := Search(views, q, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Exhaustive = false
	got, err := Search(views, q, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameHits(t, "subnormal tie", got, want)
}

// TestOddStatsAndBoosts: a caller's Stats with a df above N (Robertson's
// IDF would be the log of a negative number) and a zero field boost on a
// term whose weight overflows give finite scores, and pruned search agrees
// with the reference.
func TestOddStatsAndBoosts(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 59))
	docs := synthCorpus(r, 500, 40)
	segs := openSegs(t, docs, nil)
	views := []View{{Seg: segs[0]}}
	q := Query{Should: []string{"w0", "w1", "w3"}}
	st := CollectStats(segs, q.Should)
	st.DF["w1"] = st.N + 50
	st.DF["w3"] = -7
	for _, idf := range []string{IDFDefault, IDFRobertson} {
		p := DefaultSearchParams()
		p.IDF = idf
		p.Exhaustive = true
		want, err := Search(views, q, p, st)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range want {
			if math.IsNaN(h.Score) || math.IsInf(h.Score, 0) {
				t.Fatalf("IDF %s: score %v", idf, h.Score)
			}
		}
		p.Exhaustive = false
		got, err := Search(views, q, p, st)
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, "odd stats "+idf, got, want)
	}
	fv := []FieldsView{{Segs: []*Segment{segs[0], segs[0]}}}
	fields := []FieldSpec{{Name: "a", Boost: 1}, {Name: "b", Boost: 0}}
	fq := []Query{{Should: []string{"w20"}}, {Should: []string{"w20", "w20"}, Weights: map[string]float64{"w20": math.MaxFloat64}}} // qtf 2 × IDF > 1: the weight overflows
	hits, err := SearchFields(fv, fields, fq, DefaultSearchParams(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if math.IsNaN(h.Score) {
			t.Fatalf("zero boost over an overflowing weight: score %v", h.Score)
		}
	}
}
