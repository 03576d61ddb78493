package bm25

import (
	"errors"
	"fmt"
	"math"

	"github.com/RoaringBitmap/roaring/v2"
)

// FieldSpec names one field of multi-field documents and its boost.
type FieldSpec struct {
	// Name is for errors and explanations only.
	Name string
	// Boost multiplies the field's BM25 score; finite, >= 0.
	Boost float64
}

// FieldsView is one set of documents indexed as one segment per field:
// Segs[f] holds field f (same order as the FieldSpec slice). Every field
// segment must hold the same documents in the same order (add every
// document to every field's Builder, with no tokens if the field is empty),
// so local doc ids and external ids agree across fields. Allow is as in
// View.
type FieldsView struct {
	Segs  []*Segment
	Allow *roaring.Bitmap
}

// ErrFieldsMismatch reports field segments that do not hold the same
// documents.
var ErrFieldsMismatch = errors.New("bm25: field segments disagree")

// SearchFields ranks multi-field documents (e.g. code: symbol, doc, body,
// path) by a per-field BM25 sum:
//
//	score(D) = Σ_f Boost_f · Σ_{t ∈ q[f]} qtf · IDF_f(t) · tf_f·(k1+1) / (tf_f + k1·(1 − b + b·|D_f|/avgdl_f))
//
// Each field keeps its own statistics (N, df_f, avgdl_f: st[f], nil =
// collected from the views), so a field's scores are exactly what Search
// would give over that field alone, scaled by its boost. This is the
// linear per-field combination, not Robertson, Zaragoza & Taylor's BM25F
// ("Simple BM25 extension to multiple weighted fields", CIKM 2004), which
// merges field frequencies before saturation: the sum keeps an exact
// per-field upper bound for each (field, term) list, so Block-Max MaxScore
// prunes it exactly, and a strong boost on a short field (symbol) makes a
// definition outrank its call sites.
//
// q[f] is the query analysed with field f's analyzer. Only Should,
// MustNot and Prefixes are supported here (a document is excluded if any
// field holds one of its field's MustNot terms); Must and Phrases return
// ErrInvalidOptions — run them with Search on one field. Ties: score
// descending, then external id ascending. Hit.View indexes views.
func SearchFields(views []FieldsView, fields []FieldSpec, q []Query, p SearchParams, st []*Stats) ([]Hit, error) {
	if len(q) != len(fields) || (st != nil && len(st) != len(fields)) {
		return nil, fmt.Errorf("%w: %d fields, %d queries, %d stats", ErrInvalidOptions, len(fields), len(q), len(st))
	}
	for f, fs := range fields {
		if !(fs.Boost >= 0) || math.IsInf(fs.Boost, 0) {
			return nil, fmt.Errorf("%w: field %q boost %v: want finite >= 0", ErrInvalidOptions, fs.Name, fs.Boost)
		}
		if len(q[f].Must) > 0 || len(q[f].Phrases) > 0 {
			return nil, fmt.Errorf("%w: field %q: required terms and phrases are single-field only", ErrInvalidOptions, fs.Name)
		}
	}
	for vi, v := range views {
		if len(v.Segs) != len(fields) {
			return nil, fmt.Errorf("%w: view %d has %d field segments, want %d", ErrFieldsMismatch, vi, len(v.Segs), len(fields))
		}
		for _, s := range v.Segs {
			if s != nil && s.missingExt() {
				return nil, errNoExtIDs(vi, s)
			}
		}
		for f, s := range v.Segs[1:] {
			if s.NumDocs() != v.Segs[0].NumDocs() {
				return nil, fmt.Errorf("%w: view %d field %q has %d docs, field %q %d", ErrFieldsMismatch, vi, fields[f+1].Name, s.NumDocs(), fields[0].Name, v.Segs[0].NumDocs())
			}
		}
	}
	// Plan each field on its own (its own statistics), then concatenate
	// the scored terms field-major: that is the canonical summation order.
	type unit struct {
		field int
		term  string
		w     float64
		avgdl float64
	}
	var units []unit
	excl := make([][]string, len(fields))
	var k1, b float64
	k := 0
	alg := AlgDefault
	for f := range fields {
		fv := make([]View, len(views))
		for vi, v := range views {
			fv[vi] = View{Seg: v.Segs[f]}
		}
		var sf *Stats
		if st != nil {
			sf = st[f]
		}
		pl, err := planQuery(fv, q[f], p, sf)
		if err != nil {
			return nil, err
		}
		k1, b, k, alg = pl.k1, pl.b, pl.k, pl.alg
		excl[f] = pl.exclude
		if pl.empty {
			continue
		}
		for _, t := range pl.terms {
			w := 0.0 // a zero boost silences the field, even a term whose weight overflowed to +Inf
			if fields[f].Boost != 0 {
				w = fields[f].Boost * t.w
			}
			units = append(units, unit{field: f, term: t.term, w: w, avgdl: pl.avgdl})
		}
	}
	if len(units) == 0 {
		return nil, nil
	}
	top := &topK{k: k}
	pl := &plan{k1: k1, b: b, k: k, alg: alg, seed: math.Inf(-1)}
	cn := &canceller{} // never cancelled
	for vi, v := range views {
		ss := &segSearch{cn: cn, vi: vi, v: View{Seg: v.Segs[0], Allow: v.Allow}, pl: pl, top: top,
			curs: make([]*tcur, len(units)), contrib: make([]float64, len(units))}
		for ui, u := range units {
			s := v.Segs[u.field]
			i, ok := s.lookup(u.term)
			if !ok {
				continue
			}
			c, err := s.openCursor(i)
			if err != nil {
				return nil, err
			}
			r := s.rec(i)
			ub := termScore(u.w, r.maxTF, bm25Norm(r.minDL, k1, b, u.avgdl), k1)
			ss.curs[ui] = &tcur{cursor: c, rec: r, qi: ui, w: u.w, ub: ub, avgdl: u.avgdl}
		}
		attachNorms(ss.curs, k1, b)
		for f, terms := range excl {
			for _, t := range terms {
				if i, ok := v.Segs[f].lookup(t); ok {
					c, err := v.Segs[f].openCursor(i)
					if err != nil {
						return nil, err
					}
					ss.excl = append(ss.excl, c)
				}
			}
		}
		if p.Exhaustive {
			ss.exhaustiveUnits()
		} else {
			ss.disjunctive()
		}
		if err := ss.err(); err != nil {
			return nil, err
		}
	}
	return top.sorted(), nil
}

