package tier

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/stratasearch/strata/engine/hnsw"
	"github.com/stratasearch/strata/engine/ivfpq"
	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/internal/cancel"
)

// Warm segment container (doc.go "Warm segment file").
const (
	segMagic    = "STRATSEG"
	segEndMagic = "STRATEND"
	// segFormatVersion is the newest version this build reads. Version 1
	// files have an HNSW section whenever a row has a vector; version 2
	// files (written for SegmentIndex "ivfpq") have an ivfpq or flat
	// section instead. Version 3 files (no vector section, or an ivfpq or
	// flat one) keep the documents' content out of the doc store: it is
	// in the text section, in blocks that decode on their own
	// (secTextIndex, lazytext.go), so a reader can fetch and decode the
	// text of the rows a query returns only. Version 4 files are HNSW
	// segments with the text section of version 3 whose doc store also
	// holds each vector by reference to the HNSW section's copy
	// (vecref.go). Version 5 files are versions 3 and 4 with compact
	// doc-store rows: no content field, a version hash stored only when
	// it is not BLAKE3-256 of a content of at most 1 KiB
	// (derivedHashMaxContent), timestamps as deltas, and a
	// Cosine vector reference's norm only as wide as it needs; their
	// vectors are by reference exactly when there is an hnsw section.
	// This build writes version 5 and reads 1 to 5.
	segFormatVersion  = 5
	segVersionHNSW    = 1
	segVersionIVF     = 2
	segVersionText    = 3
	segVersionTextRef = 4
	segVersionCompact = 5
	segHeaderSize     = 16
	segFooterSize     = 32
	segTableEntry     = 32
	segAlign          = 64

	secMeta  = 1 // segment meta
	secDocs  = 2 // zstd doc store
	secHNSW  = 3 // engine/hnsw WriteTo bytes
	secBM25  = 4 // LexicalSegmentBuilder output (engine/bm25 segment), optional
	secIVFPQ = 5 // engine/ivfpq WriteTo bytes (format version 2)
	secFlat  = 6 // uvarint vector count: exact scan, no index (format version 2)
	// Format versions 3 to 5: the text blocks and their index.
	secTextIndex = 7 // textIndex encoding (lazytext.go)
	secText      = 8 // the text blocks, each one zstd frame; always the last section
)

// segWriteText makes buildSegment write format versions 3 to 5 (text blocks).
// Off, it writes versions 1 and 2 as earlier builds did (tests of the
// older formats).
var segWriteText = true

// derivedHashMaxContent is the longest content whose version hash a
// format version 5 segment may leave out (when it is BLAKE3-256 of the
// content): one BLAKE3 chunk. Longer rows store it, 32 bytes that are
// then at most 3% of the row, and the writer does not hash their content
// to find out (a flush of large chunks costs no more than before).
const derivedHashMaxContent = 1024

// segWriteCompact makes buildSegment write format version 5 rather than
// 3 or 4 (tests of those formats turn it off).
var segWriteCompact = true

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// segRow is one row handed to the segment writer.
type segRow struct {
	doc   *Document
	birth uint64
	ver   int32 // MemTable version index (flush only)
}

// buildStep is the number of vectors a segment's HNSW build inserts
// between checks of segBuildOptions.boost.
const buildStep = 8192

// segBuildOptions are the index parameters of a segment build.
type segBuildOptions struct {
	dim            int
	metric         Metric
	m              int
	efConstruction int
	threads        int
	// boost, if non-nil, is asked before each step of the HNSW build
	// (step vectors; 0 means buildStep) whether that step should use
	// every core (writes are waiting for this build).
	boost func() bool
	step  int
	// threadsAt, if non-nil, replaces threads and boost: it is asked
	// before each step of the HNSW build (and once before an IVF-PQ
	// build) how many goroutines to use (deferred index builds,
	// deferred.go). An error (the store closing) stops the build.
	threadsAt func() (int, error)
	// index is SegmentIndexHNSW or SegmentIndexIVFPQ ("" = HNSW), or
	// segmentIndexFlat: no index (a flat section, exact scan: a
	// background flush, whose index is built later, deferred.go).
	index   SegmentIndexType
	ivf     ivfBuildParams
	lexical LexicalSegmentBuilder
	// lexicalBytes, if non-nil, is the BM25 section already built (by
	// LexicalFlusher or LexicalMerger); lexical is then not called.
	lexicalBytes []byte
	// lexicalWait, if non-nil, returns the BM25 section being built
	// meanwhile (Flush's LexicalFlusher runs beside the doc store and
	// the vector index); lexical and lexicalBytes are then not used.
	lexicalWait func() ([]byte, error)
}

// buildSegment serialises rows into a segment container.
func buildSegment(rows []segRow, o segBuildOptions) ([]byte, error) {
	parts, err := buildSegmentParts(rows, o)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out, nil
}

// docStoreSizeHint is the size of the uncompressed doc store that
// buildSegmentParts writes for rows: exact for the fields of a compact
// (version 5) store, with room for a stored hash and a timestamp per row,
// and an estimate for the older layouts (with the content when it is
// stored inline, without text blocks).
func docStoreSizeHint(rows []segRow, compact, byRef, inlineText bool) int {
	n := binary.MaxVarintLen64
	for _, r := range rows {
		d := r.doc
		n += uvarintSize(r.birth) + strSize(d.ID) + docFieldsSize(d) + 1 + 32 + binary.MaxVarintLen64
		if byRef {
			// the reference instead of the vector: its length, a norm
			// code and a few exceptions.
			n += 16 - 4*len(d.Vector)
		}
		if inlineText {
			n += strSize(d.Content)
		}
	}
	return max(n, 0)
}

