package tier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
	"github.com/stratasearch/strata/engine/bm25"
)

// Text blocks (segment format versions 3 to 5). The text section holds the
// documents' content in blocks of rowsPerBlock consecutive rows (the
// last block may hold fewer), each block one zstd frame of the rows'
// contents, each a uvarint length and its bytes. The text index section
// (fixed width, little endian) is
//
//	u32 rows | u32 rowsPerBlock | u32 blocks
//	blocks × { u64 file offset | u32 compressed length | u32 decoded length | u32 CRC32C of the compressed bytes }
//
// Block offsets are absolute file offsets inside the text section. The
// doc store of a version 3 or 4 segment stores every row with empty
// content; version 5 rows have no content field.

// textBlockBytes is the decoded text a block aims at: small enough that a
// query's hits fetch little, large enough for zstd to compress well.
var textBlockBytes = 16 << 10

// maxTextBlockBytes bounds one block's decoded size: larger is corruption.
const maxTextBlockBytes = 1 << 30

const textIndexHeader, textIndexEntry = 12, 20

// RangeFetcher makes byte ranges of segment files present before the
// tier reads them from the file's mapping. A Store with one opens format
// version 3 and 4 segments lazily: the whole-file CRC32C is not computed at
// open (the section table's own CRC32C and every section but the text
// section are checked), and a row's text block is fetched and decoded
// when Document.Text first asks for it. Used by readers over object
// storage, whose segment files hold only the other sections at open.
type RangeFetcher interface {
	// Fetch makes bytes [off, off+n) of the segment file at path present
	// in the file; their CRC32C (Castagnoli) must be crc. Safe for
	// concurrent use. A range already present must return at once.
	Fetch(path string, off, n int64, crc uint32) error
}

// SpanFetcher is a RangeFetcher that also makes any byte range of a
// segment file present, checked by the fetcher's own checksums (a
// reader over object storage checks each block against the manifest's
// CRC32Cs). A Store whose RangeFetcher is one also opens format version 3
// and 4 segments without their BM25 posting blobs (PostingsSection):
// the section's CRC32C is not computed at open, and a query's lists are
// fetched when first read (WarmSegment.LexicalFetch, bm25.OpenFetch).
type SpanFetcher interface {
	RangeFetcher
	// FetchSpan makes bytes [off, off+n) of the segment file at path
	// present. Safe for concurrent use; a range already present must
	// return at once.
	FetchSpan(path string, off, n int64) error
}

// lexFetcher is a segment's bm25.Fetcher: BM25 section offsets shifted
// to file offsets.
type lexFetcher struct {
	f    SpanFetcher
	path string
	base int64
}

func (l lexFetcher) Fetch(off, n int64) error { return l.f.FetchSpan(l.path, l.base+off, n) }

// Present reports whether the range is present, when the SpanFetcher can
// tell (SpanPresence); false otherwise.
func (l lexFetcher) Present(off, n int64) bool {
	sp, ok := l.f.(SpanPresence)
	return ok && sp.SpanPresent(l.path, l.base+off, n)
}

// SpanPresence is a SpanFetcher that can tell, without blocking or
// allocating, whether bytes [off, off+n) of the segment file at path
// are present; a query then starts no fetch for lists it already has.
type SpanPresence interface {
	SpanPresent(path string, off, n int64) bool
}

// PostingsSection returns the byte range of the BM25 posting blobs of a
// format version 3 to 5 segment file (b the whole file), the other part
// a reader may fetch on demand (SpanFetcher); ok is false for other files
// and versions, and for segments without a BM25 section. b is not
// checked beyond what locating the range needs.
func PostingsSection(b []byte) (off, n int64, ok bool) {
	so, sl, ok := section(b, secBM25)
	if !ok {
		return 0, 0, false
	}
	po, pn, ok := bm25.PostingsRange(b[so : so+sl])
	if !ok || pn <= 0 {
		return 0, 0, false
	}
	return so + po, pn, true
}

