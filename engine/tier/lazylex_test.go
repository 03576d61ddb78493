package tier

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/text"
)

// spanCopyFetcher is a copyFetcher that is also a SpanFetcher: FetchSpan
// copies the range from full, unchecked.
type spanCopyFetcher struct{ copyFetcher }

func (f *spanCopyFetcher) FetchSpan(path string, off, n int64) error {
	if off < 0 || n < 0 || off+n > int64(len(f.full)) {
		return errors.New("span outside the file")
	}
	copy(f.into[off:off+n], f.full[off:off+n])
	return nil
}

// lexFileSegment is a format version 3 segment of rows with a BM25 section
// built from their contents.
func lexFileSegment(t testing.TB, rows []segRow) []byte {
	an := text.MustNew(text.CodeOptions())
	b := bm25.NewBuilder(bm25.Options{})
	for i, r := range rows {
		if _, err := b.Add(uint64(i), an.Analyze(r.doc.Content)); err != nil {
			t.Fatal(err)
		}
	}
	var lb bytes.Buffer
	if _, err := b.WriteTo(&lb); err != nil {
		t.Fatal(err)
	}
	seg, err := buildSegment(rows, segBuildOptions{dim: testDim, metric: L2, m: 4, efConstruction: 8, threads: 1, lexicalBytes: lb.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	return seg
}

// FuzzPostingsSection: hostile format version 3 files, CRCs repaired:
// PostingsSection never panics and, when it locates a range, the range
// lies inside the file; the file opened with a SpanFetcher with that
// range cleared gives a BM25 section that bm25.OpenFetch, Search and
// Verify read through WarmSegment.LexicalFetch without a panic and with
// only corruption errors.
func FuzzPostingsSection(f *testing.F) {
	good := lexFileSegment(f, lazyRows(f)[:40])
	off, n, ok := PostingsSection(good)
	if !ok || n <= 0 {
		f.Fatalf("PostingsSection of a segment with a BM25 section: %d %d %v", off, n, ok)
	}
	f.Add(good)
	for _, at := range []int64{off - 40, off - 5, off + 1, off + n/2, off + n + 3, off + n + 30} {
		bad := slices.Clone(good)
		bad[at] ^= 0x5a
		f.Add(bad)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		data = fixCRCs(data)
		po, pn, ok := PostingsSection(data)
		if !ok {
			return
		}
		if po < 0 || pn <= 0 || po+pn > int64(len(data)) {
			t.Fatalf("postings [%d,+%d) outside the %d-byte file", po, pn, len(data))
		}
		part := slices.Clone(data)
		clear(part[po : po+pn])
		if to, tn, ok := TextSection(data); ok {
			clear(part[to : to+tn])
		}
		fe := &spanCopyFetcher{copyFetcher{full: data, into: part}}
		sg, err := openSegmentFetch(part, "fuzz.sst", testDim, L2, fe)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("non-corruption error %v", err)
			}
			return
		}
		defer sg.free()
		if sg.lex == nil || sg.lexSpan == nil {
			return
		}
		s, err := bm25.OpenFetch(sg.lex, "fuzz.sst", lexFetcher{sg.lexSpan, "fuzz.sst", sg.lexOff})
		if err != nil {
			if !errors.Is(err, bm25.ErrCorrupt) {
				t.Fatalf("non-corruption error %v", err)
			}
			return
		}
		var terms []string
		for i := 0; i < s.NumTerms() && i < 8; i++ {
			terms = append(terms, s.Term(i))
		}
		if _, err := bm25.Search([]bm25.View{{Seg: s}}, bm25.Query{Should: terms}, bm25.DefaultSearchParams(), nil); err != nil && !errors.Is(err, bm25.ErrCorrupt) {
			t.Fatalf("Search: non-corruption error %v", err)
		}
		if err := s.Verify(); err != nil && !errors.Is(err, bm25.ErrCorrupt) {
			t.Fatalf("Verify: non-corruption error %v", err)
		}
	})
}
