package catalog

import (
	"fmt"
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
	Segs []*bm25.Segment
	// Terms is the term dictionary shared by Segs (bm25.TermTable): a
	// query's statistics over Segs plus the MemTable's segments cost one
	// lookup per cached term, not one per term and segment.
	Terms  *bm25.TermTable
	Bases  []uint32 // len(Segs)+1: Bases[len] = len(Rows)
	Rows   []Row
	ByDoc  map[*tier.Document]uint32
	Fields *FieldIndex // over the keys
}

// WarmCache keeps the catalogs of the most recent warm segment sets of one
// collection. Safe for concurrent use.
type WarmCache struct {
	an     *text.Analyzer
	fields map[string]FieldType

	mu   sync.Mutex
	cats []*Warm // most recent last
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
// use: BM25 sections are opened in place (bm25.Open over the mapping); a
// segment written without one gets its BM25 segment rebuilt in memory
// from its documents. Metadata is decoded once per row.
func (wcache *WarmCache) Get(sn *tier.Snapshot) (*Warm, error) {
	ws := sn.WarmSegments()
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
	wc := &Warm{key: key, ByDoc: map[*tier.Document]uint32{}, Fields: NewFieldIndex(wcache.fields)}
	for _, w := range ws {
		data, off := w.Lexical, w.LexicalOffset
		if data == nil {
			b, err := Segments{wcache.an}.BuildLexical(w.Docs)
			if err != nil {
				return nil, err
			}
			data, off = b, 0
		}
		var seg *bm25.Segment
		var err error
		if w.Lexical != nil && w.LexicalFetch != nil {
			seg, err = bm25.OpenFetch(data, w.Path, w.LexicalFetch)
		} else {
			seg, err = bm25.Open(data, w.Path)
		}
		if err != nil {
			return nil, fmt.Errorf("engine: segment %s: BM25 section at byte offset %d: %w", w.Path, off, err)
		}
		if seg.NumDocs() != len(w.Docs) {
			return nil, fmt.Errorf("%w: engine: segment %s: BM25 section at byte offset %d has %d docs, segment %d rows",
				tier.ErrCorrupt, w.Path, off, seg.NumDocs(), len(w.Docs))
		}
		base := uint32(len(wc.Rows))
		wc.Segs = append(wc.Segs, seg)
		wc.Bases = append(wc.Bases, base)
		for r, d := range w.Docs {
			meta, err := DecodeMeta(d.Metadata)
			if err != nil {
				return nil, fmt.Errorf("engine: segment %s row %d (id %q): %w", w.Path, r, d.ID, err)
			}
			k := base + uint32(r)
			wc.Rows = append(wc.Rows, Row{Doc: d, Meta: meta})
			wc.ByDoc[d] = k
			wc.Fields.Add(k, meta)
		}
	}
	wc.Bases = append(wc.Bases, uint32(len(wc.Rows)))
	wc.Terms = bm25.NewTermTable(wc.Segs)
	wcache.cats = append(wcache.cats, wc)
	if len(wcache.cats) > warmCacheSize {
		wcache.cats = wcache.cats[len(wcache.cats)-warmCacheSize:]
	}
	return wc, nil
}
