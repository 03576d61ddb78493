package bm25

import (
	"fmt"
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
