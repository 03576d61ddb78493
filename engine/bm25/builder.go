package bm25

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/internal/base"
)

// Options are the build-time options of a segment.
type Options struct {
	// OmitPositions drops term positions: smaller segments, no phrase
	// queries. Default false (positions stored).
	OmitPositions bool
	// PartitionedEF writes every list's doc ids as partitioned Elias-Fano
	// (segment format 2, Ottaviano & Venturini, SIGIR 2014: 128-posting
	// partitions, each the smallest of an all-ones run, a bitmap or
	// Elias-Fano). Default false: format 3, which codes the lists of at
	// most BlockSize postings that way (without block metadata) and the
	// longer ones as one Elias-Fano sequence, about as small as format 2
	// and as fast as format 1 on OR queries (doc.go, "Postings"). Every
	// format is read; Merge writes format 2 only when every input is
	// format 2, else format 3.
	PartitionedEF bool
	// OmitExtIDs writes the segment file (WriteTo, AppendTo) without its
	// documents' external ids (8 bytes a document), for a caller that
	// can supply them when it opens the file (OpenOptions.ExtIDs), e.g.
	// from the document ids it stores anyway. Format 4 only: with
	// PartitionedEF (format 2) they are stored. Builder.Segment keeps
	// them.
	OmitExtIDs bool

	// formatVersion is the segment format WriteTo writes when not 0;
	// tests set it to produce a given format.
	formatVersion uint32
	// unpacked writes format 3 without flagPacked (u32 length and
	// dictionary offset arrays), as earlier builds did; tests only.
	unpacked bool
}

// Validate reports every problem in o (there are none possible today; it
// exists so callers can treat all packages alike).
func (o Options) Validate() error { return nil }

type memPosting struct {
	docs []uint32
	tfs  []uint32
	// pos holds the positions, or, once there are more than posPage of
	// them, the last, partial page of them after the full pages in
	// *pages: a long list is then never copied to grow (a MemTable term
	// seen at every few tokens would otherwise allocate about three times
	// its positions while a batch is added).
	pos   []uint32
	pages *[][]uint32
}

// posPage is the number of positions in each full page of a memPosting.
const posPage = 4096

func (p *memPosting) positions() int {
	n := len(p.pos)
	if p.pages != nil {
		n += len(*p.pages) * posPage
	}
	return n
}

// lastPos returns the last position; p must have one.
func (p *memPosting) lastPos() uint32 {
	if len(p.pos) > 0 {
		return p.pos[len(p.pos)-1]
	}
	pg := *p.pages
	return pg[len(pg)-1][posPage-1]
}

func (p *memPosting) appendPos(v uint32) {
	if len(p.pos) >= posPage {
		if p.pages == nil {
			p.pages = new([][]uint32)
		}
		*p.pages = append(*p.pages, p.pos[:posPage:posPage])
		p.pos = make([]uint32, 0, posPage)
	}
	p.pos = appendGrowing(p.pos, v)
}

// flatPos returns the positions as one slice: p's own when they fit one
// page, else appended to scratch[:0].
func (p *memPosting) flatPos(scratch []uint32) []uint32 {
	if p.pages == nil {
		return p.pos
	}
	out := slices.Grow(scratch[:0], p.positions())
	for _, pg := range *p.pages {
		out = append(out, pg...)
	}
	return append(out, p.pos...)
}

// Builder is the mutable in-memory index of a MemTable: documents are
// appended with Add and receive dense local ids 0, 1, ... It is not safe for
// concurrent use. WriteTo serialises it as an immutable segment; Segment
// returns an opened copy for querying.
type Builder struct {
	opts    Options
	terms   map[string]*memPosting
	docLens []uint32
	ext     []uint64
	sumDL   uint64
	cached  *Segment
	// sorted holds the terms in byte order as of the last WriteTo; added
	// the terms new since, merged into sorted by the next WriteTo (a
	// re-seal sorts only them).
	sorted, added []string
}

// NewBuilder returns an empty Builder.
func NewBuilder(o Options) *Builder {
	return &Builder{opts: o, terms: map[string]*memPosting{}}
}

// NumDocs returns the number of documents added.
func (b *Builder) NumDocs() int { return len(b.docLens) }

// Grow makes room for n more documents, and as many new terms, so that a
// batch of Adds does not grow the per-document lists and the term table
// step by step (each step's copy is garbage). Lists grow at least by
// doubling, as append does.
func (b *Builder) Grow(n int) {
	b.docLens = growBy(b.docLens, n)
	b.ext = growBy(b.ext, n)
	b.added = growBy(b.added, n)
	b.terms = base.GrowMap(b.terms, n)
}

