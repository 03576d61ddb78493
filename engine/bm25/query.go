package bm25

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stratasearch/strata/engine/text"
)

// PhraseTerm is one slot of a phrase: Term must occur at the phrase's start
// position + Offset.
type PhraseTerm struct {
	Term   string
	Offset int
}

// Query is an analysed query. Terms are index terms (already lower-cased /
// stemmed by the field's analyzer). A term listed c times counts c times in
// the score (query term frequency).
type Query struct {
	// Should terms are optional: a document must match at least one
	// scored clause; each matching term adds its BM25 weight.
	Should []string
	// Must terms are required and scored.
	Must []string
	// MustNot terms exclude every document containing them; not scored.
	MustNot []string
	// Phrases are required: the slots must occur at consecutive (offset)
	// positions. Each slot term is scored like a Must term (the phrase
	// weight is the sum of its terms' weights, as Xapian's OP_PHRASE does).
	Phrases [][]PhraseTerm
	// Prefixes are expanded to the (at most SearchParams.MaxExpansions,
	// first in byte order) dictionary terms starting with them; each
	// expansion is an optional term with its own IDF.
	Prefixes []string
	// Weights scales terms: a term listed here has its weight qtf·idf
	// multiplied by the factor (down-weighted query expansions). Terms
	// not listed, and factors that are not finite and > 0, keep factor 1.
	Weights map[string]float64
}

// Terms returns every scored term of q in first-appearance order (Should,
// Must, phrase slots; prefixes not expanded), without duplicates.
func (q *Query) Terms() []string {
	seen := map[string]bool{}
	var out []string
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, t := range q.Should {
		add(t)
	}
	for _, t := range q.Must {
		add(t)
	}
	for _, p := range q.Phrases {
		for _, s := range p {
			add(s.Term)
		}
	}
	return out
}

// ParseText reads q as plain text: every token a analyses is an optional
// (Should) term, or with conjunctive true a required (Must) term for whole
// tokens (identifier parts stay optional). Quotes, leading + and -, and a
// trailing * are ordinary characters, which the analyzer drops: "mkdir -p"
// scores "mkdir" and "p", and a quoted sentence matches its words. The
// result has no phrases, exclusions or prefixes.
func ParseText(q string, a *text.Analyzer, conjunctive bool) Query {
	var out Query
	for _, t := range a.Analyze(q) {
		if conjunctive && !t.Part {
			out.Must = append(out.Must, t.Term)
		} else {
			out.Should = append(out.Should, t.Term)
		}
	}
	return out
}

// Parse reads q with ParseQuery when operators is true, else with
// ParseText.
func Parse(q string, a *text.Analyzer, conjunctive, operators bool) Query {
	if operators {
		return ParseQuery(q, a, conjunctive)
	}
	return ParseText(q, a, conjunctive)
}

// ParseQuery parses the operator syntax: whitespace-separated words;
// "quoted phrases"; +word (required); -word (excluded); word* (prefix, on
// the lower-cased word, not stemmed). A plain word becomes Should terms; with
// conjunctive true, Must terms (identifier parts stay optional). For a
// +/-/phrase word, the whole tokens are required/excluded and identifier
// parts are optional. a analyses every word.
func ParseQuery(q string, a *text.Analyzer, conjunctive bool) Query {
	var out Query
	i := 0
	for i < len(q) {
		c := q[i]
		// Words are separated by Unicode spaces, decoded as runes: a byte
		// test would split a multi-byte rune ending in 0x85 or 0xA0 (Å,
		// à) and miss \f, \v, NBSP.
		if r, size := utf8.DecodeRuneInString(q[i:]); unicode.IsSpace(r) {
			i += size
			continue
		}
		if c == '"' {
			j := strings.IndexByte(q[i+1:], '"')
			var body string
			if j < 0 {
				body, i = q[i+1:], len(q)
			} else {
				body, i = q[i+1:i+1+j], i+2+j
			}
			toks := a.Analyze(body)
			var ph []PhraseTerm
			first := -1
			for k, t := range toks {
				if k > 0 && toks[k-1].Pos == t.Pos {
					continue // parts and duplicates: the first token per position stands for it
				}
				if first < 0 {
					first = t.Pos
				}
				ph = append(ph, PhraseTerm{Term: t.Term, Offset: t.Pos - first})
			}
			switch len(ph) {
			case 0:
			case 1:
				out.Must = append(out.Must, ph[0].Term)
			default:
				out.Phrases = append(out.Phrases, ph)
			}
			continue
		}
		j := i
		for j < len(q) {
			r, size := utf8.DecodeRuneInString(q[j:])
			if unicode.IsSpace(r) || r == '"' {
				break
			}
			j += size
		}
		word := q[i:j]
		i = j
		mod := byte(0)
		if word[0] == '+' || word[0] == '-' {
			mod, word = word[0], word[1:]
		}
		if strings.HasSuffix(word, "*") && mod != '-' {
			p := strings.ToLower(strings.TrimRight(word, "*"))
			if p != "" {
				out.Prefixes = append(out.Prefixes, p)
			}
			continue
		}
		for _, t := range a.Analyze(word) {
			switch {
			case mod == '-':
				if !t.Part {
					out.MustNot = append(out.MustNot, t.Term)
				}
			case t.Part:
				out.Should = append(out.Should, t.Term)
			case mod == '+' || conjunctive:
				out.Must = append(out.Must, t.Term)
			default:
				out.Should = append(out.Should, t.Term)
			}
		}
	}
	return out
}
