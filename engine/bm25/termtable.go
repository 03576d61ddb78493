package bm25

import "sync"

// TermTable is a term dictionary shared by a fixed list of segments (a
// warm segment set, immutable between flushes and merges). For each term
// it has been asked about it keeps the term's dictionary index in every
// segment and its document frequency summed over them, so a search over
// S segments that CollectStats through the table pays one hash lookup per
// cached query term instead of S dictionary lookups and S term-record
// reads.
//
// The table fills on demand (a term not yet cached is looked up in every
// segment once, then kept) and holds at most maxTermTableEntries (term,
// segment) entries of 40 bytes, 5 MiB: when full it is emptied and fills
// again. Safe for concurrent use.
type TermTable struct {
	segs  []*Segment
	n     int64 // Σ NumDocs
	sumDL int64 // Σ SumDocLen

	// maxEntries is maxTermTableEntries (tests lower it to force the
	// emptying of a full table).
	maxEntries int

	mu      sync.RWMutex
	rows    map[string]*termRow
	entries int // Σ len(row.refs) over rows
}

// termRow is one term across a TermTable's segments: refs[si] is its
// place in segs[si], df its document frequency summed over them.
// Immutable once in the table.
type termRow struct {
	refs []termRef
	df   int64
}

// termRef is a term's place in one segment: its dictionary index (-1:
// absent) and, when present, its term record.
type termRef struct {
	rec termRec
	idx int32
}

// ref returns term's place in s.
func (s *Segment) ref(term string) termRef {
	if i, ok := s.lookup(term); ok {
		return termRef{rec: s.rec(i), idx: int32(i)}
	}
	return termRef{idx: -1}
}

// maxTermTableEntries bounds a TermTable's (term, segment) entries, 40
// bytes each: 5 MiB.
const maxTermTableEntries = 1 << 17

// NewTermTable returns an empty table over segs (copied; the segments must
// stay open while the table is used).
func NewTermTable(segs []*Segment) *TermTable {
	tt := &TermTable{segs: append([]*Segment(nil), segs...), rows: map[string]*termRow{}, maxEntries: maxTermTableEntries}
	for _, s := range segs {
		tt.n += int64(s.numDocs)
		tt.sumDL += int64(s.sumDL)
	}
	return tt
}

// Segments returns the number of segments the table covers.
func (tt *TermTable) Segments() int { return len(tt.segs) }

// row returns term's row, looking it up in every segment and caching it
// when the table does not hold it yet.
func (tt *TermTable) row(term string) *termRow {
	tt.mu.RLock()
	r := tt.rows[term]
	tt.mu.RUnlock()
	if r != nil {
		return r
	}
	r = &termRow{refs: make([]termRef, len(tt.segs))}
	for si, s := range tt.segs {
		r.refs[si] = s.ref(term)
		r.df += int64(r.refs[si].rec.df)
	}
	tt.mu.Lock()
	if old := tt.rows[term]; old != nil {
		r = old // a concurrent search cached it first
	} else {
		if tt.entries+len(r.refs) > tt.maxEntries {
			clear(tt.rows)
			tt.entries = 0
		}
		tt.rows[term] = r
		tt.entries += len(r.refs)
	}
	tt.mu.Unlock()
	return r
}

// CollectStats is the package's CollectStats(segs, terms) answered
// through the table: segs must start with the table's segments, in the
// same order (the segments after them, e.g. a MemTable's, are looked up
// directly); otherwise, or for a nil table, it falls back to
// CollectStats. The Stats it returns are identical to CollectStats's, and
// a Search with them over the same segments looks no term up again.
func (tt *TermTable) CollectStats(segs []*Segment, terms []string) *Stats {
	if tt == nil || len(segs) < len(tt.segs) {
		return CollectStats(segs, terms)
	}
	for i, s := range tt.segs {
		if segs[i] != s {
			return CollectStats(segs, terms)
		}
	}
	return collectStats(segs, terms, tt)
}