// section locates the section of kind in a format version 3 to 5 segment
// file b.
func section(b []byte, kind uint32) (off, n int64, ok bool) {
	size := int64(len(b))
	if size < segHeaderSize+segFooterSize || string(b[:8]) != segMagic ||
		!textVersion(binary.LittleEndian.Uint32(b[8:])) || string(b[size-8:]) != segEndMagic {
		return 0, 0, false
	}
	foot := b[size-segFooterSize:]
	tableOff := binary.LittleEndian.Uint64(foot)
	nsec := uint64(binary.LittleEndian.Uint32(foot[8:]))
	tableEnd := uint64(size - segFooterSize)
	if tableOff < segHeaderSize || tableOff > tableEnd || tableEnd-tableOff != nsec*segTableEntry {
		return 0, 0, false
	}
	for i := uint64(0); i < nsec; i++ {
		e := b[tableOff+i*segTableEntry:]
		so, sl := binary.LittleEndian.Uint64(e[8:]), binary.LittleEndian.Uint64(e[16:])
		if binary.LittleEndian.Uint32(e) == kind && so <= tableOff && sl <= tableOff-so {
			return int64(so), int64(sl), sl > 0
		}
	}
	return 0, 0, false
}

// textVersion reports whether segment format version v has the text
// sections (versions 3 to 5).
func textVersion(v uint32) bool { return v >= segVersionText && v <= segVersionCompact }

// TextSection returns the byte range of a format version 3 to 5 segment
// file's text section (b the whole file), the part a reader may fetch
// on demand; ok is false for other files and versions. b is not checked
// beyond what locating the section needs.
func TextSection(b []byte) (off, n int64, ok bool) { return section(b, secText) }

// textBuilder collects the rows' contents of a segment being built.
type textBuilder struct {
	rpb    int
	cur    []byte
	nrows  int
	out    []byte
	blocks []textBlockRef
	enc    *zstd.Encoder
}

type textBlockRef struct {
	off       int64 // within the text section while building; absolute once opened
	n, rawLen uint32
	crc       uint32
}

func newTextBuilder(rows []segRow) *textBuilder {
	var total int
	for _, r := range rows {
		total += len(r.doc.Content)
	}
	rpb := max(1, len(rows))
	if total > 0 {
		rpb = max(1, textBlockBytes/max(1, total/len(rows)))
	}
	return &textBuilder{rpb: rpb, enc: zstdEncoders.Get().(*zstd.Encoder)}
}

// zstdEncoders holds the encoders of the doc store and the text blocks
// (default level, one goroutine each): an encoder's history buffers are
// allocated once and kept, not per segment.
var zstdEncoders = sync.Pool{New: func() any {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		panic(err) // only for invalid options, and these are fixed
	}
	return e
}}

func (t *textBuilder) add(text string) {
	t.cur = putStr(t.cur, text)
	t.nrows++
	if t.nrows%t.rpb == 0 {
		t.flush()
	}
}

func (t *textBuilder) flush() {
	start := len(t.out)
	t.out = t.enc.EncodeAll(t.cur, t.out)
	b := t.out[start:]
	t.blocks = append(t.blocks, textBlockRef{off: int64(start), n: uint32(len(b)), rawLen: uint32(len(t.cur)),
		crc: crc32.Checksum(b, crcTable)})
	t.cur = t.cur[:0]
}

// finish returns the text section.
func (t *textBuilder) finish() []byte {
	if t.nrows%t.rpb != 0 {
		t.flush()
	}
	t.release()
	return t.out
}

// release returns the encoder to the pool if finish has not.
func (t *textBuilder) release() {
	if t.enc != nil {
		zstdEncoders.Put(t.enc)
		t.enc = nil
	}
}

