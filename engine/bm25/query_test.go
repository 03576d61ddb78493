package bm25

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stratasearch/strata/engine/text"
)

// TestParseQueryUnicodeSpace: every Unicode space separates words (form
// feed, vertical tab, NBSP, em space), and a multi-byte rune whose UTF-8
// bytes include 0x85 or 0xA0 (Å = C3 85, à = C3 A0) is not split there:
// both used to end in an empty word and an index-out-of-range panic.
func TestParseQueryUnicodeSpace(t *testing.T) {
	a := text.MustNew(text.ProseOptions())
	for _, tc := range []struct{ q, same string }{
		{"\f", ""},
		{"\v\u00a0\u2003", ""},
		{"alpha\fbeta", "alpha beta"},
		{"alpha\u00a0beta", "alpha beta"},
		{"alpha\u2003-beta", "alpha -beta"},
		{"Ångström", "ångström"},
		{"voilà café", "voilà café"},
		{"\"Å\u00a0b\"", "\"Å b\""},
		{"\xc3", "\xc3"},
	} {
		got := ParseQuery(tc.q, a, false)
		want := ParseQuery(tc.same, a, false)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("ParseQuery(%q) = %+v, want %+v (as %q)", tc.q, got, want, tc.same)
		}
	}
	if q := ParseQuery("Ångström", a, false); len(q.Should) != 1 {
		t.Errorf("Ångström split: %+v", q)
	}
}

// FuzzParseQuery: ParseQuery never panics, and every term it returns is
// non-empty.
func FuzzParseQuery(f *testing.F) {
	code, prose := text.MustNew(text.CodeOptions()), text.MustNew(text.ProseOptions())
	for _, s := range []string{`getUserName +token -legacy "call now" parse*`, "Ångström\f\u00a0x", "\"", "-", "+*"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, q string, conj bool) {
		for _, a := range []*text.Analyzer{code, prose} {
			pq := ParseQuery(q, a, conj)
			for _, ts := range [][]string{pq.Should, pq.Must, pq.MustNot, pq.Prefixes} {
				for _, term := range ts {
					if term == "" {
						t.Fatalf("empty term in %+v", pq)
					}
				}
			}
		}
	})
}

// TestParseText: plain text is matched as text. Quotes, leading signs and
// a trailing * are not operators: "mkdir -p" scores p, a quoted sentence
// is optional words (no phrase, no required term), and the terms are
// exactly the analyzer's tokens in order.
func TestParseText(t *testing.T) {
	a := text.MustNew(text.CodeOptions())
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"mkdir -p", []string{"mkdir", "p"}},
		{`"how do I read a file"`, []string{"how", "do", "i", "read", "a", "file"}},
		{"+token -1 parse*", []string{"token", "1", "parse"}},
		{"getUserName", []string{"getusername", "get", "user", "name"}},
		{`"`, nil},
	} {
		got := ParseText(tc.q, a, false)
		if len(got.Must)+len(got.MustNot)+len(got.Phrases)+len(got.Prefixes) != 0 || !slices.Equal(got.Should, tc.want) {
			t.Errorf("ParseText(%q) = %+v, want Should %q only", tc.q, got, tc.want)
		}
	}
	// Operators stay available: the same text in the operator syntax.
	op := Parse("mkdir -p", a, false, true)
	if !slices.Equal(op.MustNot, []string{"p"}) || !slices.Equal(op.Should, []string{"mkdir"}) {
		t.Errorf("Parse(operators) = %+v, want should mkdir, must-not p", op)
	}
	conj := ParseText("getUserName x", a, true)
	if !slices.Equal(conj.Must, []string{"getusername", "x"}) || !slices.Equal(conj.Should, []string{"get", "user", "name"}) {
		t.Errorf("ParseText conjunctive = %+v", conj)
	}
}

// FuzzParseText: ParseText never panics, returns only Should/Must terms,
// and its terms are exactly the analyzer's tokens of the text (the
// reference: a.Analyze), in order.
func FuzzParseText(f *testing.F) {
	code, prose := text.MustNew(text.CodeOptions()), text.MustNew(text.ProseOptions())
	for _, s := range []string{`getUserName +token -legacy "call now" parse*`, "mkdir -p", "\"", "-", "+*", "Ångström\f\u00a0x", `"unterminated`} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, q string, conj bool) {
		for _, a := range []*text.Analyzer{code, prose} {
			pq := ParseText(q, a, conj)
			if len(pq.MustNot)+len(pq.Phrases)+len(pq.Prefixes) != 0 {
				t.Fatalf("ParseText(%q) has operators: %+v", q, pq)
			}
			var want []string
			for _, tok := range a.Analyze(q) {
				want = append(want, tok.Term)
			}
			if got := len(pq.Should) + len(pq.Must); got != len(want) {
				t.Fatalf("ParseText(%q): %d terms, want %d (%q)", q, got, len(want), want)
			}
			for _, term := range append(append([]string(nil), pq.Should...), pq.Must...) {
				if term == "" || !slices.Contains(want, term) {
					t.Fatalf("ParseText(%q): term %q not among the analyzer's %q", q, term, want)
				}
			}
		}
	})
}

// TestQueryWeights: a weighted term contributes its factor times its
// unweighted BM25 score (reference: the same query without Weights, term
// by term), in every traversal algorithm; unusable factors count as 1.
func TestQueryWeights(t *testing.T) {
	a := text.MustNew(text.CodeOptions())
	b := NewBuilder(Options{})
	srcs := []string{"upper case letters upper", "lower case", "upper", "title case words here", "unrelated text"}
	for i, s := range srcs {
		b.Add(uint64(i), a.Analyze(s))
	}
	seg, _ := b.Segment()
	score := func(q Query, alg string) map[uint64]float64 {
		p := DefaultSearchParams()
		p.Algorithm = alg
		hits, err := Search([]View{{Seg: seg}}, q, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[uint64]float64{}
		for _, h := range hits {
			out[h.ExtID] = h.Score
		}
		return out
	}
	for _, alg := range []string{AlgBMM, AlgBMW} {
		cs, up := score(Query{Should: []string{"case"}}, alg), score(Query{Should: []string{"upper"}}, alg)
		got := score(Query{Should: []string{"case", "upper"}, Weights: map[string]float64{"upper": 0.25}}, alg)
		for d := range uint64(len(srcs)) {
			want := cs[d] + 0.25*up[d]
			if math.Abs(got[d]-want) > 1e-9 {
				t.Errorf("%s doc %d: score %v, want %v", alg, d, got[d], want)
			}
		}
		plain := score(Query{Should: []string{"case", "upper"}}, alg)
		for _, f := range []float64{0, -1, math.NaN(), math.Inf(1)} {
			bad := score(Query{Should: []string{"case", "upper"}, Weights: map[string]float64{"upper": f}}, alg)
			for d, s := range plain {
				if bad[d] != s {
					t.Errorf("%s factor %v doc %d: %v, want %v", alg, f, d, bad[d], s)
				}
			}
		}
	}
}
