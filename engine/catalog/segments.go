package catalog

import (
	"bytes"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/engine/tier"
)

// Segments implements tier.LexicalSegmentBuilder and tier.LexicalMerger:
// the BM25 section of a warm segment is a bm25 segment over the rows'
// analysed contents (analyzer An), local doc id = row, external id =
// ExtID(document id). The section does not store the external ids
// (bm25.Options.OmitExtIDs): an opener derives them from the rows'
// document ids (ExtIDs) and gives them to bm25.OpenWith.
type Segments struct{ An *text.Analyzer }

// BuildLexical implements tier.LexicalSegmentBuilder.
func (l Segments) BuildLexical(docs []*tier.Document) ([]byte, error) {
	b := bm25.NewBuilder(bm25.Options{OmitExtIDs: true})
	for i, d := range docs {
		text, err := d.Text()
		if err != nil {
			return nil, err
		}
		lid, err := b.Add(ExtID(d.ID), l.An.Analyze(text))
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

// MergeLexical implements tier.LexicalMerger: bm25.Merge of the input
// segments' BM25 sections without their deleted rows (and without
// external ids, which the merge then does not need from its inputs).
func (l Segments) MergeLexical(sections [][]byte, paths []string, deleted []*roaring.Bitmap) ([]byte, error) {
	segs := make([]*bm25.Segment, len(sections))
	for i, b := range sections {
		s, err := bm25.Open(b, paths[i])
		if err != nil {
			return nil, fmt.Errorf("engine: merge lexical sections: %w", err)
		}
		segs[i] = s
	}
	var buf bytes.Buffer
	if _, err := bm25.MergeWith(&buf, segs, deleted, bm25.MergeOptions{OmitExtIDs: true}); err != nil {
		return nil, fmt.Errorf("engine: merge lexical sections: %w", err)
	}
	return buf.Bytes(), nil
}

var (
	_ tier.LexicalMerger         = Segments{}
	_ tier.LexicalSegmentBuilder = Segments{}
)

// ExtIDs returns the bm25 external ids of docs, row by row: ExtID of each
// document id (bm25.OpenOptions.ExtIDs of a section built by Segments).
func ExtIDs(docs []*tier.Document) []uint64 {
	ids := make([]uint64, len(docs))
	for i, d := range docs {
		ids[i] = ExtID(d.ID)
	}
	return ids
}