// exhaustiveUnits is the reference scorer for SearchFields: walk every
// cursor to the end, accumulate each document's contributions, offer all.
func (ss *segSearch) exhaustiveUnits() {
	pl := ss.pl
	scores := map[uint32][]float64{}
	for ui, c := range ss.curs {
		if c == nil {
			continue
		}
		for d := c.doc(); d != efEnd; d = c.doc() {
			if scores[d] == nil {
				scores[d] = make([]float64, len(ss.curs))
			}
			scores[d][ui] = TermScore(c.w, c.tf(), c.seg.DocLen(d), pl.k1, pl.b, c.avgdl)
			c.next()
		}
	}
	excluded := map[uint32]bool{}
	for _, c := range ss.excl {
		it, err := c.seg.openCursor(c.term)
		if err != nil {
			c.err = err
			continue
		}
		for ; it.doc() != efEnd; it.next() {
			excluded[it.doc()] = true
		}
		if it.err != nil && c.err == nil {
			c.err = it.err
		}
	}
	for d, parts := range scores {
		if !ss.allowed(d) || excluded[d] {
			continue
		}
		s := 0.0
		for _, x := range parts {
			s += x
		}
		ss.top.offer(Hit{ExtID: ss.v.Seg.ExtID(d), Score: s, View: ss.vi, Doc: d})
	}
}