// buildSegmentParts is buildSegment with the file returned as pieces
// that, concatenated, are its bytes (no section is copied into one
// buffer).
func buildSegmentParts(rows []segRow, o segBuildOptions) ([][]byte, error) {
	minE, maxE := uint64(math.MaxUint64), uint64(0)
	var labels []uint64
	var vecs []float32
	var tb *textBuilder
	if segWriteText {
		tb = newTextBuilder(rows)
		defer tb.release() // its encoder, on the error returns before finish
	}
	for i, r := range rows {
		minE, maxE = min(minE, r.birth), max(maxE, r.birth)
		if r.doc.Vector != nil {
			labels = append(labels, uint64(i))
			vecs = append(vecs, r.doc.Vector...)
		}
	}
	if len(rows) == 0 {
		minE = 0
	}
	// The HNSW index is built first: a version 4 doc store refers to its
	// vectors (vecref.go).
	var ix *hnsw.Index
	if len(labels) > 0 && o.index != SegmentIndexIVFPQ && o.index != segmentIndexFlat {
		var err error
		ix, err = hnsw.New(hnsw.Options{Dim: o.dim, Metric: o.metric, M: o.m,
			EfConstruction: o.efConstruction, InitialCapacity: len(labels)})
		if err != nil {
			return nil, fmt.Errorf("tier: segment hnsw: %w", err)
		}
		defer ix.Close()
		// In steps of buildStep vectors, so that a build that started
		// with one goroutine takes every core once writes wait for it.
		// Levels are drawn and nodes inserted in order either way: with
		// one goroutine throughout, the graph is the one a single
		// AddBatch builds.
		step := o.step
		if step <= 0 {
			step = buildStep
		}
		for start := 0; start < len(labels); start += step {
			end := min(start+step, len(labels))
			threads := max(1, o.threads)
			if o.threadsAt != nil {
				n, err := o.threadsAt()
				if err != nil {
					return nil, err
				}
				threads = max(1, n)
			} else if o.boost != nil && o.boost() {
				threads = max(threads, runtime.GOMAXPROCS(0))
			}
			if _, err := ix.AddBatch(labels[start:end], vecs[start*o.dim:end*o.dim], threads); err != nil {
				return nil, fmt.Errorf("tier: segment hnsw: %w", err)
			}
		}
	}
	// Doc store: per row uvarint birth | str id | upsert body, zstd.
	// Versions 3 and 4: the body without its content (in the text
	// blocks); version 4: also without the vector, then its reference.
	byRef := ix != nil && tb != nil
	compact := tb != nil && segWriteCompact
	raw := make([]byte, 0, docStoreSizeHint(rows, compact, byRef, tb == nil))
	raw = binary.AppendUvarint(raw, uint64(len(rows)))
	var ref vecRefEncoder
	if byRef {
		ref = vecRefEncoder{ix: ix, metric: o.metric, u: make([]float32, o.dim)}
	}
	var prevTS int64
	for _, r := range rows {
		raw = binary.AppendUvarint(raw, r.birth)
		raw = putStr(raw, r.doc.ID)
		if compact {
			// Version 5: fields | hash code (0: BLAKE3-256 of the
			// content, 1: the hash follows) | timestamp delta | the
			// vector reference when by reference.
			text, err := r.doc.Text()
			if err != nil {
				return nil, err
			}
			tb.add(text)
			body := *r.doc
			if byRef {
				body.Vector = nil
			}
			raw = appendDocFields(raw, &body)
			if r.doc.derived != nil || len(text) <= derivedHashMaxContent && contentHash(text) == r.doc.VersionHash {
				raw = append(raw, 0)
			} else {
				raw = append(raw, 1)
				raw = append(raw, r.doc.VersionHash[:]...)
			}
			raw = binary.AppendVarint(raw, r.doc.UpdatedUnixNano-prevTS)
			prevTS = r.doc.UpdatedUnixNano
			if byRef {
				if raw, err = ref.appendRef(raw, r.doc.Vector, true); err != nil {
					return nil, err
				}
			}
			continue
		}
		doc := r.doc
		if tb != nil || doc.derived != nil {
			d := *r.doc
			if tb != nil {
				text, err := r.doc.Text()
				if err != nil {
					return nil, err
				}
				tb.add(text)
				d.Content = ""
			}
			h, err := r.doc.Hash()
			if err != nil {
				return nil, err
			}
			d.VersionHash, d.derived = h, nil
			doc = &d
		}
		if !byRef {
			raw = appendDocBody(raw, doc, r.doc.UpdatedUnixNano)
			continue
		}
		var err error
		if raw, err = ref.appendRow(raw, doc); err != nil {
			return nil, err
		}
	}
	// Without inline vectors the doc store compresses 6-17x (source
	// text); vectors stored in it barely compress. A larger output grows
	// the destination as append does.
	dstCap := len(raw) / 8
	if len(labels) > 0 && !byRef {
		dstCap = len(raw)
	}
	enc := zstdEncoders.Get().(*zstd.Encoder)
	docs := enc.EncodeAll(raw, make([]byte, 0, dstCap))
	zstdEncoders.Put(enc)

	var meta []byte
	meta = binary.AppendUvarint(meta, uint64(o.dim))
	meta = append(meta, byte(o.metric))
	meta = binary.AppendUvarint(meta, uint64(len(rows)))
	meta = binary.AppendUvarint(meta, minE)
	meta = binary.AppendUvarint(meta, maxE)
	meta = binary.AppendUvarint(meta, uint64(len(raw)))

	secs := []struct {
		kind uint32
		b    []byte
	}{{secMeta, meta}, {secDocs, docs}}
	version := uint32(segVersionHNSW)
	if len(labels) > 0 && o.index == segmentIndexFlat {
		version = segVersionIVF
		secs = append(secs, struct {
			kind uint32
			b    []byte
		}{secFlat, binary.AppendUvarint(nil, uint64(len(labels)))})
	} else if len(labels) > 0 && o.index == SegmentIndexIVFPQ {
		threads := o.threads
		if o.threadsAt != nil {
			n, err := o.threadsAt()
			if err != nil {
				return nil, err
			}
			threads = n
		}
		kind, b, err := buildIVFSection(vecs, o.dim, o.metric, o.ivf, threads)
		if err != nil {
			return nil, err
		}
		version = segVersionIVF
		secs = append(secs, struct {
			kind uint32
			b    []byte
		}{kind, b})
	} else if ix != nil {
		var hb bytes.Buffer
		if _, err := ix.WriteTo(&hb); err != nil {
			return nil, fmt.Errorf("tier: segment hnsw: %w", err)
		}
		secs = append(secs, struct {
			kind uint32
			b    []byte
		}{secHNSW, hb.Bytes()})
	}

	if o.lexicalWait != nil {
		lb, err := o.lexicalWait()
		if err != nil {
			return nil, err
		}
		secs = append(secs, struct {
			kind uint32
			b    []byte
		}{secBM25, lb})
	} else if o.lexicalBytes != nil {
		secs = append(secs, struct {
			kind uint32
			b    []byte
		}{secBM25, o.lexicalBytes})
	} else if o.lexical != nil {
		ds := make([]*Document, len(rows))
		for i := range rows {
			ds[i] = rows[i].doc
		}
		lb, err := o.lexical.BuildLexical(ds)
		if err != nil {
			return nil, fmt.Errorf("tier: segment lexical index: %w", err)
		}
		secs = append(secs, struct {
			kind uint32
			b    []byte
		}{secBM25, lb})
	}

	var textOff int // the text section's offset in the file
	if tb != nil {
		version = segVersionText
		if byRef {
			version = segVersionTextRef
		}
		if compact {
			version = segVersionCompact
		}
		// The index is written once the text section's offset is known;
		// its size does not depend on that offset (fixed-width fields).
		secs = append(secs, struct {
			kind uint32
			b    []byte
		}{secTextIndex, nil}, struct {
			kind uint32
			b    []byte
		}{secText, tb.finish()})
	}
	// Section offsets: each at a segAlign boundary after the header. The
	// text index holds the text section's offset, which follows it; its
	// size does not depend on that offset (fixed-width fields).
	offs := make([]int, len(secs))
	size := segHeaderSize
	for i, s := range secs {
		size = (size + segAlign - 1) / segAlign * segAlign
		if s.kind == secTextIndex {
			secs[i].b = tb.index(0) // placeholder of the final size
		}
		if s.kind == secText {
			textOff = size
		}
		offs[i] = size
		size += len(secs[i].b)
	}
	// The file is kept as the pieces that concatenate to it (header, zero
	// padding, sections, table and footer), so that no section is copied
	// again: the whole-file CRC32C is updated piece by piece.
	hdr := make([]byte, segHeaderSize)
	copy(hdr, segMagic)
	binary.LittleEndian.PutUint32(hdr[8:], version)
	parts := make([][]byte, 0, 2*len(secs)+2)
	parts = append(parts, hdr)
	crc := crc32.Update(0, crcTable, hdr)
	at := segHeaderSize
	var zeros [segAlign]byte
	table := make([]byte, 0, len(secs)*segTableEntry)
	for i := range secs {
		s := &secs[i]
		if pad := offs[i] - at; pad > 0 {
			parts = append(parts, zeros[:pad])
			crc = crc32.Update(crc, crcTable, zeros[:pad])
		}
		if s.kind == secTextIndex {
			s.b = tb.index(int64(textOff))
		}
		parts = append(parts, s.b)
		crc = crc32.Update(crc, crcTable, s.b)
		at = offs[i] + len(s.b)
		table = binary.LittleEndian.AppendUint32(table, s.kind)
		table = binary.LittleEndian.AppendUint32(table, 0)
		table = binary.LittleEndian.AppendUint64(table, uint64(offs[i]))
		table = binary.LittleEndian.AppendUint64(table, uint64(len(s.b)))
		table = binary.LittleEndian.AppendUint32(table, crc32.Checksum(s.b, crcTable))
		table = binary.LittleEndian.AppendUint32(table, 0)
	}
	tail := make([]byte, 0, len(table)+segFooterSize)
	tail = append(tail, table...)
	tail = binary.LittleEndian.AppendUint64(tail, uint64(at))
	tail = binary.LittleEndian.AppendUint32(tail, uint32(len(secs)))
	// Versions 3 and 4: the section table's own CRC32C, so that a reader holding
	// only some sections can check the table without the whole file.
	var tableCRC uint32
	if version >= segVersionText {
		tableCRC = crc32.Checksum(table, crcTable)
	}
	tail = binary.LittleEndian.AppendUint32(tail, tableCRC)
	tail = binary.LittleEndian.AppendUint32(tail, crc32.Update(crc, crcTable, tail))
	tail = binary.LittleEndian.AppendUint32(tail, 0)
	tail = append(tail, segEndMagic...)
	return append(parts, tail), nil
}

