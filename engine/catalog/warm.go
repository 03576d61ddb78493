package catalog

import (
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/contract"
	"strconv"
	"strings"
	"sync"

	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/engine/tier"
)

// Warm is the engine's view of one set of warm segments (a Snapshot's):
// their BM25 segments (opened over the mapped sections) and the per-row
// infos, concatenated in segment order. Row r of segment i has key
// Bases[i] + r (a query gives MemTable version v key len(Rows) + v). A
// catalog is only used by a query whose Snapshot holds exactly its
// segments, so the mapped bytes stay valid while it is read. Read-only
// once returned.
type Warm struct {
	key  string
	ids  []uint64 // the segments' ids, in order
	Segs []*bm25.Segment
	// Terms is the term dictionary shared by Segs (bm25.TermTable): a
	// query's statistics over Segs plus the MemTable's segments cost one
	// lookup per cached term, not one per term and segment.
	Terms  *bm25.TermTable
	Bases  []uint32 // len(Segs)+1: Bases[len] = len(Rows)
	Rows   []Row
	ByDoc  map[*tier.Document]uint32
	Fields *PartFields // over the keys
	// Access[i] is segment i's access index in its own rows, or nil when
	// its rows have too many access classes (NewAccessIndex).
	Access []*AccessIndex
}

// WarmCache keeps the catalogs of the most recent warm segment sets of one
// collection, and the per-segment parts they are assembled from: a
// segment's BM25 segment, decoded rows and field index are built once and
// shared by every set that holds the segment, so a flush or a compaction
// costs the next query the new segment's rows only. Safe for concurrent
// use.
type WarmCache struct {
	an     *text.Analyzer
	fields map[string]FieldType

	mu    sync.Mutex
	cats  []*Warm // most recent last
	parts map[uint64]*warmPart
}

// warmPart is one warm segment's share of a catalog, in the segment's own
// row numbers.
type warmPart struct {
	seg    *bm25.Segment
	access *AccessIndex
	rows   []Row
	fields *FieldIndex
	first  *tier.Document // the segment's row 0 (identity check), nil when empty
}

// NewWarmCache returns an empty cache for a collection with analyzer an
// and indexed fields.
func NewWarmCache(an *text.Analyzer, fields map[string]FieldType) *WarmCache {
	return &WarmCache{an: an, fields: fields}
}

const warmCacheSize = 4

func segSetKey(ws []tier.WarmSegment) string {
	var sb strings.Builder
	for _, w := range ws {
		sb.WriteString(strconv.FormatUint(w.ID, 10))
		sb.WriteByte(',')
	}
	return sb.String()
}

// Get returns the catalog of sn's warm segments, building it on first
// use from the segments' parts: BM25 sections are opened in place
// (bm25.Open over the mapping); a segment written without one gets its
// BM25 segment rebuilt in memory from its documents. Metadata is decoded
// once per row of a segment, when the first set holding it is asked for;
// assembling a set from parts already built copies its rows, fills ByDoc
// and merges the parts' field indexes.
func (wcache *WarmCache) Get(sn *tier.Snapshot) (*Warm, error) { return wcache.get(sn.WarmSegments()) }

// Has reports whether the catalog of sn's warm segments is built (Get
// would return it without building anything).
func (wcache *WarmCache) Has(sn *tier.Snapshot) bool {
	key := segSetKey(sn.WarmSegments())
	wcache.mu.Lock()
	defer wcache.mu.Unlock()
	for _, wc := range wcache.cats {
		if wc.key == key {
			return true
		}
	}
	return false
}

