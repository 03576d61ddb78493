package tier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/blake3"
)

// derivedRows are seeded rows of which every third stores a version hash
// that is not BLAKE3-256 of its content (as a client may give); the
// others have exactly that hash, empty content included, and are derived
// unless their content is over derivedHashMaxContent.
func derivedRows(n int) (rows []segRow, derived int) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range n {
		d := &Document{ID: fmt.Sprintf("d%04d", i), Content: fmt.Sprintf("word %d %x", i, rng.Uint64()),
			UpdatedUnixNano: 1_700_000_000_000_000_000 + int64(i)*int64(rng.IntN(1000)), Vector: make([]float32, testDim)}
		if i%10 == 4 {
			d.Content = ""
		}
		for k := range d.Vector {
			d.Vector[k] = float32(rng.NormFloat64())
		}
		switch {
		case i%3 == 2:
			for k := range d.VersionHash {
				d.VersionHash[k] = byte(rng.Uint32())
			}
		case i%10 == 7:
			// Over derivedHashMaxContent: the hash is stored.
			d.Content = strings.Repeat("long ", derivedHashMaxContent/5) + d.Content
			d.VersionHash = blake3.Sum256([]byte(d.Content))
		default:
			d.VersionHash = blake3.Sum256([]byte(d.Content))
			derived++
		}
		rows = append(rows, segRow{doc: d, birth: uint64(1 + i/40)})
	}
	return rows, derived
}

// TestSegmentDerivedHashes: a format version 5 segment stores a row's
// version hash only when it is not BLAKE3-256 of the content (32 bytes a
// row fewer in the doc store than format version 4), and every row's
// Hash is the hash written: eagerly opened, opened with a RangeFetcher
// (the content fetched to compute it), and after the rows are written
// again (compaction: still not stored) or into format version 4 (stored).
func TestSegmentDerivedHashes(t *testing.T) {
	const n = 240
	rows, derived := derivedRows(n)
	for _, metric := range []Metric{L2, Cosine} {
		for _, o := range []segBuildOptions{
			{dim: testDim, metric: metric, m: 4, efConstruction: 16, threads: 1},
			{dim: testDim, metric: metric, threads: 1, index: SegmentIndexIVFPQ, ivf: ivfBuildParams{nlist: 4, m: 4, nbits: 4, minRows: 1, seed: 1}},
		} {
			name := fmt.Sprintf("%v/%s", metric, o.index)
			v5, err := buildSegment(rows, o)
			if err != nil {
				t.Fatal(err)
			}
			segWriteCompact = false
			v4, err := buildSegment(rows, o)
			segWriteCompact = true
			if err != nil {
				t.Fatal(err)
			}
			if v := v5[8]; v != segVersionCompact {
				t.Fatalf("%s: format version %d", name, v)
			}
			raw := func(b []byte) int {
				in, err := Inspect(b)
				if err != nil || !in.OK() {
					t.Fatalf("%s: inspect: %v %v", name, err, in.Problems)
				}
				return mustAtoi(t, fmt.Sprint(tierField(t, in, "docStoreRawBytes")))
			}
			if r4, r5 := raw(v4), raw(v5); r5 > r4-32*derived {
				t.Fatalf("%s: doc store %d raw bytes, format 4 %d: want ≤ %d (%d rows derive their hash)", name, r5, r4, r4-32*derived, derived)
			}
			check := func(what string, w *warmSegment) {
				t.Helper()
				for i, r := range rows {
					d := w.docs[i]
					h, err := d.Hash()
					if err != nil || h != r.doc.VersionHash {
						t.Fatalf("%s %s row %d: hash %x %v, wrote %x", name, what, i, h, err, r.doc.VersionHash)
					}
					if text, _ := d.Text(); text != r.doc.Content || d.UpdatedUnixNano != r.doc.UpdatedUnixNano {
						t.Fatalf("%s %s row %d: %q at %d, wrote %q at %d", name, what, i, text, d.UpdatedUnixNano, r.doc.Content, r.doc.UpdatedUnixNano)
					}
				}
			}
			eager, err := openSegment(slices.Clone(v5), "v5.sst", testDim, metric)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			nd := 0
			for _, d := range eager.docs {
				if d.HashDerived() {
					nd++
					if d.VersionHash != ([32]byte{}) {
						t.Fatalf("%s: a derived row holds a stored hash", name)
					}
				}
			}
			if nd != derived {
				t.Fatalf("%s: %d rows derive their hash, want %d", name, nd, derived)
			}
			check("eager", eager)

			part := partialCopy(t, v5)
			f := &recordFetcher{full: v5, into: part}
			lazy, err := openSegmentFetch(part, "lazy.sst", testDim, metric, f)
			if err != nil {
				t.Fatalf("%s: lazy: %v", name, err)
			}
			if len(f.calls) != 0 {
				t.Fatalf("%s: open fetched %v", name, f.calls)
			}
			check("lazy", lazy)

			// Rewritten from the opened rows (as compaction does), in
			// both formats.
			again := make([]segRow, n)
			for i := range again {
				again[i] = segRow{doc: eager.docs[i], birth: rows[i].birth}
			}
			for _, compact := range []bool{true, false} {
				segWriteCompact = compact
				b, err := buildSegment(again, o)
				segWriteCompact = true
				if err != nil {
					t.Fatal(err)
				}
				w, err := openSegment(b, "again.sst", testDim, metric)
				if err != nil {
					t.Fatalf("%s again compact=%v: %v", name, compact, err)
				}
				check(fmt.Sprintf("again compact=%v", compact), w)
				if compact && raw(b) != raw(v5) {
					t.Fatalf("%s: rewritten doc store %d raw bytes, first %d", name, raw(b), raw(v5))
				}
				w.free()
			}
			eager.free()
			lazy.free()
		}
	}
}