// warmSegment is an opened, immutable warm segment plus its mutable death
// column (tombstones). Rows are dense from 0.
type warmSegment struct {
	meta   SegmentMeta
	path   string
	dim    int
	metric Metric

	docs []*Document
	// hashes holds the version hashes of the rows that do not store one
	// (format version 5), computed on first use (Document.Hash).
	hashes []atomic.Pointer[[32]byte]
	birth  []uint64
	death  []atomic.Uint64 // epochLive until a tombstone ends the row
	// dead lists the rows with a finite death, in the order they died
	// (appended under the store's apply lock, read under deadMu).
	deadMu sync.RWMutex
	dead   []uint32
	// live caches the rows visible at the last epoch asked (liveRows).
	live liveCache
	// vecRows is the set of all HNSW ids (rows with a vector); vecRow maps
	// an HNSW id back to its row.
	vecRows *roaring.Bitmap
	vecRow  []uint32
	// metaIdx: for each indexed metadata key, value → HNSW ids of the
	// rows with that value (built at open from the doc store).
	metaIdx map[string]map[string]*roaring.Bitmap
	ids     map[string][]uint32
	index   *hnsw.Index // HNSW segments: nil when no row has a vector
	// indexedFrom is the id of the flat segment a deferred index build
	// rewrote into this one (deferred.go; 0: none, or not since Open).
	indexedFrom uint64
	// vecsFinite: every vector is finite (pendingIndex for "ivfpq"),
	// computed once.
	finiteOnce sync.Once
	vecsFinite bool
	// IVF-PQ and flat segments (format version 2): ivf is the opened
	// ivfpq section (nil for flat); vecs holds the vectors in hid order
	// (refine and exact scan; see openVectorArrays); nprobe and kfactor
	// are the store's IVFNprobe (0: nlist/8) and IVFKFactor.
	ivf       *ivfpq.Index
	vecs      []float32
	nprobe    int
	kfactor   int
	indexKind SegmentIndexType // "hnsw", "ivfpq", "flat", or "" without vectors
	idxBytes  int64            // bytes of the vector-index section
	lex       []byte           // BM25 section, or nil
	lexOff    int64
	lexSpan   SpanFetcher // opened lazily: makes ranges of lex present
	hid       []int32     // row → hnsw id, or -1

	// Format version 3 to 5 opened with a RangeFetcher: the file bytes, the
	// text blocks (loaded on demand, lazytext.go), their decoded size,
	// and textClosed, set under textMu when the file is released.
	data       []byte
	fetch      RangeFetcher
	textBlocks []*textBlock
	textRaw    int64
	textMu     sync.RWMutex
	textClosed bool

	release func() error // unmaps / frees the file bytes

	refs     atomic.Int64 // views holding the segment
	obsolete atomic.Bool  // removed from the manifest: delete at refs 0
	retired  atomic.Bool  // store closed: unmap (not delete) at refs 0
	onFree   func(*warmSegment)
	freeOnce sync.Once
}