func (wcache *WarmCache) get(ws []tier.WarmSegment) (*Warm, error) {
	key := segSetKey(ws)
	wcache.mu.Lock()
	defer wcache.mu.Unlock()
	for i, wc := range wcache.cats {
		if wc.key == key {
			if i != len(wcache.cats)-1 {
				wcache.cats = append(append(wcache.cats[:i:i], wcache.cats[i+1:]...), wc)
			}
			return wc, nil
		}
	}
	if wcache.parts == nil {
		wcache.parts = map[uint64]*warmPart{}
	}
	parts := make([]*warmPart, len(ws))
	nrows := 0
	for i, w := range ws {
		p := wcache.parts[w.ID]
		if p == nil || !p.matches(w) {
			var err error
			if p, err = wcache.buildPart(w); err != nil {
				return nil, err
			}
			wcache.parts[w.ID] = p
		}
		parts[i] = p
		nrows += len(p.rows)
	}
	wc := &Warm{key: key, Rows: make([]Row, 0, nrows), ByDoc: make(map[*tier.Document]uint32, nrows),
		Fields: &PartFields{}}
	for i, p := range parts {
		wc.ids = append(wc.ids, ws[i].ID)
		base := uint32(len(wc.Rows))
		wc.Segs = append(wc.Segs, p.seg)
		wc.Bases = append(wc.Bases, base)
		wc.Rows = append(wc.Rows, p.rows...)
		for r := range p.rows {
			wc.ByDoc[p.rows[r].Doc] = base + uint32(r)
		}
		wc.Fields.parts = append(wc.Fields.parts, p.fields)
		wc.Access = append(wc.Access, p.access)
	}
	wc.Bases = append(wc.Bases, uint32(len(wc.Rows)))
	wc.Fields.bases = wc.Bases
	wc.Terms = bm25.NewTermTable(wc.Segs)
	wcache.cats = append(wcache.cats, wc)
	if len(wcache.cats) > warmCacheSize {
		wcache.cats = wcache.cats[len(wcache.cats)-warmCacheSize:]
	}
	// Keep the parts of the cached sets only.
	keep := map[uint64]bool{}
	for _, c := range wcache.cats {
		for _, id := range c.ids {
			keep[id] = true
		}
	}
	for id := range wcache.parts {
		if !keep[id] {
			delete(wcache.parts, id)
		}
	}
	return wc, nil
}

// PartFields is a catalog's field index: one FieldIndex per segment, in
// the segment's row numbers, whose rows are catalog keys from its base
// on. A set assembled from cached parts then shares their indexes
// instead of merging them (a code collection's symbol and path fields
// have a value for nearly every row).
type PartFields struct {
	parts []*FieldIndex
	bases []uint32 // len(parts)+1
}

// Compile is FieldIndex.Compile over the catalog's keys: each segment's
// index compiles f over its own rows (so not complements within the
// segment), shifted to its base; n must be the catalog's row count.
func (pf *PartFields) Compile(f *contract.Filter, n uint32) (*roaring.Bitmap, bool) {
	acc := roaring.New()
	for i, fi := range pf.parts {
		lo, hi := pf.bases[i], pf.bases[i+1]
		if hi > n {
			hi = n
		}
		if lo >= hi {
			continue
		}
		b, ok := fi.Compile(f, hi-lo)
		if !ok {
			return nil, false
		}
		if lo > 0 {
			b = roaring.AddOffset(b, lo)
		}
		acc.Or(b)
	}
	return acc, true
}

// matches reports whether p was built from w's rows (the same segment id
// names one file for a store's lifetime; the row check guards a reopen).
func (p *warmPart) matches(w tier.WarmSegment) bool {
	if len(p.rows) != len(w.Docs) {
		return false
	}
	return len(w.Docs) == 0 || p.first == w.Docs[0]
}

// buildPart opens w's BM25 section in place (or builds one in memory from
// its documents when it has none), decodes its rows' metadata and indexes
// their access classes.
func (wcache *WarmCache) buildPart(w tier.WarmSegment) (*warmPart, error) {
	data, off := w.Lexical, w.LexicalOffset
	if data == nil {
		b, err := Segments{wcache.an}.BuildLexical(w.Docs)
		if err != nil {
			return nil, err
		}
		data, off = b, 0
	}
	oo := bm25.OpenOptions{ExtIDs: ExtIDs(w.Docs)}
	if w.Lexical != nil && w.LexicalFetch != nil {
		oo.Fetch = w.LexicalFetch
	}
	seg, err := bm25.OpenWith(data, w.Path, oo)
	if err != nil {
		return nil, fmt.Errorf("engine: segment %s: BM25 section at byte offset %d: %w", w.Path, off, err)
	}
	if seg.NumDocs() != len(w.Docs) {
		return nil, fmt.Errorf("%w: engine: segment %s: BM25 section at byte offset %d has %d docs, segment %d rows",
			tier.ErrCorrupt, w.Path, off, seg.NumDocs(), len(w.Docs))
	}
	p := &warmPart{seg: seg, rows: make([]Row, len(w.Docs)), fields: NewFieldIndex(wcache.fields), access: NewAccessIndex(w.Docs)}
	if len(w.Docs) > 0 {
		p.first = w.Docs[0]
	}
	for r, d := range w.Docs {
		meta, err := DecodeMeta(d.Metadata)
		if err != nil {
			return nil, fmt.Errorf("engine: segment %s row %d (id %q): %w", w.Path, r, d.ID, err)
		}
		p.rows[r] = Row{Doc: d, Meta: meta}
		p.fields.Add(uint32(r), meta)
	}
	return p, nil
}