// index returns the text index section for a text section at file offset
// textOff.
func (t *textBuilder) index(textOff int64) []byte {
	b := make([]byte, 0, textIndexHeader+textIndexEntry*len(t.blocks))
	b = binary.LittleEndian.AppendUint32(b, uint32(t.nrows))
	b = binary.LittleEndian.AppendUint32(b, uint32(t.rpb))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(t.blocks)))
	for _, r := range t.blocks {
		b = binary.LittleEndian.AppendUint64(b, uint64(textOff+r.off))
		b = binary.LittleEndian.AppendUint32(b, r.n)
		b = binary.LittleEndian.AppendUint32(b, r.rawLen)
		b = binary.LittleEndian.AppendUint32(b, r.crc)
	}
	return b
}

// parseTextIndex checks the text index of a segment with rows rows whose
// text section spans [textOff, textOff+textLen) of the file.
func parseTextIndex(b []byte, rows uint64, textOff, textLen int64) (rpb int, refs []textBlockRef, err error) {
	if len(b) < textIndexHeader {
		return 0, nil, errors.New("text index shorter than its header")
	}
	nr := uint64(binary.LittleEndian.Uint32(b))
	rp := uint64(binary.LittleEndian.Uint32(b[4:]))
	nb := uint64(binary.LittleEndian.Uint32(b[8:]))
	if nr != rows {
		return 0, nil, fmt.Errorf("text index has %d rows, meta says %d", nr, rows)
	}
	if rp == 0 || nb != (rows+rp-1)/rp {
		return 0, nil, fmt.Errorf("text index: %d blocks of %d rows do not fit %d rows", nb, rp, rows)
	}
	if uint64(len(b)) != textIndexHeader+nb*textIndexEntry {
		return 0, nil, fmt.Errorf("text index is %d bytes, %d blocks need %d", len(b), nb, textIndexHeader+nb*textIndexEntry)
	}
	refs = make([]textBlockRef, nb)
	for i := range refs {
		e := b[textIndexHeader+i*textIndexEntry:]
		r := textBlockRef{off: int64(binary.LittleEndian.Uint64(e)), n: binary.LittleEndian.Uint32(e[8:]),
			rawLen: binary.LittleEndian.Uint32(e[12:]), crc: binary.LittleEndian.Uint32(e[16:])}
		if r.off < textOff || r.off > textOff+textLen || int64(r.n) > textOff+textLen-r.off {
			return 0, nil, fmt.Errorf("text block %d [%d,+%d) outside the text section [%d,+%d)", i, r.off, r.n, textOff, textLen)
		}
		if r.rawLen > maxTextBlockBytes {
			return 0, nil, fmt.Errorf("text block %d decodes to %d bytes", i, r.rawLen)
		}
		refs[i] = r
	}
	return int(rp), refs, nil
}

// textBlock is one text block of an opened segment: its rows' contents
// once loaded.
type textBlock struct {
	seg   *warmSegment
	idx   int
	ref   textBlockRef
	rows  int // rows in the block
	mu    sync.Mutex
	done  atomic.Bool
	texts []string
}

var zstdDecoders = sync.Pool{New: func() any {
	d, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxTextBlockBytes+1))
	return d
}}

// decodeTextBlock decodes block bytes b (already checked against their
// CRC) of want rows; the strings alias one new buffer.
func decodeTextBlock(b []byte, ref textBlockRef, want int) ([]string, error) {
	dec := zstdDecoders.Get().(*zstd.Decoder)
	raw, err := dec.DecodeAll(b, make([]byte, 0, ref.rawLen))
	zstdDecoders.Put(dec)
	if err != nil {
		return nil, err
	}
	if uint64(len(raw)) != uint64(ref.rawLen) {
		return nil, fmt.Errorf("decodes to %d bytes, index says %d", len(raw), ref.rawLen)
	}
	d := &decoder{b: raw, alias: true}
	texts := make([]string, want)
	for i := range texts {
		texts[i] = d.str("content")
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return nil, d.err
	}
	return texts, nil
}

