package bm25

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/text"
)

type fieldDoc struct {
	ext    uint64
	fields [][]text.Token
}

func buildFieldViews(t testing.TB, docs []fieldDoc, nf int, cuts []int) []FieldsView {
	var views []FieldsView
	start := 0
	for _, end := range append(cuts, len(docs)) {
		var fv FieldsView
		for f := 0; f < nf; f++ {
			b := NewBuilder(Options{})
			for _, d := range docs[start:end] {
				if _, err := b.Add(d.ext, d.fields[f]); err != nil {
					t.Fatal(err)
				}
			}
			s, err := b.Segment()
			if err != nil {
				t.Fatal(err)
			}
			fv.Segs = append(fv.Segs, s)
		}
		views = append(views, fv)
		start = end
	}
	return views
}

// fieldModel scores by the documented formula: per-field BM25 with the
// field's own statistics, times the boost, summed field-major.
func fieldModels(docs []fieldDoc, nf int) []*model {
	ms := make([]*model, nf)
	for f := 0; f < nf; f++ {
		m := &model{}
		for _, d := range docs {
			m.docs = append(m.docs, modelDoc{ext: d.ext, toks: d.fields[f]})
		}
		m.prepare()
		ms[f] = m
	}
	return ms
}

func fieldModel(ms []*model, docs []fieldDoc, specs []FieldSpec, q []Query, p SearchParams, allow func(uint64) bool) []Hit {
	nf := len(specs)
	N := float64(len(docs))
	var hits []Hit
	for i, d := range docs {
		if allow != nil && !allow(d.ext) {
			continue
		}
		score, matched, excluded := 0.0, false, false
		for f := 0; f < nf; f++ {
			m := ms[f]
			for _, t := range q[f].MustNot {
				if m.ds[i].tf[t] > 0 {
					excluded = true
				}
			}
			// distinct terms in first-appearance order with counts
			var order []string
			cnt := map[string]int{}
			for _, t := range q[f].Should {
				if cnt[t] == 0 {
					order = append(order, t)
				}
				cnt[t]++
			}
			avgdl := m.sumDL / N
			for _, t := range order {
				tf := m.ds[i].tf[t]
				if tf == 0 {
					continue
				}
				matched = true
				n := m.df[t]
				idf := math.Log((N-n+0.5)/(n+0.5) + 1)
				w := specs[f].Boost * (float64(cnt[t]) * idf)
				ft := float64(tf)
				norm := p.K1 * (1 - p.B + p.B*float64(m.ds[i].dl)/avgdl)
				score += w * (ft * (p.K1 + 1) / (ft + norm))
			}
		}
		if matched && !excluded {
			hits = append(hits, Hit{ExtID: d.ext, Score: score})
		}
	}
	sort.Slice(hits, func(a, b int) bool {
		if hits[a].Score != hits[b].Score {
			return hits[a].Score > hits[b].Score
		}
		return hits[a].ExtID < hits[b].ExtID
	})
	if len(hits) > p.K {
		hits = hits[:p.K]
	}
	return hits
}

// sameHitsApprox is sameHits, allowing ties within 1e-12 relative to swap
// (the model multiplies boost·qtf·idf in a different association).
func sameHitsApprox(t *testing.T, label string, got, want []Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d", label, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i].Score-want[i].Score) > 1e-9*math.Abs(want[i].Score) {
			t.Fatalf("%s: rank %d: got %d (%.12g), want %d (%.12g)", label, i, got[i].ExtID, got[i].Score, want[i].ExtID, want[i].Score)
		}
		if got[i].ExtID != want[i].ExtID && math.Abs(got[i].Score-want[i].Score) > 1e-12*math.Abs(want[i].Score) {
			t.Fatalf("%s: rank %d: got %d, want %d", label, i, got[i].ExtID, want[i].ExtID)
		}
	}
}

func TestSearchFieldsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	n := 1500
	if testing.Short() {
		n = 400
	}
	body := synthCorpus(r, n, 300)
	sym := synthCorpus(r, n, 60)
	docs := make([]fieldDoc, n)
	for i := range docs {
		symToks := sym[i].toks
		if len(symToks) > 3 {
			symToks = symToks[:3]
		}
		if i%5 == 0 {
			symToks = nil // empty field
		}
		docs[i] = fieldDoc{ext: body[i].ext, fields: [][]text.Token{symToks, body[i].toks}}
	}
	specs := []FieldSpec{{"symbol", 3}, {"body", 1}}
	layouts := map[string][]FieldsView{"one": buildFieldViews(t, docs, 2, nil), "three": buildFieldViews(t, docs, 2, []int{n / 3, n / 2})}
	ms := fieldModels(docs, 2)
	for qi := 0; qi < 200; qi++ {
		q := make([]Query, 2)
		for i := 0; i < 1+r.IntN(3); i++ {
			w := fmt.Sprintf("w%d", zipfPick(r, 60))
			q[0].Should = append(q[0].Should, w)
			q[1].Should = append(q[1].Should, w)
		}
		if r.IntN(6) == 0 {
			q[1].MustNot = []string{fmt.Sprintf("w%d", r.IntN(20))}
		}
		p := DefaultSearchParams()
		p.K = []int{1, 10, 30}[r.IntN(3)]
		var allow func(uint64) bool
		if r.IntN(5) == 0 {
			allow = func(e uint64) bool { return e%3 != 0 }
		}
		want := fieldModel(ms, docs, specs, q, p, allow)
		for name, views := range layouts {
			vs := append([]FieldsView(nil), views...)
			if allow != nil {
				for vi := range vs {
					bm := roaring.New()
					for d := 0; d < vs[vi].Segs[0].NumDocs(); d++ {
						if allow(vs[vi].Segs[0].ExtID(uint32(d))) {
							bm.Add(uint32(d))
						}
					}
					vs[vi].Allow = bm
				}
			}
			var ref []Hit
			for _, m := range searchModes {
				p.Exhaustive, p.Algorithm = m.exh, m.alg
				got, err := SearchFields(vs, specs, q, p, nil)
				if err != nil {
					t.Fatal(err)
				}
				label := fmt.Sprintf("q%d %v %s %s", qi, q, name, m.name)
				sameHitsApprox(t, label, got, want)
				if m.exh {
					ref = got
				} else {
					sameHits(t, label+" vs reference", got, ref)
				}
			}
		}
	}
}

func zipfPick(r *rand.Rand, n int) int {
	x := int(math.Floor(math.Exp(r.Float64() * math.Log(float64(n)))))
	return min(x, n-1)
}

// TestDefinitionOutranksCallSites: the document defining getUserName (in
// its symbol field) ranks above files that only call it, even ones that
// call it many times.
func TestDefinitionOutranksCallSites(t *testing.T) {
	code := text.MustNew(text.CodeOptions())
	prose := text.MustNew(text.ProseOptions())
	type src struct {
		ext               uint64
		symbol, doc, body string
	}
	srcs := []src{
		{1, "", "", "u := getUserName(id); v := getUserName(id2); w := getUserName(id3)"},
		{2, "getUserName", "getUserName returns the user's display name.", "func getUserName(id int) string { return names[id] }"},
		{3, "", "", "log(getUserName(id))"},
		{4, "setUserName", "setUserName sets the name", "func setUserName(id int, n string) { names[id] = n }"},
	}
	specs := []FieldSpec{{"symbol", 5}, {"doc", 1.5}, {"body", 1}}
	an := []*text.Analyzer{code, prose, code}
	var docs []fieldDoc
	for _, s := range srcs {
		docs = append(docs, fieldDoc{ext: s.ext, fields: [][]text.Token{code.Analyze(s.symbol), prose.Analyze(s.doc), code.Analyze(s.body)}})
	}
	views := buildFieldViews(t, docs, 3, nil)
	q := make([]Query, 3)
	for f := range q {
		q[f] = ParseQuery("getUserName", an[f], false)
	}
	hits, err := SearchFields(views, specs, q, DefaultSearchParams(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].ExtID != 2 {
		t.Fatalf("definition not first: %+v", hits)
	}
	if _, err := SearchFields(views, specs, []Query{{Must: []string{"x"}}, {}, {}}, DefaultSearchParams(), nil); err == nil {
		t.Error("Must accepted by SearchFields")
	}
}