// TestSegmentDerivedHashConcurrent: Hash called at once from many
// goroutines on rows that derive it, eagerly and lazily opened, agrees
// (run with -race).
func TestSegmentDerivedHashConcurrent(t *testing.T) {
	rows, _ := derivedRows(64)
	o := segBuildOptions{dim: testDim, metric: L2, m: 4, efConstruction: 16, threads: 1}
	data, err := buildSegment(rows, o)
	if err != nil {
		t.Fatal(err)
	}
	eager, err := openSegment(slices.Clone(data), "c.sst", testDim, L2)
	if err != nil {
		t.Fatal(err)
	}
	part := partialCopy(t, data)
	lazy, err := openSegmentFetch(part, "l.sst", testDim, L2, &recordFetcher{full: data, into: part})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []*warmSegment{eager, lazy} {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for i, r := range rows {
					if h, err := w.docs[i].Hash(); err != nil || h != r.doc.VersionHash {
						t.Errorf("row %d: %x %v", i, h, err)
						return
					}
					c := *w.docs[i] // a copy computes the same
					if h, err := c.Hash(); err != nil || h != r.doc.VersionHash {
						t.Errorf("copy of row %d: %x %v", i, h, err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
}

// TestSegmentHashCodeCorrupt: a version hash code other than 0 or 1, and
// a truncated stored hash, are corruption naming the doc store.
func TestSegmentHashCodeCorrupt(t *testing.T) {
	rows, _ := derivedRows(3)
	rows = rows[2:] // one row, whose hash is stored
	rows[0].doc.Vector = nil
	data, err := buildSegment(rows, segBuildOptions{dim: testDim, metric: L2, threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	w, err := openSegment(slices.Clone(data), "ok.sst", testDim, L2)
	if err != nil {
		t.Fatal(err)
	}
	w.free()
	// Rewrite the doc store with the code byte changed: build the raw
	// store by hand as the writer does.
	for _, code := range []byte{1, 2, 0xff} {
		raw := []byte{1}
		raw = append(raw, 1) // birth
		raw = putStr(raw, rows[0].doc.ID)
		body := *rows[0].doc
		raw = appendDocFields(raw, &body)
		raw = append(raw, code)
		raw = append(raw, body.VersionHash[:]...)
		raw = append(raw, 0)
		bad := replaceDocStore(t, data, raw)
		w, err := openSegment(bad, "bad.sst", testDim, L2)
		if code == 1 { // the row as written: the rewrite itself is sound
			if err != nil {
				t.Fatalf("code 1: %v", err)
			}
			if h, _ := w.docs[0].Hash(); h != rows[0].doc.VersionHash {
				t.Fatalf("code 1: hash %x", h)
			}
			w.free()
			continue
		}
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "version hash code") {
			t.Fatalf("code %d: %v", code, err)
		}
	}
}

// replaceDocStore returns segment data with its doc store replaced by
// the zstd frame of raw (and the meta section's raw size to match): the
// sections are laid out again, the text index's block offsets moved with
// the text section, and every CRC32C recomputed.
func replaceDocStore(t *testing.T, data []byte, raw []byte) []byte {
	t.Helper()
	n := len(data)
	foot := data[n-segFooterSize:]
	tableOff := binary.LittleEndian.Uint64(foot)
	nsec := int(binary.LittleEndian.Uint32(foot[8:]))
	type sec struct {
		kind uint32
		b    []byte
		off  int
	}
	var secs []sec
	for i := range nsec {
		e := data[int(tableOff)+i*segTableEntry:]
		off, ln := binary.LittleEndian.Uint64(e[8:]), binary.LittleEndian.Uint64(e[16:])
		secs = append(secs, sec{binary.LittleEndian.Uint32(e), slices.Clone(data[off : off+ln]), int(off)})
	}
	enc, _ := zstd.NewWriter(nil)
	frame := enc.EncodeAll(raw, nil)
	enc.Close()
	var oldText, newText int
	out := slices.Clone(data[:segHeaderSize])
	for i := range secs {
		s := &secs[i]
		switch s.kind {
		case secDocs:
			s.b = frame
		case secMeta:
			d := &decoder{b: s.b}
			m := binary.AppendUvarint(nil, d.uvarint("dim"))
			m = append(m, d.byte1("metric"))
			for range 3 {
				m = binary.AppendUvarint(m, d.uvarint("meta"))
			}
			s.b = binary.AppendUvarint(m, uint64(len(raw)))
		}
		for len(out)%segAlign != 0 {
			out = append(out, 0)
		}
		if s.kind == secText {
			oldText, newText = s.off, len(out)
		}
		s.off = len(out)
		out = append(out, s.b...)
	}
	table := []byte{}
	for _, s := range secs {
		b := s.b
		if s.kind == secTextIndex {
			b = slices.Clone(b)
			blocks := int(binary.LittleEndian.Uint32(b[8:]))
			for j := range blocks {
				at := 12 + j*20
				binary.LittleEndian.PutUint64(b[at:], uint64(int(binary.LittleEndian.Uint64(b[at:]))-oldText+newText))
			}
			copy(out[s.off:], b)
		}
		table = binary.LittleEndian.AppendUint32(table, s.kind)
		table = binary.LittleEndian.AppendUint32(table, 0)
		table = binary.LittleEndian.AppendUint64(table, uint64(s.off))
		table = binary.LittleEndian.AppendUint64(table, uint64(len(b)))
		table = binary.LittleEndian.AppendUint32(table, crc32.Checksum(b, crcTable))
		table = binary.LittleEndian.AppendUint32(table, 0)
	}
	at := len(out)
	out = append(out, table...)
	out = binary.LittleEndian.AppendUint64(out, uint64(at))
	out = binary.LittleEndian.AppendUint32(out, uint32(nsec))
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(table, crcTable))
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, crcTable))
	out = binary.LittleEndian.AppendUint32(out, 0)
	return append(out, segEndMagic...)
}
