package engine

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/engine/tier"
)

// lexSegBuilder implements tier.LexicalSegmentBuilder: the BM25 section of
// a warm segment is a bm25 segment over the rows' analysed contents, local
// doc id = row, external id = extID(document id).
type lexSegBuilder struct{ an *text.Analyzer }

func (l lexSegBuilder) BuildLexical(docs []*tier.Document) ([]byte, error) {
	b := bm25.NewBuilder(bm25.Options{})
	for i, d := range docs {
		lid, err := b.Add(extID(d.ID), l.an.Analyze(d.Content))
		if err != nil {
			return nil, fmt.Errorf("engine: lexical segment row %d: %w", i, err)
		}
		if lid != uint32(i) {
			return nil, fmt.Errorf("engine: lexical segment: bm25 local id %d for row %d", lid, i)
		}
	}
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("engine: lexical segment: %w", err)
	}
	return buf.Bytes(), nil
}

// warmCatalog is the engine's view of one set of warm segments (a
// Snapshot's): their BM25 segments (opened over the mapped sections) and
// the per-row infos, concatenated in segment order. Row r of segment i
// has key bases[i] + r; MemTable version v of a query has key len(infos)
// + v. A catalog is only used by a query whose Snapshot holds exactly its
// segments, so the mapped bytes stay valid while it is read.
type warmCatalog struct {
	key   string
	segs  []*bm25.Segment
	bases []uint32 // len(segs)+1: bases[len] = len(infos)
	infos []verInfo
	byDoc map[*tier.Document]uint32
	fi    *fieldIndex
}

// warmCache keeps the catalogs of the most recent warm segment sets.
type warmCache struct {
	mu   sync.Mutex
	cats []*warmCatalog // most recent last
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

// warmCatalog returns the catalog of sn's warm segments, building it on
// first use: BM25 sections are opened in place (bm25.Open over the
// mapping); a segment written without one gets its BM25 segment rebuilt
// in memory from its documents. Metadata is decoded once per row.
func (c *Collection) warmCatalog(sn *tier.Snapshot) (*warmCatalog, error) {
	ws := sn.WarmSegments()
	key := segSetKey(ws)
	c.warm.mu.Lock()
	defer c.warm.mu.Unlock()
	for i, wc := range c.warm.cats {
		if wc.key == key {
			if i != len(c.warm.cats)-1 {
				c.warm.cats = append(append(c.warm.cats[:i:i], c.warm.cats[i+1:]...), wc)
			}
			return wc, nil
		}
	}
	wc := &warmCatalog{key: key, byDoc: map[*tier.Document]uint32{}, fi: newFieldIndex(c.o.IndexedFields)}
	for _, w := range ws {
		data, off := w.Lexical, w.LexicalOffset
		if data == nil {
			b, err := lexSegBuilder{c.an}.BuildLexical(w.Docs)
			if err != nil {
				return nil, err
			}
			data, off = b, 0
		}
		seg, err := bm25.Open(data, w.Path)
		if err != nil {
			return nil, fmt.Errorf("engine: segment %s: BM25 section at byte offset %d: %w", w.Path, off, err)
		}
		if seg.NumDocs() != len(w.Docs) {
			return nil, fmt.Errorf("%w: engine: segment %s: BM25 section at byte offset %d has %d docs, segment %d rows",
				tier.ErrCorrupt, w.Path, off, seg.NumDocs(), len(w.Docs))
		}
		base := uint32(len(wc.infos))
		wc.segs = append(wc.segs, seg)
		wc.bases = append(wc.bases, base)
		for r, d := range w.Docs {
			meta, err := decodeMeta(d.Metadata)
			if err != nil {
				return nil, fmt.Errorf("engine: segment %s row %d (id %q): %w", w.Path, r, d.ID, err)
			}
			k := base + uint32(r)
			wc.infos = append(wc.infos, verInfo{doc: d, meta: meta})
			wc.byDoc[d] = k
			wc.fi.add(k, meta)
		}
	}
	wc.bases = append(wc.bases, uint32(len(wc.infos)))
	c.warm.cats = append(c.warm.cats, wc)
	if len(c.warm.cats) > warmCacheSize {
		c.warm.cats = c.warm.cats[len(c.warm.cats)-warmCacheSize:]
	}
	return wc, nil
}

// MergeLexical implements tier.LexicalMerger: bm25.Merge of the input
// segments' BM25 sections without their deleted rows.
func (l lexSegBuilder) MergeLexical(sections [][]byte, paths []string, deleted []*roaring.Bitmap) ([]byte, error) {
	segs := make([]*bm25.Segment, len(sections))
	for i, b := range sections {
		s, err := bm25.Open(b, paths[i])
		if err != nil {
			return nil, fmt.Errorf("engine: merge lexical sections: %w", err)
		}
		segs[i] = s
	}
	var buf bytes.Buffer
	if _, err := bm25.Merge(&buf, segs, deleted); err != nil {
		return nil, fmt.Errorf("engine: merge lexical sections: %w", err)
	}
	return buf.Bytes(), nil
}

// FlushLexical implements tier.LexicalFlusher: the MemTable's sealed BM25
// segment with every version not in versions (ascending) dropped, so the
// flushed segment's row r is versions[r]. No re-analysis.
func (h *hotIndex) FlushLexical(versions []uint32) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return nil, h.err
	}
	seg, err := h.b.Segment()
	if err != nil {
		return nil, fmt.Errorf("engine: seal lexical index: %w", err)
	}
	n := uint32(seg.NumDocs())
	del := roaring.New()
	del.AddRange(0, uint64(n))
	prev := int64(-1)
	for _, v := range versions {
		if int64(v) <= prev || v >= n {
			return nil, fmt.Errorf("engine: flush lexical: version %d out of order or beyond %d", v, n)
		}
		prev = int64(v)
		del.Remove(v)
	}
	var buf bytes.Buffer
	if _, err := bm25.Merge(&buf, []*bm25.Segment{seg}, []*roaring.Bitmap{del}); err != nil {
		return nil, fmt.Errorf("engine: flush lexical: %w", err)
	}
	return buf.Bytes(), nil
}

var (
	_ tier.LexicalFlusher        = (*hotIndex)(nil)
	_ tier.LexicalMerger         = lexSegBuilder{}
	_ tier.LexicalSegmentBuilder = lexSegBuilder{}
)