// load fetches (through the store's RangeFetcher), checks and decodes
// the block. A failed load is retried by the next call.
func (b *textBlock) load() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done.Load() {
		return nil
	}
	w := b.seg
	w.textMu.RLock()
	defer w.textMu.RUnlock()
	if w.textClosed {
		return fmt.Errorf("tier: segment %s is closed", w.path)
	}
	off, n := b.ref.off, int64(b.ref.n)
	if w.fetch != nil {
		if err := w.fetch.Fetch(w.path, off, n, b.ref.crc); err != nil {
			return fmt.Errorf("tier: segment %s text block %d: %w", w.path, b.idx, err)
		}
	}
	raw := w.data[off : off+n]
	if crc32.Checksum(raw, crcTable) != b.ref.crc {
		return segCorrupt(w.path, off, "text block %d CRC mismatch", b.idx)
	}
	texts, err := decodeTextBlock(raw, b.ref, b.rows)
	if err != nil {
		return segCorrupt(w.path, off, "text block %d: %v", b.idx, err)
	}
	b.texts = texts
	b.done.Store(true)
	return nil
}

// Text returns the document's content. A row of a segment opened with a
// RangeFetcher has its content loaded on the first call (for its whole
// text block, which the fetcher may download): errors are the fetcher's,
// or a *base.CorruptError naming the segment and the block's offset.
// Content holds the text of every other document (and stays empty for
// lazily loaded rows).
func (d *Document) Text() (string, error) {
	b := d.lazy
	if b == nil {
		return d.Content, nil
	}
	if !b.done.Load() {
		if err := b.load(); err != nil {
			return "", err
		}
	}
	return b.texts[d.lazyRow], nil
}

// LoadTexts loads the content of docs, their distinct unloaded text
// blocks in parallel (at most 8 at a time), and returns the first error.
func LoadTexts(docs []*Document) error {
	var todo []*textBlock
	seen := map[*textBlock]bool{}
	for _, d := range docs {
		if d == nil {
			continue
		}
		if b := d.lazy; b != nil && !b.done.Load() && !seen[b] {
			seen[b] = true
			todo = append(todo, b)
		}
	}
	switch len(todo) {
	case 0:
		return nil
	case 1:
		return todo[0].load()
	}
	errs := make([]error, len(todo))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, b := range todo {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = b.load()
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// openText sets up the text blocks of a version 3 to 5 segment: with a
// fetcher each row's document points at its block (loaded on demand);
// without, every block is checked and decoded now into Content.
func (w *warmSegment) openText(ib []byte, ibOff int64, textOff, textLen int64) error {
	rows := uint64(len(w.docs))
	rpb, refs, err := parseTextIndex(ib, rows, textOff, textLen)
	if err != nil {
		return segCorrupt(w.path, ibOff, "%v", err)
	}
	w.textBlocks = make([]*textBlock, len(refs))
	for i, ref := range refs {
		nrows := min(rpb, int(rows)-i*rpb)
		b := &textBlock{seg: w, idx: i, ref: ref, rows: nrows}
		w.textBlocks[i] = b
		w.textRaw += int64(ref.rawLen)
		if w.fetch == nil {
			raw := w.data[ref.off : ref.off+int64(ref.n)]
			if crc32.Checksum(raw, crcTable) != ref.crc {
				return segCorrupt(w.path, ref.off, "text block %d CRC mismatch", i)
			}
			texts, err := decodeTextBlock(raw, ref, nrows)
			if err != nil {
				return segCorrupt(w.path, ref.off, "text block %d: %v", i, err)
			}
			for j, t := range texts {
				w.docs[i*rpb+j].Content = t
			}
			continue
		}
		for j := 0; j < nrows; j++ {
			d := w.docs[i*rpb+j]
			d.lazy, d.lazyRow = b, int32(j)
		}
	}
	if w.fetch == nil {
		w.textBlocks = nil
	}
	return nil
}
