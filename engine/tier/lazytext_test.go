package tier

import (
	"errors"
	"fmt"
	"hash/crc32"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stratasearch/strata/internal/base"
)

// lazyRows is a fixed-seed set of rows with contents of varied lengths
// (some empty) and vectors.
func lazyRows(t testing.TB) []segRow {
	var rows []segRow
	for i := uint64(1); i <= 60; i++ {
		for j, op := range genBatch(i, i).Ops {
			if op.Kind == OpUpsert {
				d := op.Doc
				d.UpdatedUnixNano = int64(i)
				switch (int(i) + j) % 5 {
				case 0:
					d.Content = ""
				case 1:
					d.Content = strings.Repeat(d.Content+" long ", 300)
				}
				rows = append(rows, segRow{doc: &d, birth: i})
			}
		}
	}
	if len(rows) < 100 {
		t.Fatalf("only %d rows", len(rows))
	}
	return rows
}

func wantDoc(r segRow) Document {
	want := *r.doc
	want.EncodedMetadata = nil
	if len(want.Metadata) == 0 {
		want.Metadata = nil
	}
	return want
}

// recordFetcher is a RangeFetcher over a full copy of the file: Fetch
// copies the range into the partial file the segment maps (as a reader
// over object storage writes it into its cached file), checking the CRC.
type recordFetcher struct {
	mu    sync.Mutex
	full  []byte
	into  []byte
	calls [][2]int64
	fail  error
}

func (f *recordFetcher) Fetch(path string, off, n int64, crc uint32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	f.calls = append(f.calls, [2]int64{off, n})
	b := f.full[off : off+n]
	if crc32.Checksum(b, crcTable) != crc {
		return base.Corruptf("object", "remote:"+path, off, "range fails its CRC32C")
	}
	copy(f.into[off:], b)
	return nil
}

// partialCopy is data with its text section zeroed (absent).
func partialCopy(t testing.TB, data []byte) []byte {
	off, n, ok := TextSection(data)
	if !ok {
		t.Fatal("no text section")
	}
	p := slices.Clone(data)
	clear(p[off : off+n])
	return p
}

