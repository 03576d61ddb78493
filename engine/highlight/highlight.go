// Package highlight marks a query's terms in hit contents: the byte spans
// of the tokens whose analysed term is one the lexical search scores
// (contract.Envelope.Highlights, set when contract.Query.Highlight is on).
package highlight

import (
	"slices"
	"strings"

	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/text"
)

// Highlighter marks one query's terms in contents.
type Highlighter struct {
	an       *text.Analyzer
	terms    map[string]bool
	prefixes []string
}

// New collects the scored terms of query as a lexical search parses it
// in the operator syntax (bm25.ParseQuery with analyzer an, the
// collection's: should and must terms, identifier parts, phrase slots,
// prefix* patterns; not -excluded terms).
func New(an *text.Analyzer, query string) *Highlighter {
	return NewSyntax(an, query, true)
}

// NewSyntax is New for a query read as plain text (operators false,
// bm25.ParseText: every analysed token) or in the operator syntax.
func NewSyntax(an *text.Analyzer, query string, operators bool) *Highlighter {
	bq := bm25.Parse(query, an, false, operators)
	h := &Highlighter{an: an, terms: map[string]bool{}, prefixes: bq.Prefixes}
	for _, t := range bq.Terms() {
		h.terms[t] = true
	}
	// Identifier parts are scored as should terms by ParseQuery too; a
	// phrase keeps only its first token per position, so add the parts of
	// quoted words as well.
	for _, t := range an.Analyze(query) {
		if !slices.Contains(bq.MustNot, t.Term) {
			h.terms[t.Term] = true
		}
	}
	return h
}

// Spans returns the byte spans [Start, End) of content's tokens whose
// analysed term is a query term (or starts with a query prefix), sorted,
// with overlapping and touching spans merged. Token boundaries are rune
// boundaries, so no span starts or ends inside a UTF-8 sequence.
func (h *Highlighter) Spans(content string) []contract.Span {
	if len(h.terms) == 0 && len(h.prefixes) == 0 {
		return nil
	}
	var out []contract.Span
	for _, t := range h.an.Analyze(content) {
		ok := h.terms[t.Term]
		for _, p := range h.prefixes {
			if !ok && strings.HasPrefix(t.Term, p) {
				ok = true
			}
		}
		if ok && t.Start < t.End && t.End <= len(content) {
			out = append(out, contract.Span{Start: t.Start, End: t.End})
		}
	}
	if len(out) == 0 {
		return nil
	}
	slices.SortFunc(out, func(a, b contract.Span) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return a.End - b.End
	})
	merged := out[:1]
	for _, s := range out[1:] {
		last := &merged[len(merged)-1]
		if s.Start <= last.End {
			last.End = max(last.End, s.End)
			continue
		}
		merged = append(merged, s)
	}
	return merged
}