// growBy returns s with room for n more elements: s itself when it has
// it, otherwise grown to at least twice its length.
func growBy[E any](s []E, n int) []E {
	if cap(s)-len(s) >= n {
		return s
	}
	return slices.Grow(s, max(n, len(s)))
}

// Add indexes one document given its analysed tokens (engine/text output:
// positions non-decreasing) and returns its local id. |D| is the number of
// distinct positions among toks, i.e. original tokens: identifier parts
// share their whole's position and do not lengthen the document. extID is
// the caller's id, used to break score ties (lower first); it should be
// unique across the segments searched together.
func (b *Builder) Add(extID uint64, toks []text.Token) (uint32, error) {
	if uint64(len(b.docLens)) >= math.MaxUint32-1 {
		return 0, fmt.Errorf("bm25: segment full")
	}
	doc := uint32(len(b.docLens))
	distinct := 0
	last := -1
	for _, t := range toks {
		if t.Pos < last || t.Pos < 0 || uint64(t.Pos) > math.MaxUint32-1 {
			return 0, fmt.Errorf("bm25: token %q: position %d after %d", t.Term, t.Pos, last)
		}
		if t.Pos != last {
			distinct++
			last = t.Pos
		}
	}
	for _, t := range toks {
		if t.Term == "" {
			continue
		}
		p := b.terms[t.Term]
		if p == nil {
			p = &memPosting{}
			b.terms[t.Term] = p
			b.added = append(b.added, t.Term)
		}
		n := len(p.docs)
		if n > 0 && p.docs[n-1] == doc {
			if !b.opts.OmitPositions && p.lastPos() == uint32(t.Pos) {
				continue // same term twice at one position (e.g. stemmed part == whole)
			}
			p.tfs[n-1]++
		} else {
			p.docs = appendGrowing(p.docs, doc)
			p.tfs = appendGrowing(p.tfs, 1)
		}
		if !b.opts.OmitPositions {
			p.appendPos(uint32(t.Pos))
		}
	}
	b.docLens = append(b.docLens, uint32(distinct))
	b.ext = append(b.ext, extID)
	b.sumDL += uint64(distinct)
	b.cached = nil
	return doc, nil
}

// appendGrowing is append of v to a posting list, which, once it holds
// 256 entries, grows by half rather than by append's 1.25× steps for
// long slices: a list of n entries is then allocated about 3.7n entries in
// all instead of about 5.5n, for at most a third of its capacity unused.
func appendGrowing(s []uint32, v uint32) []uint32 {
	if len(s) == cap(s) && len(s) >= 256 {
		s = slices.Grow(s, len(s)/2)
	}
	return append(s, v)
}

// mergeSorted merges two sorted lists with no common element into a new
// one.
func mergeSorted(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0] < b[0] {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}

// WriteTo writes the immutable segment form of everything added so far.
func (b *Builder) WriteTo(w io.Writer) (int64, error) {
	sw, err := b.seal(b.opts.OmitExtIDs)
	if err != nil {
		return 0, err
	}
	return sw.writeTo(w)
}

// AppendTo appends the segment form WriteTo writes to dst, growing dst
// once to the exact size.
func (b *Builder) AppendTo(dst []byte) ([]byte, error) {
	return b.appendTo(dst, b.opts.OmitExtIDs)
}

func (b *Builder) appendTo(dst []byte, omitExt bool) ([]byte, error) {
	sw, err := b.seal(omitExt)
	if err != nil {
		return dst, err
	}
	return sw.appendTo(dst), nil
}

// seal encodes everything added so far, without external ids if omitExt.
func (b *Builder) seal(omitExt bool) (*segWriter, error) {
	sw := newSegWriter(!b.opts.OmitPositions)
	sw.noExt = omitExt
	if b.opts.PartitionedEF {
		sw.version = 2
	}
	if b.opts.formatVersion != 0 {
		sw.version = b.opts.formatVersion
	}
	sw.unpacked = b.opts.unpacked
	for i, l := range b.docLens {
		sw.addDoc(b.ext[i], l)
	}
	if len(b.added) > 0 {
		sort.Strings(b.added)
		b.sorted = mergeSorted(b.sorted, b.added)
		b.added = nil
	}
	sw.reserve(b.sorted, b.terms)
	var scratch []uint32 // for the terms whose positions span pages
	for _, k := range b.sorted {
		p := b.terms[k]
		pos := p.flatPos(scratch)
		if p.pages != nil {
			scratch = pos
		}
		if err := sw.addTerm([]byte(k), p.docs, p.tfs, pos); err != nil {
			return nil, err
		}
	}
	return sw, nil
}