// CorruptError.Kind of the tier's files (wal.KindRecordLog for the WAL).
const (
	kindSegment  = "segment"
	kindArchive  = "cold archive"
	kindManifest = "manifest"
)

// maxDocStoreBytes bounds a segment's decoded doc store (1 TiB): larger
// sizes are corruption, whatever the compressed section holds.
const maxDocStoreBytes = 1 << 40

func segCorrupt(path string, off int64, format string, args ...any) error {
	return base.Corruptf(kindSegment, path, off, format, args...)
}

func archiveCorrupt(path string, off int64, format string, args ...any) error {
	return base.Corruptf(kindArchive, path, off, format, args...)
}

// openSegment parses a segment container held in data (an mmap or a heap
// buffer, used in place by the HNSW section). Every structural field is
// checked: damage gives an error naming path and byte offset that matches
// ErrCorrupt, never a panic.
func openSegment(data []byte, path string, wantDim int, wantMetric Metric, indexed ...string) (*warmSegment, error) {
	return openSegmentFetch(data, path, wantDim, wantMetric, nil, indexed...)
}

// openSegmentFetch is openSegment for a file whose text section (format
// versions 3 to 5) may be absent until fetch makes it present (RangeFetcher);
// nil fetch: every byte is present and checked now.
func openSegmentFetch(data []byte, path string, wantDim int, wantMetric Metric, fetch RangeFetcher, indexed ...string) (*warmSegment, error) {
	n := int64(len(data))
	if n < segHeaderSize+segFooterSize {
		return nil, segCorrupt(path, 0, "file is %d bytes, shorter than header+footer", n)
	}
	if string(data[:8]) != segMagic {
		return nil, segCorrupt(path, 0, "bad magic %q", data[:8])
	}
	version := binary.LittleEndian.Uint32(data[8:])
	if version < segVersionHNSW || version > segFormatVersion {
		return nil, segCorrupt(path, 8, "unknown segment format version %d", version)
	}
	foot := data[n-segFooterSize:]
	if string(foot[24:]) != segEndMagic {
		return nil, segCorrupt(path, n-8, "bad footer magic")
	}
	// lazy: the text section may be absent; the table's own CRC32C (and
	// each other section's) stands for the whole-file CRC32C.
	lazy := fetch != nil && version >= segVersionText
	// lazyLex: the BM25 section's posting blobs may be absent too; its
	// bytes are checked by the fetcher, block by block, as they arrive.
	span, lazyLex := fetch.(SpanFetcher)
	lazyLex = lazyLex && lazy
	if !lazy {
		if got, want := crc32.Checksum(data[:n-16], crcTable), binary.LittleEndian.Uint32(foot[16:]); got != want {
			return nil, segCorrupt(path, n-16, "file CRC32C %08x, footer says %08x", got, want)
		}
	}
	tableOff := binary.LittleEndian.Uint64(foot[0:])
	nsec := uint64(binary.LittleEndian.Uint32(foot[8:]))
	tableEnd := uint64(n - segFooterSize)
	if tableOff < segHeaderSize || tableOff > tableEnd || (tableEnd-tableOff) != nsec*segTableEntry {
		return nil, segCorrupt(path, n-segFooterSize, "section table offset %d / count %d do not fit", tableOff, nsec)
	}
	if lazy {
		if got, want := crc32.Checksum(data[tableOff:tableEnd], crcTable), binary.LittleEndian.Uint32(foot[12:]); got != want {
			return nil, segCorrupt(path, int64(tableOff), "section table CRC32C %08x, footer says %08x", got, want)
		}
	}
	secs := map[uint32][]byte{}
	secOff := map[uint32]int64{}
	for i := uint64(0); i < nsec; i++ {
		e := data[tableOff+i*segTableEntry:]
		kind := binary.LittleEndian.Uint32(e)
		off := binary.LittleEndian.Uint64(e[8:])
		ln := binary.LittleEndian.Uint64(e[16:])
		at := int64(tableOff + i*segTableEntry)
		if off < segHeaderSize || off > tableOff || ln > tableOff-off {
			return nil, segCorrupt(path, at, "section %d [%d,+%d) out of bounds", kind, off, ln)
		}
		b := data[off : off+ln]
		if !(lazy && kind == secText) && !(lazyLex && kind == secBM25) && crc32.Checksum(b, crcTable) != binary.LittleEndian.Uint32(e[24:]) {
			return nil, segCorrupt(path, int64(off), "section %d CRC mismatch", kind)
		}
		if _, dup := secs[kind]; dup {
			return nil, segCorrupt(path, at, "duplicate section %d", kind)
		}
		secs[kind], secOff[kind] = b, int64(off)
	}
	for _, k := range []uint32{secMeta, secDocs} {
		if _, ok := secs[k]; !ok {
			return nil, segCorrupt(path, int64(tableOff), "missing section %d", k)
		}
	}
	// The version decides how the doc store reads: check it against the
	// sections first.
	_, hasIVF := secs[secIVFPQ]
	_, hasFlat := secs[secFlat]
	if (version == segVersionHNSW || version == segVersionTextRef) && (hasIVF || hasFlat) {
		return nil, segCorrupt(path, 8, "format version %d segment with an ivfpq or flat section", version)
	}
	md := &decoder{b: secs[secMeta]}
	dim := md.uvarint("dim")
	metric := Metric(md.byte1("metric"))
	rows := md.uvarint("rows")
	minE := md.uvarint("min epoch")
	maxE := md.uvarint("max epoch")
	rawLen := md.uvarint("doc store size")
	if md.err != nil {
		return nil, segCorrupt(path, secOff[secMeta], "meta: %v", md.err)
	}
	if int(dim) != wantDim || metric != wantMetric {
		return nil, segCorrupt(path, secOff[secMeta], "segment dim %d metric %v, store has dim %d metric %v", dim, metric, wantDim, wantMetric)
	}
	// No compression-ratio bound: zstd compresses near-identical rows far
	// beyond any fixed ratio. A damaged rawLen cannot force a large
	// allocation instead: the output buffer starts at most 64× the
	// compressed size and grows only with what actually decodes, the
	// decoder stops past max(rawLen, 32 MiB) (its window limit too), and
	// any other length is a size mismatch below.
	if rows > rawLen || rawLen > maxDocStoreBytes {
		return nil, segCorrupt(path, secOff[secMeta], "doc store size %d / rows %d implausible", rawLen, rows)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(max(rawLen+1, 32<<20)))
	if err != nil {
		return nil, fmt.Errorf("tier: zstd: %w", err)
	}
	raw, err := dec.DecodeAll(secs[secDocs], make([]byte, 0, min(rawLen, uint64(len(secs[secDocs]))*64+1024)))
	dec.Close()
	if err != nil {
		return nil, segCorrupt(path, secOff[secDocs], "doc store: %v", err)
	}
	if uint64(len(raw)) != rawLen {
		return nil, segCorrupt(path, secOff[secDocs], "doc store is %d bytes, meta says %d", len(raw), rawLen)
	}
	// raw is not written again: the documents' strings point into it.
	d := &decoder{b: raw, alias: true}
	if nr := d.uvarint("rows"); d.err == nil && nr != rows {
		return nil, segCorrupt(path, secOff[secDocs], "doc store has %d rows, meta says %d", nr, rows)
	}
	w := &warmSegment{path: path, dim: wantDim, metric: wantMetric,
		docs: make([]*Document, rows), birth: make([]uint64, rows), death: make([]atomic.Uint64, rows),
		ids: make(map[string][]uint32, rows), hid: make([]int32, rows), kfactor: 4}
	nvec := 0
	compact := version == segVersionCompact
	_, hasHNSW := secs[secHNSW]
	byRef := version == segVersionTextRef || compact && hasHNSW
	var refs []vecRef // versions 4 and 5: per row with a vector, its reference
	var refExcs []refExc
	var prevTS int64
	for r := uint64(0); r < rows && d.err == nil; r++ {
		w.birth[r] = d.uvarint("birth")
		doc := &Document{ID: d.str("id")}
		if !compact {
			d.docBody(doc)
		} else {
			d.docFields(doc)
			switch d.byte1("version hash code") {
			case 0:
				if w.hashes == nil {
					w.hashes = make([]atomic.Pointer[[32]byte], rows)
				}
				doc.derived = &w.hashes[r]
			case 1:
				copy(doc.VersionHash[:], d.bytes(32, "version hash"))
			default:
				d.fail("version hash code is neither 0 nor 1")
			}
			doc.UpdatedUnixNano = prevTS + d.varint("timestamp")
			prevTS = doc.UpdatedUnixNano
		}
		if d.err != nil {
			break
		}
		if byRef {
			if doc.Vector != nil {
				return nil, segCorrupt(path, secOff[secDocs], "row %d holds its vector in a format version %d doc store", r, version)
			}
			ref, ok := d.vectorRef(wantDim, wantMetric, compact, &refExcs)
			if d.err != nil {
				break
			}
			if ok {
				refs = append(refs, ref)
				doc.Vector = []float32{} // rebuilt from the hnsw section below
			}
		}
		if doc.Vector != nil && len(doc.Vector) != wantDim && !byRef {
			return nil, segCorrupt(path, secOff[secDocs], "row %d vector has %d dimensions", r, len(doc.Vector))
		}
		if w.birth[r] < minE || w.birth[r] > maxE {
			return nil, segCorrupt(path, secOff[secDocs], "row %d birth %d outside [%d,%d]", r, w.birth[r], minE, maxE)
		}
		w.docs[r] = doc
		w.death[r].Store(epochLive)
		w.ids[doc.ID] = append(w.ids[doc.ID], uint32(r))
		w.hid[r] = -1
		if doc.Vector != nil {
			w.hid[r] = int32(nvec)
			w.vecRow = append(w.vecRow, uint32(r))
			nvec++
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return nil, segCorrupt(path, secOff[secDocs], "doc store: %v", d.err)
	}
	tib, hasTextIndex := secs[secTextIndex]
	tb, hasText := secs[secText]
	if (version >= segVersionText) != hasTextIndex || hasTextIndex != hasText {
		return nil, segCorrupt(path, 8, "format version %d with text index/text sections present=%v/%v", version, hasTextIndex, hasText)
	}
	if hasText {
		for r, doc := range w.docs {
			if doc.Content != "" {
				return nil, segCorrupt(path, secOff[secDocs], "row %d has content in the doc store of a format version %d segment", r, version)
			}
		}
		w.data = data
		if lazy {
			w.fetch = fetch
		}
		if err := w.openText(tib, secOff[secTextIndex], secOff[secText], int64(len(tb))); err != nil {
			return nil, err
		}
		if !lazy {
			w.data = nil
		}
	}
	hb, hasIndex := secs[secHNSW]
	ib := secs[secIVFPQ]
	fb := secs[secFlat]
	nIdx := 0
	for _, has := range []bool{hasIndex, hasIVF, hasFlat} {
		if has {
			nIdx++
		}
	}
	if (nvec > 0) != (nIdx == 1) || nIdx > 1 {
		return nil, segCorrupt(path, int64(tableOff), "%d vectors but hnsw/ivfpq/flat sections present=%v/%v/%v", nvec, hasIndex, hasIVF, hasFlat)
	}
	if hasFlat {
		fd := &decoder{b: fb}
		if c := fd.uvarint("flat vectors"); fd.err != nil || len(fd.b) != 0 || c != uint64(nvec) {
			return nil, segCorrupt(path, secOff[secFlat], "flat section does not hold the vector count %d", nvec)
		}
		w.openVectorArrays()
		w.indexKind, w.idxBytes = segmentIndexFlat, int64(len(fb))
	}
	if hasIVF {
		w.openVectorArrays()
		if err := w.openIVF(ib, secOff[secIVFPQ], nvec); err != nil {
			return nil, err
		}
		w.indexKind, w.idxBytes = SegmentIndexIVFPQ, int64(len(ib))
	}
	if hasIndex {
		w.indexKind, w.idxBytes = SegmentIndexHNSW, int64(len(hb))
		ix, err := hnsw.Open(hb)
		if err != nil {
			var ce *hnsw.CorruptError
			if errors.As(err, &ce) {
				return nil, segCorrupt(path, secOff[secHNSW]+ce.Offset, "hnsw: %s", ce.Reason)
			}
			return nil, segCorrupt(path, secOff[secHNSW], "hnsw: %v", err)
		}
		if ix.Len() != nvec || ix.Options().Dim != wantDim || ix.Options().Metric != wantMetric {
			ix.Close()
			return nil, segCorrupt(path, secOff[secHNSW], "hnsw has %d vectors of dim %d metric %v, want %d of %d %v",
				ix.Len(), ix.Options().Dim, ix.Options().Metric, nvec, wantDim, wantMetric)
		}
		if byRef {
			// Rebuild the rows' vectors from the hnsw copies (vecref.go).
			slab := make([]float32, nvec*wantDim)
			for h, ref := range refs {
				v := slab[h*wantDim : (h+1)*wantDim : (h+1)*wantDim]
				u, err := ix.Vector(v[:0], uint32(h))
				if err != nil || len(u) != wantDim {
					ix.Close()
					return nil, segCorrupt(path, secOff[secHNSW], "hnsw vector %d: %v", h, err)
				}
				ref.rebuild(v, u, wantMetric, refExcs)
				w.docs[w.vecRow[h]].Vector = v
			}
		}
		w.index = ix
	}
	w.vecRows = roaring.New()
	w.vecRows.AddRange(0, uint64(nvec))
	if len(indexed) > 0 {
		w.metaIdx = make(map[string]map[string]*roaring.Bitmap, len(indexed))
		for _, key := range indexed {
			byVal := map[string]*roaring.Bitmap{}
			for h, r := range w.vecRow {
				if val, ok := w.docs[r].Metadata[key]; ok {
					bm := byVal[val]
					if bm == nil {
						bm = roaring.New()
						byVal[val] = bm
					}
					bm.Add(uint32(h))
				}
			}
			for _, bm := range byVal {
				bm.RunOptimize()
			}
			w.metaIdx[key] = byVal
		}
	}
	if lb, ok := secs[secBM25]; ok {
		w.lex, w.lexOff = lb, secOff[secBM25]
		if lazyLex {
			w.lexSpan = span
		}
	}
	w.meta = SegmentMeta{MinEpoch: minE, MaxEpoch: maxE, Rows: rows, SizeBytes: uint64(n)}
	return w, nil
}

// setDeath ends row r at e (it must be live). Callers serialise writes
// (the store's apply lock, or Open before the segment is shared).
func (w *warmSegment) setDeath(r uint32, e uint64) {
	w.deadMu.Lock()
	w.death[r].Store(e)
	w.dead = append(w.dead, r)
	w.deadMu.Unlock()
}

// wherePre returns the HNSW ids matching every indexed condition of where
// (nil when no condition is on an indexed key) and the conditions left
// for a per-document check.
func (w *warmSegment) wherePre(where map[string]string) (*roaring.Bitmap, map[string]string) {
	var pre *roaring.Bitmap
	var rest map[string]string
	for key, val := range where {
		byVal, ok := w.metaIdx[key]
		if !ok {
			if rest == nil {
				rest = map[string]string{}
			}
			rest[key] = val
			continue
		}
		bm := byVal[val]
		if bm == nil {
			return roaring.New(), nil
		}
		if pre == nil {
			pre = bm.Clone()
		} else {
			pre.And(bm)
		}
	}
	return pre, rest
}

func (w *warmSegment) visible(r uint32, e uint64) bool {
	return w.birth[r] <= e && e < w.death[r].Load()
}

// get returns the row of id visible at e.
func (w *warmSegment) get(id string, e uint64) (uint32, bool) {
	for _, r := range w.ids[id] {
		if w.visible(r, e) {
			return r, true
		}
	}
	return 0, false
}

// kill ends id's live row (if any) at e and reports whether one was live.
func (w *warmSegment) kill(id string, e uint64) bool {
	for _, r := range w.ids[id] {
		if w.death[r].Load() == epochLive {
			w.setDeath(r, e)
			return true
		}
	}
	return false
}

// deadRows counts rows dead at every epoch ≥ e.
func (w *warmSegment) deadRows(e uint64) int {
	n := 0
	for r := range w.death {
		if w.death[r].Load() <= e {
			n++
		}
	}
	return n
}

// search returns up to k hits among rows visible at e that pass filter.
// The visibility/filter check builds the HNSW Allow bitmap, so it is
// applied during graph traversal, never after the top-k is cut. When ctx
// is done before the search completes, it returns the hits found so far
// and ctx.Err(): the Allow bitmap is built looking at ctx every
// rowCheck rows, and the index search looks at it in its own loops.
func (w *warmSegment) search(ctx context.Context, q []float32, k, ef int, e uint64, filter func(*Document) bool) ([]Hit, error) {
	return w.searchPre(ctx, q, k, ef, e, nil, filter)
}

// rowCheck is how many rows the segment's per-row loops (visibility,
// filter) handle between two looks at the context.
const rowCheck = 512

// searchPre is search restricted to the HNSW ids in pre (nil: all).
func (w *warmSegment) searchPre(ctx context.Context, q []float32, k, ef int, e uint64, pre *roaring.Bitmap, filter func(*Document) bool) ([]Hit, error) {
	if (w.index == nil && w.vecs == nil) || len(w.vecRow) == 0 || k <= 0 {
		return nil, nil
	}
	done := ctx.Done()
	var allow *roaring.Bitmap
	base := w.vecRows
	if pre != nil {
		base = pre
	}
	if e >= w.meta.MaxEpoch {
		// Every row was born by e: the visible rows are all rows minus
		// those dead by e, found from the dead list in O(#dead). The dead
		// ids (and the ids filter rejects) are collected into one bitmap
		// and removed container-wise: a Remove per id on a run container
		// costs O(#runs) each.
		gone := roaring.New()
		w.deadMu.RLock()
		stopped := false
		for i, r := range w.dead {
			if i%rowCheck == 0 && cancel.Done(done) {
				stopped = true
				break
			}
			if w.hid[r] >= 0 && w.death[r].Load() <= e {
				gone.Add(uint32(w.hid[r]))
			}
		}
		w.deadMu.RUnlock()
		if stopped {
			return nil, ctx.Err()
		}
		if filter == nil && pre == nil && gone.IsEmpty() {
			// Nothing dead at e: no Allow bitmap needed.
			return w.searchAllow(ctx, q, k, ef, nil)
		}
		allow = roaring.AndNot(base, gone)
		if filter != nil {
			kept := roaring.New()
			it := allow.Iterator()
			for i := 0; it.HasNext(); i++ {
				if i%rowCheck == 0 && cancel.Done(done) {
					return nil, ctx.Err()
				}
				h := it.Next()
				if filter(w.docs[w.vecRow[h]]) {
					kept.Add(h)
				}
			}
			allow = kept
		}
	} else {
		// An old snapshot: check every row.
		allow = roaring.New()
		for r := range w.docs {
			if r%rowCheck == 0 && cancel.Done(done) {
				return nil, ctx.Err()
			}
			if w.hid[r] >= 0 && (pre == nil || pre.Contains(uint32(w.hid[r]))) &&
				w.visible(uint32(r), e) && (filter == nil || filter(w.docs[r])) {
				allow.Add(uint32(w.hid[r]))
			}
		}
	}
	if allow.IsEmpty() {
		return nil, nil
	}
	return w.searchAllow(ctx, q, k, ef, allow)
}

// searchRows is search restricted to rows (segment rows, not HNSW ids):
// the rows of rows that are visible at e and have a vector, with no
// per-row filter. It costs a container-wise AND with the cached live rows
// (liveRows) plus, when some row has no vector, one pass over rows
// mapping each to its HNSW id.
func (w *warmSegment) searchRows(ctx context.Context, q []float32, k, ef int, e uint64, rows *roaring.Bitmap) ([]Hit, error) {
	if (w.index == nil && w.vecs == nil) || len(w.vecRow) == 0 || k <= 0 || rows == nil || rows.IsEmpty() {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	allow := roaring.And(rows, w.liveRows(e))
	if len(w.vecRow) != len(w.docs) {
		// Some rows have no vector: HNSW ids are not rows.
		ids := roaring.New()
		it := allow.Iterator()
		for it.HasNext() {
			if r := it.Next(); int(r) < len(w.hid) && w.hid[r] >= 0 {
				ids.Add(uint32(w.hid[r]))
			}
		}
		allow = ids
	} else if !allow.IsEmpty() && int(allow.Maximum()) >= len(w.docs) {
		allow.RemoveRange(uint64(len(w.docs)), uint64(allow.Maximum())+1)
	}
	if allow.IsEmpty() {
		return nil, nil
	}
	return w.searchAllow(ctx, q, k, ef, allow)
}

func (w *warmSegment) searchAllow(ctx context.Context, q []float32, k, ef int, allow *roaring.Bitmap) ([]Hit, error) {
	if w.index == nil {
		return w.searchIVF(ctx, q, k, allow) // segivf.go
	}
	res, err := w.index.SearchContext(ctx, q, k, hnsw.SearchParams{EfSearch: max(ef, k), Allow: allow})
	var cerr error // ctx.Err() when the search was cut short
	if ctxErr(ctx, err) {
		cerr, err = err, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tier: search %s: %w", w.path, err)
	}
	hits := make([]Hit, 0, len(res))
	for _, r := range res {
		if r.Label >= uint64(len(w.docs)) {
			return nil, segCorrupt(w.path, 0, "hnsw label %d beyond %d rows", r.Label, len(w.docs))
		}
		d := r.Distance
		if w.metric == IP {
			d -= 1 // hnsw reports 1 − ⟨q,x⟩; the tier reports −⟨q,x⟩
		}
		hits = append(hits, Hit{Doc: w.docs[r.Label], Epoch: w.birth[r.Label], Distance: d})
	}
	return hits, cerr
}

func (w *warmSegment) ref() { w.refs.Add(1) }

func (w *warmSegment) unref() {
	if w.refs.Add(-1) == 0 && (w.obsolete.Load() || w.retired.Load()) {
		w.free()
	}
}

// free closes the segment and (via onFree) deletes its file.
func (w *warmSegment) free() {
	w.freeOnce.Do(func() {
		w.textMu.Lock()
		w.textClosed = true
		w.textMu.Unlock()
		if w.index != nil {
			w.index.Close()
		}
		if w.ivf != nil {
			w.ivf.Close()
		}
		if w.release != nil {
			w.release()
		}
		if w.onFree != nil {
			w.onFree(w)
		}
	})
}