// TestSegmentTextLazy: a format version 3 or 4 segment opened with a
// RangeFetcher over a copy lacking its text section gives every row as
// written (Text), fetching only the blocks asked for, each once; opened
// without one, Content holds the text at once.
func TestSegmentTextLazy(t *testing.T) {
	rows := lazyRows(t)
	data, err := buildSegment(rows, segBuildOptions{dim: testDim, metric: L2, m: 4, efConstruction: 8, threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if v := uint32(data[8]); !textVersion(v) {
		t.Fatalf("format version %d", v)
	}
	eager, err := openSegment(slices.Clone(data), "eager.sst", testDim, L2)
	if err != nil {
		t.Fatal(err)
	}
	defer eager.free()
	part := partialCopy(t, data)
	f := &recordFetcher{full: data, into: part}
	lazy, err := openSegmentFetch(part, "lazy.sst", testDim, L2, f)
	if err != nil {
		t.Fatal(err)
	}
	defer lazy.free()
	if len(lazy.textBlocks) < 4 {
		t.Fatalf("%d text blocks for %d rows", len(lazy.textBlocks), len(rows))
	}
	if len(f.calls) != 0 {
		t.Fatalf("open fetched %v", f.calls)
	}
	for i, r := range rows {
		want := wantDoc(r)
		if got := *eager.docs[i]; !reflect.DeepEqual(got, want) {
			t.Fatalf("eager row %d: got %+v, want %+v", i, got, want)
		}
		ld := lazy.docs[i]
		if ld.Content != "" || ld.lazy == nil {
			t.Fatalf("lazy row %d: content %q before Text", i, ld.Content)
		}
		got := *ld
		got.lazy, got.lazyRow, got.Content = nil, 0, want.Content
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("lazy row %d without its content: got %+v, want %+v", i, got, want)
		}
	}
	// One row in the middle: one fetch, of its block only.
	mid := len(rows) / 2
	text, err := lazy.docs[mid].Text()
	if err != nil || text != rows[mid].doc.Content {
		t.Fatalf("row %d: Text = %.40q, %v", mid, text, err)
	}
	b := lazy.docs[mid].lazy
	if len(f.calls) != 1 || f.calls[0] != [2]int64{b.ref.off, int64(b.ref.n)} {
		t.Fatalf("fetches %v, want the one block [%d,+%d)", f.calls, b.ref.off, b.ref.n)
	}
	// All rows, in parallel: each block fetched once more at most.
	if err := LoadTexts(lazy.docs); err != nil {
		t.Fatal(err)
	}
	if len(f.calls) != len(lazy.textBlocks) {
		t.Fatalf("%d fetches for %d blocks", len(f.calls), len(lazy.textBlocks))
	}
	for i, r := range rows {
		if text, err := lazy.docs[i].Text(); err != nil || text != r.doc.Content {
			t.Fatalf("row %d: Text = %.40q, %v; want %.40q", i, text, err, r.doc.Content)
		}
	}
	// Closed: a row not loaded yet reports it, no panic.
	lazy2, err := openSegmentFetch(partialCopy(t, data), "lazy2.sst", testDim, L2, &recordFetcher{full: data, into: part})
	if err != nil {
		t.Fatal(err)
	}
	lazy2.free()
	if _, err := lazy2.docs[0].Text(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("Text after free: %v", err)
	}
}

// TestSegmentTextOlderFormats: segments of formats 1 and 2 (doc store
// with content, no text sections) still open, with and without a
// fetcher, and give every row as written.
func TestSegmentTextOlderFormats(t *testing.T) {
	rows := lazyRows(t)
	segWriteText = false
	defer func() { segWriteText = true }()
	for _, o := range []segBuildOptions{
		{dim: testDim, metric: L2, m: 4, efConstruction: 8, threads: 1},
		{dim: testDim, metric: L2, threads: 1, index: SegmentIndexIVFPQ, ivf: ivfBuildParams{nlist: 4, m: 4, nbits: 4, minRows: 1, seed: 1}},
	} {
		data, err := buildSegment(rows, o)
		if err != nil {
			t.Fatal(err)
		}
		want := uint32(segVersionHNSW)
		if o.index == SegmentIndexIVFPQ {
			want = segVersionIVF
		}
		if v := uint32(data[8]); v != want {
			t.Fatalf("%s: format version %d, want %d", o.index, v, want)
		}
		if _, _, ok := TextSection(data); ok {
			t.Fatalf("format %d has a text section", want)
		}
		for _, fetch := range []RangeFetcher{nil, &recordFetcher{full: data, into: data}} {
			w, err := openSegmentFetch(slices.Clone(data), "old.sst", testDim, L2, fetch)
			if err != nil {
				t.Fatalf("format %d: %v", want, err)
			}
			for i, r := range rows {
				d := *w.docs[i]
				wd := wantDoc(r)
				if o.index == SegmentIndexIVFPQ {
					d.Vector, wd.Vector = nil, nil // views of the vector array
				}
				if text, err := w.docs[i].Text(); err != nil || text != r.doc.Content || !reflect.DeepEqual(d, wd) {
					t.Fatalf("format %d row %d: %+v, %v", want, i, d, err)
				}
			}
			w.free()
		}
	}
}

// TestSegmentTextCorrupt: a damaged text block of a lazily opened
// segment is refused when its row's Text is asked, as corruption naming
// the segment and the block's offset; one the fetcher refuses reports the
// fetcher's error, and a later call retries. Opened eagerly, the same
// damage fails the open.
func TestSegmentTextCorrupt(t *testing.T) {
	rows := lazyRows(t)
	data, err := buildSegment(rows, segBuildOptions{dim: testDim, metric: L2, m: 4, efConstruction: 8, threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	probe, err := openSegmentFetch(partialCopy(t, data), "p.sst", testDim, L2, &recordFetcher{})
	if err != nil {
		t.Fatal(err)
	}
	blk := probe.textBlocks[2].ref
	row := 0
	for r, d := range probe.docs {
		if d.lazy == probe.textBlocks[2] {
			row = r
			break
		}
	}
	probe.free()
	bad := slices.Clone(data)
	bad[blk.off+int64(blk.n)/2] ^= 0x40

	// A fetcher that copies what it is given: the segment's own check.
	part := partialCopy(t, data)
	w, err := openSegmentFetch(part, "lazy.sst", testDim, L2, &copyFetcher{full: bad, into: part})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.docs[row].Text()
	var ce *base.CorruptError
	if !errors.As(err, &ce) || ce.Path != "lazy.sst" || ce.Offset != blk.off || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged block: %v, want corruption of lazy.sst at %d", err, blk.off)
	}
	if text, err := w.docs[0].Text(); err != nil || text != rows[0].doc.Content {
		t.Fatalf("an intact block: %.30q, %v", text, err)
	}
	w.free()

	// The fetcher's refusal passes through; a later call retries.
	part = partialCopy(t, data)
	f := &recordFetcher{full: data, into: part, fail: fmt.Errorf("gateway down")}
	w, err = openSegmentFetch(part, "lazy.sst", testDim, L2, f)
	if err != nil {
		t.Fatal(err)
	}
	defer w.free()
	if _, err := w.docs[row].Text(); err == nil || !strings.Contains(err.Error(), "gateway down") {
		t.Fatalf("fetch failure: %v", err)
	}
	f.fail = nil
	if text, err := w.docs[row].Text(); err != nil || text != rows[row].doc.Content {
		t.Fatalf("retry: %.30q, %v", text, err)
	}

	// Eager open of the damaged file, its CRCs fixed: the block check.
	if _, err := openSegment(fixCRCs(slices.Clone(bad)), "eager.sst", testDim, L2); !errors.As(err, &ce) || ce.Offset != blk.off {
		t.Fatalf("eager open of a damaged block: %v, want corruption at %d", err, blk.off)
	}
}

// copyFetcher copies ranges from full without checking them.
type copyFetcher struct{ full, into []byte }

func (f *copyFetcher) Fetch(path string, off, n int64, crc uint32) error {
	copy(f.into[off:off+n], f.full[off:off+n])
	return nil
}

// FuzzOpenSegmentLazy: hostile format version 3 files, CRCs repaired,
// opened with a fetcher that copies whatever the file holds (so the text
// index and blocks reach the parsers), then every row's Text asked:
// never a panic, only ErrCorrupt.
func FuzzOpenSegmentLazy(f *testing.F) {
	rows := lazyRows(f)[:40]
	good, err := buildSegment(rows, segBuildOptions{dim: testDim, metric: L2, m: 4, efConstruction: 8, threads: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	off, n, _ := TextSection(good)
	ti, tn := segSection(f, good, secTextIndex)
	for _, at := range []int{int(off) + 3, int(off + n/2), int(off + n - 2), ti + 1, ti + 5, ti + 9, ti + 12, ti + tn - 3} {
		bad := slices.Clone(good)
		bad[at] ^= 0x5a
		f.Add(bad)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		data = fixCRCs(data)
		part := slices.Clone(data)
		if off, n, ok := TextSection(data); ok {
			clear(part[off : off+n])
		}
		sg, err := openSegmentFetch(part, "fuzz.sst", testDim, L2, &copyFetcher{full: data, into: part})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("non-corruption error %v", err)
			}
			return
		}
		defer sg.free()
		for _, d := range sg.docs {
			if _, err := d.Text(); err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("non-corruption error %v", err)
			}
		}
	})
}