// Segment returns the builder's current contents as an opened immutable
// Segment, cached until the next Add. Cost: one full serialisation
// (O(postings)) after each change.
func (b *Builder) Segment() (*Segment, error) {
	if b.cached != nil {
		return b.cached, nil
	}
	data, err := b.appendTo(nil, false)
	if err != nil {
		return nil, err
	}
	s, err := Open(data, "memtable")
	if err != nil {
		return nil, err
	}
	s.noImpacts = true
	b.cached = s
	return s, nil
}

// Merge writes one segment holding the live documents of segs, in order:
// segment 0's live docs first (keeping their relative order), then segment
// 1's, and so on. deleted[i] (local doc ids of segs[i]; nil or shorter
// slice = none) lists the documents to drop. Positions are kept only if
// every input has them. Cost O(total postings + total terms · log S).
// The output stores the documents' external ids (MergeWith: unless
// OmitExtIDs), so every input must have them (stored, or given to
// OpenWith).
func Merge(w io.Writer, segs []*Segment, deleted []*roaring.Bitmap) (int64, error) {
	return MergeWith(w, segs, deleted, MergeOptions{})
}

// MergeOptions are the options of MergeWith.
type MergeOptions struct {
	// OmitExtIDs writes the output without external ids, as
	// Options.OmitExtIDs does (format 4 only; a format 2 output, from
	// format 2 inputs, stores them). The inputs then need none.
	OmitExtIDs bool
}

// MergeWith is Merge with options o.
func MergeWith(w io.Writer, segs []*Segment, deleted []*roaring.Bitmap, o MergeOptions) (int64, error) {
	for i, s := range segs {
		if s == nil {
			return 0, fmt.Errorf("%w: segs[%d] is nil", ErrInvalidOptions, i)
		}
	}
	positions := true
	for _, s := range segs {
		positions = positions && s.positions
	}
	sw := newSegWriter(positions)
	if len(segs) > 0 {
		sw.version = 2 // kept only when every input is version 2 (Options.PartitionedEF)
		for _, s := range segs {
			if s.version != 2 {
				sw.version = segVersion
			}
		}
	}
	sw.noExt = o.OmitExtIDs
	if !sw.omitsExt() {
		for i, s := range segs {
			if s.missingExt() {
				return 0, fmt.Errorf("%w: segs[%d] (%s) has no external ids (OpenOptions.ExtIDs) and the output stores them", ErrInvalidOptions, i, s.path)
			}
		}
	}
	remap := make([][]int64, len(segs)) // old local id -> new id, -1 deleted
	next := int64(0)
	for si, s := range segs {
		var del *roaring.Bitmap
		if si < len(deleted) {
			del = deleted[si]
		}
		remap[si] = make([]int64, s.numDocs)
		for d := 0; d < s.numDocs; d++ {
			if del != nil && del.Contains(uint32(d)) {
				remap[si][d] = -1
				continue
			}
			remap[si][d] = next
			next++
			sw.addDoc(s.ExtID(uint32(d)), s.DocLen(uint32(d)))
		}
	}
	if next > math.MaxUint32-1 {
		return 0, fmt.Errorf("bm25: merged segment would hold %d docs", next)
	}
	// k-way merge of the sorted dictionaries.
	idx := make([]int, len(segs))
	var docs, tfs, pos []uint32
	for {
		var min []byte
		for si, s := range segs {
			if idx[si] < s.numTerms {
				t := s.termBytes(idx[si])
				if min == nil || bytes.Compare(t, min) < 0 {
					min = t
				}
			}
		}
		if min == nil {
			break
		}
		term := append([]byte(nil), min...)
		docs, tfs, pos = docs[:0], tfs[:0], pos[:0]
		for si, s := range segs {
			if idx[si] >= s.numTerms || !bytes.Equal(s.termBytes(idx[si]), term) {
				continue
			}
			d, f, p, err := s.postingsAt(idx[si])
			if err != nil {
				return 0, err
			}
			idx[si]++
			k := 0
			for j, od := range d {
				nd := remap[si][od]
				if nd >= 0 {
					docs = append(docs, uint32(nd))
					tfs = append(tfs, f[j])
					if positions {
						pos = append(pos, p[k:k+int(f[j])]...)
					}
				}
				if s.positions {
					k += int(f[j])
				}
			}
		}
		if len(docs) == 0 {
			continue // every posting deleted: the term disappears
		}
		if err := sw.addTerm(term, docs, tfs, pos); err != nil {
			return 0, err
		}
	}
	return sw.writeTo(w)
}
