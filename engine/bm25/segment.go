package bm25

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/RoaringBitmap/roaring/v2"
	"hash/crc32"
	"hash/maphash"
	"io"
	"math"
	"math/bits"
	"slices"
	"sort"
	"sync/atomic"
)

const (
	segMagic    = "STRBM25\x00"
	footerMagic = "SBMF"
	// segVersion is the format written by default: 4 codes a list of at
	// most BlockSize postings as one partitioned Elias-Fano partition
	// with no block metadata (its record holds it) and a longer list as
	// one Elias-Fano sequence (ef.go) with block metadata; a list of one
	// posting is its positions alone (its record holds its doc and tf).
	// Readers also open version 1 (every list one Elias-Fano sequence),
	// version 2 (every list partitioned Elias-Fano, pef.go) and version 3
	// (version 4 without the one-posting rule and flagNoExtIDs).
	segVersion     = 4
	segVersionMin  = 1
	headerBytes    = 16
	footerBytes    = 64
	termRecBytes   = 32
	blockMetaBytes = 20
	// BlockSize is the number of postings per term-frequency / block-max
	// block.
	BlockSize = 128

	flagPositions = 1
	// flagPacked (format version 3): the |D| array and the dictionary
	// offsets are packed arrays (packed.go) instead of u32 arrays.
	flagPacked = 2
	// flagNoExtIDs (format version 4): the docs section holds no external
	// ids; the opener supplies them (OpenOptions.ExtIDs).
	flagNoExtIDs = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// segWriter accumulates a segment in memory. Documents first, then terms in
// strictly increasing byte order.
type segWriter struct {
	version   uint32 // format written: segVersion, 2 (Options.PartitionedEF), or 1 (tests of old files)
	positions bool
	unpacked  bool // version 3 without flagPacked (tests of older files)
	noExt     bool // write flagNoExtIDs (version >= 4 only; see omitsExt)
	docLens   []uint32
	ext       []uint64
	sumDL     uint64
	dictOffs  []uint32
	dict      []byte
	recs      []termRec
	post      []byte
	last      []byte
	nterms    int
	scratch   []uint32
}

func newSegWriter(positions bool) *segWriter {
	return &segWriter{version: segVersion, positions: positions, dictOffs: []uint32{0}}
}

func (w *segWriter) addDoc(ext uint64, length uint32) {
	w.docLens = append(w.docLens, length)
	w.ext = append(w.ext, ext)
	w.sumDL += uint64(length)
}

// reserve sizes the writer's term lists for terms (in the order they will
// be added) so that addTerm does not grow them step by step: the
// dictionary and its offsets exactly, the records exactly, and the
// postings by an estimate (about 1.5 bytes a posting and 1 a position
// for text; a list beyond it grows as append does).
func (w *segWriter) reserve(terms []string, lists map[string]*memPosting) {
	dict, postings, positions := 0, 0, 0
	for _, t := range terms {
		dict += len(t)
		p := lists[t]
		postings += len(p.docs)
		if w.positions {
			positions += p.positions()
		}
	}
	w.dict = slices.Grow(w.dict, dict)
	w.dictOffs = slices.Grow(w.dictOffs, len(terms))
	w.recs = slices.Grow(w.recs, len(terms))
	w.post = slices.Grow(w.post, postings+postings/2+positions+16*len(terms))
}

// addTerm adds one term's postings: docs strictly increasing local ids,
// tfs[i] >= 1, and (when positions are kept) pos holding tfs[i] strictly
// increasing positions per doc, concatenated.
func (w *segWriter) addTerm(term []byte, docs, tfs, pos []uint32) error {
	if w.nterms > 0 && bytes.Compare(term, w.last) <= 0 {
		return fmt.Errorf("bm25: terms out of order: %q after %q", term, w.last)
	}
	if len(docs) == 0 || len(docs) != len(tfs) {
		return fmt.Errorf("bm25: term %q: %d docs, %d tfs", term, len(docs), len(tfs))
	}
	if uint64(len(w.dict))+uint64(len(term)) > math.MaxUint32 {
		return fmt.Errorf("bm25: dictionary exceeds 4 GiB")
	}
	w.last = append(w.last[:0], term...)
	w.nterms++
	w.dict = append(w.dict, term...)
	w.dictOffs = append(w.dictOffs, uint32(len(w.dict)))

	// compact: a version-3 list of one block, whose block metadata the
	// record carries (its lastDoc field; tf block right after the doc
	// ids; positions right after the tf block).
	// single: a version-4 list of one posting, which stores only its
	// positions (its doc and tf are the record's lastDoc and maxTF).
	compact := w.version >= 3 && len(docs) <= BlockSize
	single := w.version >= 4 && len(docs) == 1
	partitioned := w.version == 2 || compact
	if !partitioned {
		for len(w.post)%8 != 0 {
			w.post = append(w.post, 0)
		}
	}
	start := len(w.post)
	var err error
	if !partitioned {
		w.post, err = appendEF(w.post, docs, uint32(len(w.docLens)))
	} else {
		if docs[len(docs)-1] >= uint32(len(w.docLens)) {
			return fmt.Errorf("bm25: term %q: doc %d out of range", term, docs[len(docs)-1])
		}
		w.post, err = appendPEF(w.post, docs, w.version >= 4)
	}
	if err != nil {
		return fmt.Errorf("bm25: term %q: %w", term, err)
	}
	efLen := len(w.post) - start
	nb := (len(docs) + BlockSize - 1) / BlockSize
	metaAt := len(w.post)
	if !compact {
		w.post = append(w.post, make([]byte, nb*blockMetaBytes)...)
	}
	var termMaxTF, termMinDL uint32 = 0, math.MaxUint32
	for b := 0; b < nb; b++ {
		lo, hi := b*BlockSize, min((b+1)*BlockSize, len(docs))
		var maxTF, minDL uint32 = 0, math.MaxUint32
		for i := lo; i < hi; i++ {
			if tfs[i] == 0 {
				return fmt.Errorf("bm25: term %q: zero tf", term)
			}
			maxTF = max(maxTF, tfs[i])
			minDL = min(minDL, w.docLens[docs[i]])
		}
		termMaxTF, termMinDL = max(termMaxTF, maxTF), min(termMinDL, minDL)
		if !compact {
			m := w.post[metaAt+b*blockMetaBytes:]
			binary.LittleEndian.PutUint32(m[0:], docs[hi-1])
			binary.LittleEndian.PutUint32(m[4:], maxTF)
			binary.LittleEndian.PutUint32(m[8:], minDL)
			binary.LittleEndian.PutUint32(m[12:], uint32(len(w.post)-start))
		}
		if single {
			continue
		}
		w.scratch = w.scratch[:0]
		for i := lo; i < hi; i++ {
			w.scratch = append(w.scratch, tfs[i]-1)
		}
		w.post = appendPacked(w.post, w.scratch)
	}
	if w.positions {
		k := 0
		for b := 0; b < nb; b++ {
			lo, hi := b*BlockSize, min((b+1)*BlockSize, len(docs))
			if !compact {
				m := w.post[metaAt+b*blockMetaBytes:]
				binary.LittleEndian.PutUint32(m[16:], uint32(len(w.post)-start))
			}
			for i := lo; i < hi; i++ {
				prev := uint32(0)
				for j := uint32(0); j < tfs[i]; j++ {
					if k >= len(pos) {
						return fmt.Errorf("bm25: term %q: positions short", term)
					}
					p := pos[k]
					k++
					if j > 0 && p <= prev {
						return fmt.Errorf("bm25: term %q: positions not increasing", term)
					}
					w.post = binary.AppendUvarint(w.post, uint64(p-prev))
					prev = p
				}
			}
		}
		if k != len(pos) {
			return fmt.Errorf("bm25: term %q: %d positions for %d occurrences", term, len(pos), k)
		}
	}
	if uint64(len(w.post)-start) > math.MaxUint32 {
		return fmt.Errorf("bm25: term %q: postings exceed 4 GiB", term)
	}
	r := termRec{off: uint64(start), blobLen: uint32(len(w.post) - start), df: uint32(len(docs)),
		maxTF: termMaxTF, minDL: termMinDL, efLen: uint32(efLen), nb: uint32(nb)}
	if w.version >= 3 {
		r.last = docs[len(docs)-1]
	}
	w.recs = append(w.recs, r)
	return nil
}

// recFields is the number of fields of a version-3 term record, packed in
// this order: blob offset, blob length, df, maxTF, minDL, efLen, lastDoc.
const recFields = 7

// recFieldMax is each field's largest width in bits.
var recFieldMax = [recFields]uint8{64, 32, 32, 32, 32, 32, 32}

func (r termRec) fields() [recFields]uint64 {
	return [recFields]uint64{r.off, uint64(r.blobLen), uint64(r.df), uint64(r.maxTF), uint64(r.minDL), uint64(r.efLen), uint64(r.last)}
}

// recWidths returns the bits each field of recs needs (its largest value's
// length) and their sum.
func recWidths(recs []termRec) (w [recFields]uint8, sum uint64) {
	var or [recFields]uint64
	for _, r := range recs {
		f := r.fields()
		for k := range f {
			or[k] |= f[k]
		}
	}
	for k := range or {
		w[k] = uint8(bits.Len64(or[k]))
		sum += uint64(w[k])
	}
	return w, sum
}

// termsBytes returns the size of the terms section: version 3 packs n
// records of recBits bits after an 8-byte width header, padded to 8
// bytes; earlier versions store termRecBytes per record.
func termsBytes(version uint32, n, recBits uint64) uint64 {
	if version < 3 {
		return termRecBytes * n
	}
	return 8 + (n*recBits+63)/64*8
}

// appendTerms appends the terms section.
func (w *segWriter) appendTerms(dst []byte) []byte {
	if w.version < 3 {
		for _, r := range w.recs {
			var rec [termRecBytes]byte
			binary.LittleEndian.PutUint64(rec[0:], r.off)
			binary.LittleEndian.PutUint32(rec[8:], r.blobLen)
			binary.LittleEndian.PutUint32(rec[12:], r.df)
			binary.LittleEndian.PutUint32(rec[16:], r.maxTF)
			binary.LittleEndian.PutUint32(rec[20:], r.minDL)
			binary.LittleEndian.PutUint32(rec[24:], r.efLen)
			binary.LittleEndian.PutUint32(rec[28:], r.nb)
			dst = append(dst, rec[:]...)
		}
		return dst
	}
	widths, recBits := recWidths(w.recs)
	dst = append(dst, widths[:]...)
	dst = append(dst, 0)
	at := len(dst)
	dst = append(dst, make([]byte, termsBytes(3, uint64(len(w.recs)), recBits)-8)...)
	b := dst[at:]
	bit := uint64(0)
	for _, r := range w.recs {
		f := r.fields()
		for k, v := range f {
			putBitsWide(b, bit, v, uint(widths[k]))
			bit += uint64(widths[k])
		}
	}
	return dst
}

// putBitsWide is putBits for widths up to 64.
func putBitsWide(b []byte, off, v uint64, width uint) {
	if width > 32 {
		putBits(b, off, v&(1<<32-1), 32)
		off, v, width = off+32, v>>32, width-32
	}
	putBits(b, off, v, width)
}

// getBitsWide is getBits for widths up to 64.
func getBitsWide(b []byte, off uint64, width uint) uint64 {
	if width > 32 {
		return getBits(b, off, 32) | getBits(b, off+32, width-32)<<32
	}
	return getBits(b, off, width)
}

// appendPacked appends a width byte and vals bit-packed LSB-first at that
// width (0..32 bits).
func appendPacked(dst []byte, vals []uint32) []byte {
	var or uint32
	for _, v := range vals {
		or |= v
	}
	width := 0
	for or>>width != 0 {
		width++
	}
	dst = append(dst, byte(width))
	if width == 0 {
		return dst
	}
	var acc uint64
	nbits := 0
	for _, v := range vals {
		acc |= uint64(v) << nbits
		nbits += width
		for nbits >= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
			nbits -= 8
		}
	}
	if nbits > 0 {
		dst = append(dst, byte(acc))
	}
	return dst
}

// unpack decodes n values of the given width from b into out; ok is false if
// b is too short.
func unpack(b []byte, width, n int, out []uint32) bool {
	if width == 0 {
		for i := 0; i < n; i++ {
			out[i] = 0
		}
		return true
	}
	if (n*width+7)/8 > len(b) {
		return false
	}
	var acc uint64
	nbits := 0
	k := 0
	mask := uint64(1)<<width - 1
	for i := 0; i < n; i++ {
		for nbits < width {
			acc |= uint64(b[k]) << nbits
			k++
			nbits += 8
		}
		out[i] = uint32(acc & mask)
		acc >>= width
		nbits -= width
	}
	return true
}

// writeTo writes the finished segment (header, sections, footer).
func (w *segWriter) writeTo(out io.Writer) (int64, error) {
	n, err := out.Write(w.appendTo(nil))
	return int64(n), err
}

// packed reports whether w writes flagPacked.
func (w *segWriter) packed() bool { return w.version >= 3 && !w.unpacked }

// omitsExt reports whether w writes flagNoExtIDs (no external ids).
func (w *segWriter) omitsExt() bool { return w.noExt && w.version >= 4 }

// extBytes is the size of the external id array w writes.
func (w *segWriter) extBytes() int {
	if w.omitsExt() {
		return 0
	}
	return 8 * len(w.ext)
}

// size returns the number of bytes appendTo appends.
func (w *segWriter) size() int {
	pad8 := func(n int) int { return (n + 7) &^ 7 }
	var n int
	if w.packed() {
		n = headerBytes + packedBytes(len(w.docLens), packedWidth(w.docLens)) + w.extBytes()
		n += packedBytes(len(w.dictOffs), packedWidth(w.dictOffs)) + len(w.dict)
	} else {
		n = headerBytes + 4*len(w.docLens)
		n = pad8(n) + w.extBytes()
		n += 4*len(w.dictOffs) + len(w.dict)
	}
	_, recBits := recWidths(w.recs)
	n = pad8(n) + int(termsBytes(w.version, uint64(len(w.recs)), recBits)) + len(w.post)
	return pad8(n) + footerBytes
}

// appendTo appends the segment file to dst, growing it once.
func (w *segWriter) appendTo(dst []byte) []byte {
	base := len(dst)
	dst = slices.Grow(dst, w.size())
	pad := func() {
		for (len(dst)-base)%8 != 0 {
			dst = append(dst, 0)
		}
	}
	var hdr [headerBytes]byte
	copy(hdr[:], segMagic)
	binary.LittleEndian.PutUint32(hdr[8:], w.version)
	var flags uint32
	if w.positions {
		flags |= flagPositions
	}
	if w.packed() {
		flags |= flagPacked
	}
	if w.omitsExt() {
		flags |= flagNoExtIDs
	}
	binary.LittleEndian.PutUint32(hdr[12:], flags)
	dst = append(dst, hdr[:]...)
	docsOff := len(dst) - base
	if w.packed() {
		dst = appendPackedArray(dst, w.docLens, packedWidth(w.docLens))
	} else {
		for _, l := range w.docLens {
			dst = binary.LittleEndian.AppendUint32(dst, l)
		}
		pad()
	}
	if !w.omitsExt() {
		for _, e := range w.ext {
			dst = binary.LittleEndian.AppendUint64(dst, e)
		}
	}
	dictOff := len(dst) - base
	if w.packed() {
		dst = appendPackedArray(dst, w.dictOffs, packedWidth(w.dictOffs))
	} else {
		for _, o := range w.dictOffs {
			dst = binary.LittleEndian.AppendUint32(dst, o)
		}
	}
	dst = append(dst, w.dict...)
	pad()
	termsOff := len(dst) - base
	dst = w.appendTerms(dst)
	postOff := len(dst) - base
	dst = append(dst, w.post...)
	pad()
	var f [footerBytes]byte
	binary.LittleEndian.PutUint64(f[0:], uint64(docsOff))
	binary.LittleEndian.PutUint64(f[8:], uint64(dictOff))
	binary.LittleEndian.PutUint64(f[16:], uint64(termsOff))
	binary.LittleEndian.PutUint64(f[24:], uint64(postOff))
	binary.LittleEndian.PutUint64(f[32:], w.sumDL)
	binary.LittleEndian.PutUint32(f[40:], uint32(len(w.docLens)))
	binary.LittleEndian.PutUint32(f[44:], uint32(w.nterms))
	binary.LittleEndian.PutUint32(f[48:], uint32(len(w.dict)))
	binary.LittleEndian.PutUint32(f[52:], w.version)
	dst = append(dst, f[:56]...)
	crc := crc32.Checksum(dst[base:], castagnoli)
	binary.LittleEndian.PutUint32(f[56:], crc)
	copy(f[60:], footerMagic)
	return append(dst, f[56:]...)
}

// Segment is an immutable, opened BM25 segment. It reads its []byte in
// place (the bytes may be an mmap) and is safe for concurrent use.
type Segment struct {
	path      string
	data      []byte
	version   uint32
	positions bool
	numDocs   int
	numTerms  int
	sumDL     uint64
	// lens holds numDocs lengths and dictOffs numTerms+1 term end
	// offsets, each read by packedArrayGet at lenW / offW bits (packed
	// arrays with flagPacked, else u32 arrays read at width 32); both
	// slices extend at least 8 bytes past their last value.
	lens []byte
	lenW uint8
	ext  []byte // numDocs uint64; empty with flagNoExtIDs
	// extIDs holds the external ids of a segment without them in the
	// file (flagNoExtIDs), as given to OpenWith; nil if none were given.
	extIDs   []uint64
	noExt    bool // flagNoExtIDs
	dictOffs []byte
	offW     uint8
	dict     []byte
	packed   bool
	terms    []byte // numTerms records (version 3: packed, recW bits each field)
	recW     [recFields]uint8
	recBits  uint64
	post     []byte
	postOff  int64

	// norms caches one table of BM25 length normalisations (see
	// normTable), shared by concurrent queries; replaced, never mutated.
	norms atomic.Pointer[normTable]
	// thash is the dictionary's hash index (termIndex), built after T/16
	// lookups and never changed.
	thash atomic.Pointer[termHash]
	// lookups counts binary-searched lookups until thash is built.
	lookups atomic.Int64

	// fetch, for a segment opened with OpenFetch, makes posting bytes
	// present before they are read; have marks the terms whose blob is
	// known present (bit i of word i/64).
	fetch Fetcher
	have  []atomic.Uint64

	// impacts caches the summaries of long lists (impacts.go), built by
	// the first pruned query of each; noImpacts turns them off for a
	// Builder's short-lived segment.
	impacts   impactCache
	noImpacts bool
}

// Fetcher makes byte ranges of a segment's bytes present before the
// segment reads them: a reader over object storage whose segment file
// holds the header, document table, dictionary and term records at open
// but not the posting blobs. Fetch makes data[off:off+n] present (off,
// n in the coordinates of the bytes given to OpenFetch), checked by the
// fetcher's own checksums; it is safe for concurrent use and returns at
// once for a range already present. Its errors fail the query that
// needed the range.
type Fetcher interface {
	Fetch(off, n int64) error
}

// PresenceFetcher is a Fetcher that can also tell, without blocking or
// allocating, whether a range is present already: a query then checks
// its lists in place and starts no fetch for them.
type PresenceFetcher interface {
	Fetcher
	Present(off, n int64) bool
}

// PostingsRange returns the byte range of the posting blobs in the
// segment bytes b (footer's postings offset to the footer), the part a
// reader may leave absent until queries need it (OpenFetch); ok is false
// when b's footer does not locate it. b is not checked beyond that.
func PostingsRange(b []byte) (off, n int64, ok bool) {
	if len(b) < headerBytes+footerBytes || string(b[:8]) != segMagic {
		return 0, 0, false
	}
	fo := len(b) - footerBytes
	f := b[fo:]
	if string(f[60:]) != footerMagic {
		return 0, 0, false
	}
	postOff := binary.LittleEndian.Uint64(f[24:])
	if postOff < headerBytes || postOff > uint64(fo) {
		return 0, 0, false
	}
	return int64(postOff), int64(fo) - int64(postOff), true
}

// OpenFetch is Open for bytes whose posting blobs (PostingsRange) may be
// absent: fetch makes a term's blob present before it is first read.
// The CRC32C footer, which covers the blobs, is not computed; the caller
// vouches for the integrity of every byte it makes present (a reader
// over object storage checks each against the object's block
// checksums). Every other check of Open is made.
func OpenFetch(data []byte, path string, fetch Fetcher) (*Segment, error) {
	return OpenWith(data, path, OpenOptions{Fetch: fetch})
}

// OpenOptions are the optional inputs of OpenWith.
type OpenOptions struct {
	// ExtIDs are the external ids of a segment file that stores none
	// (written with Options.OmitExtIDs or MergeOptions.OmitExtIDs;
	// StoresExtIDs false): ExtIDs[d] is local document d's, and
	// len(ExtIDs) must be NumDocs. It is not copied. Ignored for a file
	// that stores its own. A segment without external ids opens (for
	// Merge with OmitExtIDs, Inspect and Verify), but searching it
	// returns an error and ExtID returns 0.
	ExtIDs []uint64
	// Fetch, if non-nil, is as in OpenFetch.
	Fetch Fetcher
}

// OpenWith is Open with the options o: external ids for a file that
// stores none, and a Fetcher (OpenFetch). Errors: as Open's, and a
// length of o.ExtIDs other than the segment's document count.
func OpenWith(data []byte, path string, o OpenOptions) (*Segment, error) {
	s, err := open(data, path, o.Fetch == nil)
	if err != nil {
		return nil, err
	}
	if s.noExt && o.ExtIDs != nil {
		if len(o.ExtIDs) != s.numDocs {
			return nil, fmt.Errorf("%w: bm25: %s: %d external ids for %d documents", ErrInvalidOptions, path, len(o.ExtIDs), s.numDocs)
		}
		s.extIDs = o.ExtIDs
	}
	if o.Fetch != nil {
		s.fetch = o.Fetch
		s.have = make([]atomic.Uint64, (s.numTerms+63)/64)
	}
	return s, nil
}

// StoresExtIDs reports whether the segment file holds its documents'
// external ids (false: flagNoExtIDs; OpenOptions.ExtIDs).
func (s *Segment) StoresExtIDs() bool { return !s.noExt }

// missingExt reports whether the segment has no external ids at all: a
// file without them opened without OpenOptions.ExtIDs.
func (s *Segment) missingExt() bool { return s.noExt && s.extIDs == nil }

// need makes term i's blob (record r) present, for a segment opened with
// a Fetcher; a no-op otherwise.
func (s *Segment) need(i int, r termRec) error {
	if s.fetch == nil || r.blobLen == 0 {
		return nil
	}
	w, bit := &s.have[i>>6], uint64(1)<<(i&63)
	if w.Load()&bit != 0 {
		return nil
	}
	if s.hasRange(i, r) {
		return nil
	}
	if err := s.fetch.Fetch(s.postOff+int64(r.off), int64(r.blobLen)); err != nil {
		return fmt.Errorf("bm25: %s: postings of term %d at byte offset %d: %w", s.path, i, s.postOff+int64(r.off), err)
	}
	w.Or(bit)
	return nil
}

// hasRange asks a PresenceFetcher whether term i's blob (record r) is
// present, and remembers it when it is.
func (s *Segment) hasRange(i int, r termRec) bool {
	pf, ok := s.fetch.(PresenceFetcher)
	if !ok || !pf.Present(s.postOff+int64(r.off), int64(r.blobLen)) {
		return false
	}
	s.have[i>>6].Or(uint64(1) << (i & 63))
	return true
}

// present reports whether term i's blob is known present (always, for a
// segment without a Fetcher).
func (s *Segment) present(i int) bool {
	return s.fetch == nil || s.have[i>>6].Load()&(uint64(1)<<(i&63)) != 0
}

// Open validates data as a segment and returns it. path names the bytes in
// errors. It checks magic, version, the CRC32C footer, every section's
// bounds, dictionary order and every term record's ranges (O(len(data)));
// posting contents are bounds-checked when read and fully by Verify. Errors
// satisfy errors.Is(err, ErrCorrupt) and carry the byte offset.
func Open(data []byte, path string) (*Segment, error) { return open(data, path, true) }

func open(data []byte, path string, checkCRC bool) (*Segment, error) {
	if len(data) < headerBytes+footerBytes {
		return nil, corruptf(path, 0, "file of %d bytes is shorter than header+footer", len(data))
	}
	if string(data[:8]) != segMagic {
		return nil, corruptf(path, 0, "bad magic %q", data[:8])
	}
	version := binary.LittleEndian.Uint32(data[8:])
	if version < segVersionMin || version > segVersion {
		if version > segVersion {
			return nil, corruptf(path, 8, "format version %d is newer than this reader (%d)", version, segVersion)
		}
		return nil, corruptf(path, 8, "unknown format version %d", version)
	}
	flags := binary.LittleEndian.Uint32(data[12:])
	if flags&^(flagPositions|flagPacked|flagNoExtIDs) != 0 || flags&flagPacked != 0 && version < 3 || flags&flagNoExtIDs != 0 && version < 4 {
		return nil, corruptf(path, 12, "unknown flags %#x for format version %d", flags, version)
	}
	fo := len(data) - footerBytes
	f := data[fo:]
	if string(f[60:]) != footerMagic {
		return nil, corruptf(path, int64(fo+60), "bad footer magic %q", f[60:])
	}
	if checkCRC {
		if got, want := crc32.Checksum(data[:fo+56], castagnoli), binary.LittleEndian.Uint32(f[56:]); got != want {
			return nil, corruptf(path, int64(fo+56), "CRC32C mismatch: computed %#08x, stored %#08x", got, want)
		}
	}
	s := &Segment{path: path, data: data, version: version, positions: flags&flagPositions != 0, packed: flags&flagPacked != 0,
		noExt: flags&flagNoExtIDs != 0}
	docsOff := binary.LittleEndian.Uint64(f[0:])
	dictOff := binary.LittleEndian.Uint64(f[8:])
	termsOff := binary.LittleEndian.Uint64(f[16:])
	postOff := binary.LittleEndian.Uint64(f[24:])
	s.sumDL = binary.LittleEndian.Uint64(f[32:])
	nd := uint64(binary.LittleEndian.Uint32(f[40:]))
	nt := uint64(binary.LittleEndian.Uint32(f[44:]))
	dictBytes := uint64(binary.LittleEndian.Uint32(f[48:]))
	if v := binary.LittleEndian.Uint32(f[52:]); v != version {
		return nil, corruptf(path, int64(fo+52), "footer version %d", v)
	}
	p8 := func(x uint64) uint64 { return (x + 7) &^ 7 }
	lensBytes, offsBytes := p8(4*nd), 4*(nt+1) // u32 arrays
	if s.packed {
		// The widths, each checked against the file before it is used.
		for _, at := range []uint64{docsOff, dictOff} {
			if at > uint64(fo)-packedHeaderBytes {
				return nil, corruptf(path, int64(fo), "section offsets inconsistent (docs %d dict %d)", docsOff, dictOff)
			}
			if data[at] > 32 || binary.LittleEndian.Uint64(data[at:])>>8 != 0 {
				return nil, corruptf(path, int64(at), "packed array width %d (or its padding) invalid", data[at])
			}
		}
		s.lenW, s.offW = data[docsOff], data[dictOff]
		lensBytes, offsBytes = uint64(packedBytes(int(nd), s.lenW)), uint64(packedBytes(int(nt+1), s.offW))
	}
	extBytes := 8 * nd
	if s.noExt {
		extBytes = 0
	}
	if docsOff != headerBytes ||
		dictOff != docsOff+lensBytes+extBytes ||
		termsOff != dictOff+p8(offsBytes+dictBytes) ||
		postOff < termsOff || postOff > uint64(fo) {
		return nil, corruptf(path, int64(fo), "section offsets inconsistent (docs %d dict %d terms %d post %d, %d docs, %d terms)", docsOff, dictOff, termsOff, postOff, nd, nt)
	}
	recsOff := termsOff
	if version >= 3 {
		w, recBits, err := readRecWidths(data[termsOff:postOff])
		if err != nil {
			return nil, corruptf(path, int64(termsOff), "term record widths: %v", err)
		}
		s.recW, s.recBits = w, recBits
		recsOff += 8
	}
	if postOff != termsOff+termsBytes(version, nt, s.recBits) {
		return nil, corruptf(path, int64(fo), "section offsets inconsistent (terms %d post %d, %d terms)", termsOff, postOff, nt)
	}
	s.numDocs, s.numTerms = int(nd), int(nt)
	// lensAt / offsAt: the file offsets of the arrays' values (errors).
	lensAt, offsAt := docsOff, dictOff
	if s.packed {
		lensAt, offsAt = docsOff+packedHeaderBytes, dictOff+packedHeaderBytes
		s.lens = data[lensAt : docsOff+lensBytes]
		s.dictOffs = data[offsAt : dictOff+offsBytes]
		if !packedTailClean(s.lens, int(nd), s.lenW) {
			return nil, corruptf(path, int64(lensAt), "document lengths: nonzero padding")
		}
		if !packedTailClean(s.dictOffs, int(nt+1), s.offW) {
			return nil, corruptf(path, int64(offsAt), "dictionary offsets: nonzero padding")
		}
	} else {
		// u32 arrays, read 8 bytes at a time: the slices run on to
		// the footer (at least 8 bytes past the last value).
		s.lenW, s.offW = 32, 32
		s.lens = data[docsOff:fo]
		s.dictOffs = data[dictOff:fo]
	}
	s.ext = data[docsOff+lensBytes : dictOff]
	s.dict = data[dictOff+offsBytes : dictOff+offsBytes+dictBytes]
	s.terms = data[recsOff:postOff]
	s.post = data[postOff:fo]
	s.postOff = int64(postOff)

	var sum uint64
	for i := 0; i < s.numDocs; i++ {
		sum += uint64(s.DocLen(uint32(i)))
	}
	if sum != s.sumDL {
		return nil, corruptf(path, int64(fo+32), "sum of document lengths %d, footer says %d", sum, s.sumDL)
	}
	prevEnd := uint32(0)
	if packedArrayGet(s.dictOffs, s.offW, 0) != 0 {
		return nil, corruptf(path, int64(offsAt), "first dictionary offset not 0")
	}
	var prevTerm []byte
	for i := 0; i < s.numTerms; i++ {
		end := packedArrayGet(s.dictOffs, s.offW, i+1)
		if end <= prevEnd || uint64(end) > dictBytes {
			return nil, corruptf(path, int64(offsAt)+int64((i+1)*int(s.offW)/8), "dictionary offset %d of term %d out of order or range", end, i)
		}
		t := s.dict[prevEnd:end]
		if i > 0 && bytes.Compare(prevTerm, t) >= 0 {
			return nil, corruptf(path, int64(dictOff+offsBytes)+int64(prevEnd), "term %d not in strictly increasing order", i)
		}
		prevTerm, prevEnd = t, end
		r := s.rec(i)
		recOff := int64(recsOff) + s.recByteOff(i)
		if r.df == 0 || uint64(r.df) > nd || r.nb != (r.df+BlockSize-1)/BlockSize ||
			r.off > uint64(len(s.post)) || uint64(r.blobLen) > uint64(len(s.post))-r.off || r.efLen > r.blobLen ||
			uint64(r.efLen)+s.metaBytes(r) > uint64(r.blobLen) ||
			(s.version >= 3 && uint64(r.last) >= nd) ||
			(s.single(r) && (r.efLen != 0 || r.maxTF == 0 || r.minDL != s.DocLen(r.last))) {
			return nil, corruptf(path, recOff, "term record %d inconsistent (df %d, blocks %d, blob %d+%d)", i, r.df, r.nb, r.off, r.blobLen)
		}
	}
	if prevEnd != uint32(dictBytes) {
		return nil, corruptf(path, int64(dictOff), "dictionary bytes %d, offsets end at %d", dictBytes, prevEnd)
	}
	return s, nil
}

// termRec is one decoded term record. Versions 1 and 2 store nb in the
// record's last 32-bit word; version 3 stores the list's last doc id
// instead (nb follows from df) among its bit-packed fields.
type termRec struct {
	off          uint64
	blobLen      uint32
	df           uint32
	maxTF, minDL uint32
	efLen, nb    uint32
	last         uint32 // version 3 only: the list's last doc id
}

// readRecWidths reads a version-3 terms section's width header.
func readRecWidths(b []byte) (w [recFields]uint8, recBits uint64, err error) {
	if len(b) < 8 {
		return w, 0, fmt.Errorf("section of %d bytes has no width header", len(b))
	}
	if b[recFields] != 0 {
		return w, 0, fmt.Errorf("header byte %d is %d, not 0", recFields, b[recFields])
	}
	for k := range w {
		if w[k] = b[k]; w[k] > recFieldMax[k] {
			return w, 0, fmt.Errorf("field %d is %d bits wide, at most %d", k, w[k], recFieldMax[k])
		}
		recBits += uint64(w[k])
	}
	return w, recBits, nil
}

// recByteOff returns the byte offset of term record i in the terms
// section's records (for error messages).
func (s *Segment) recByteOff(i int) int64 {
	if s.version >= 3 {
		return int64(uint64(i) * s.recBits / 8)
	}
	return int64(i * termRecBytes)
}

func (s *Segment) rec(i int) termRec {
	if s.version >= 3 {
		bit := uint64(i) * s.recBits
		var f [recFields]uint64
		for k, w := range s.recW {
			f[k] = getBitsWide(s.terms, bit, uint(w))
			bit += uint64(w)
		}
		return termRec{off: f[0], blobLen: uint32(f[1]), df: uint32(f[2]), maxTF: uint32(f[3]), minDL: uint32(f[4]),
			efLen: uint32(f[5]), last: uint32(f[6]), nb: uint32((f[2] + BlockSize - 1) / BlockSize)}
	}
	b := s.terms[i*termRecBytes:]
	r := termRec{
		off:     binary.LittleEndian.Uint64(b[0:]),
		blobLen: binary.LittleEndian.Uint32(b[8:]),
		df:      binary.LittleEndian.Uint32(b[12:]),
		maxTF:   binary.LittleEndian.Uint32(b[16:]),
		minDL:   binary.LittleEndian.Uint32(b[20:]),
		efLen:   binary.LittleEndian.Uint32(b[24:]),
	}
	r.nb = binary.LittleEndian.Uint32(b[28:])
	return r
}

// compact reports whether r is a version-3 single-block list: its doc ids
// are one partitioned Elias-Fano partition, its block metadata is the
// record's (lastDoc = r.last, maxTF, minDL), its tf block starts right
// after the doc ids and its positions right after the tf block.
func (s *Segment) compact(r termRec) bool { return s.version >= 3 && r.nb == 1 }

// single reports whether r is a version-4 list of one posting: it has no
// doc ids (efLen 0; the partition is pefOne, its id r.last) and no tf
// block (its tf is r.maxTF); its blob is its positions.
func (s *Segment) single(r termRec) bool { return s.version >= 4 && r.df == 1 }

// partitioned reports whether r's doc ids are partitioned Elias-Fano
// (pef.go) rather than one Elias-Fano sequence (ef.go).
func (s *Segment) partitioned(r termRec) bool { return s.version == 2 || s.compact(r) }

// metaBytes returns the bytes r's blob holds after its doc ids at least:
// the block metadata, or for a compact list the tf block's width byte.
func (s *Segment) metaBytes(r termRec) uint64 {
	if s.single(r) {
		return 0
	}
	if s.compact(r) {
		return 1
	}
	return uint64(r.nb) * blockMetaBytes
}

// NumDocs returns the number of documents (including ones the caller has
// deleted but not yet merged away).
func (s *Segment) NumDocs() int { return s.numDocs }

// NumTerms returns the number of distinct terms.
func (s *Segment) NumTerms() int { return s.numTerms }

// SumDocLen returns Σ|D| over the segment's documents.
func (s *Segment) SumDocLen() uint64 { return s.sumDL }

// HasPositions reports whether phrase queries can be answered.
func (s *Segment) HasPositions() bool { return s.positions }

// Path returns the name given to Open.
func (s *Segment) Path() string { return s.path }

// Size returns the segment's size in bytes.
func (s *Segment) Size() int { return len(s.data) }

// ExtID returns the external id of local document doc (0 <= doc <
// NumDocs): stored in the file, or given to OpenWith (OpenOptions.ExtIDs);
// 0 when the file stores none and none were given.
func (s *Segment) ExtID(doc uint32) uint64 {
	if s.noExt {
		if s.extIDs == nil {
			return 0
		}
		return s.extIDs[doc]
	}
	return binary.LittleEndian.Uint64(s.ext[8*int(doc):])
}

// DocLen returns |D| of local document doc (0 <= doc < NumDocs).
func (s *Segment) DocLen(doc uint32) uint32 {
	return packedArrayGet(s.lens, s.lenW, int(doc))
}

// Term returns the i-th term in byte order (0 <= i < NumTerms).
func (s *Segment) Term(i int) string {
	return string(s.termBytes(i))
}

func (s *Segment) termBytes(i int) []byte {
	a := packedArrayGet(s.dictOffs, s.offW, i)
	b := packedArrayGet(s.dictOffs, s.offW, i+1)
	return s.dict[a:b]
}

// lowerBound binary-searches the dictionary for the first term ≥ term;
// O(log T · |term|).
func (s *Segment) lowerBound(term string) int {
	return sort.Search(s.numTerms, func(i int) bool { return string(s.termBytes(i)) >= term })
}

// termHashMinTerms: dictionaries with fewer terms are only binary-searched
// (a handful of comparisons).
const termHashMinTerms = 64

// termHash is an open-addressing (linear probing) hash index over the
// dictionary, built in memory once a segment has served T/16 lookups (O(T), 16 to 32
// bytes per term): a slot holds the term's hash in its high 32 bits (so a
// probe compares term bytes only on a hash match) and term index + 1 in
// its low 32 bits, 0 = empty; at least half of the slots are empty.
type termHash struct {
	seed  maphash.Seed
	mask  uint64
	slots []uint64
}

func (s *Segment) termIndex() *termHash {
	if h := s.thash.Load(); h != nil {
		return h
	}
	n := 1
	for n < 2*s.numTerms {
		n <<= 1
	}
	h := &termHash{seed: maphash.MakeSeed(), mask: uint64(n - 1), slots: make([]uint64, n)}
	for i := 0; i < s.numTerms; i++ {
		x := maphash.Bytes(h.seed, s.termBytes(i))
		j := x & h.mask
		for h.slots[j] != 0 {
			j = (j + 1) & h.mask
		}
		h.slots[j] = x&^0xffffffff | uint64(i+1)
	}
	s.thash.Store(h) // a racing builder stores an equivalent table
	return h
}

// lookup returns term's dictionary index: O(|term|) expected through the
// hash index, O(log T · |term|) by binary search before it is built and
// for small dictionaries.
// The index is only meaningful when ok.
func (s *Segment) lookup(term string) (int, bool) {
	h := s.thash.Load()
	if h == nil {
		// Build the index only once the segment has served about T/16
		// lookups (a build costs O(T), a binary search O(log T)), so a
		// short-lived segment (a MemTable's, re-sealed after every write)
		// never pays for one.
		if s.numTerms < termHashMinTerms || s.lookups.Add(1) < int64(s.numTerms/16) {
			i := s.lowerBound(term)
			return i, i < s.numTerms && string(s.termBytes(i)) == term
		}
		h = s.termIndex()
	}
	x := maphash.String(h.seed, term)
	for j := x & h.mask; ; j = (j + 1) & h.mask {
		v := h.slots[j]
		if v == 0 {
			return 0, false
		}
		if i := int(uint32(v)) - 1; v>>32 == x>>32 && string(s.termBytes(i)) == term {
			return i, true
		}
	}
}

// DocFreq returns the number of documents of the segment containing term.
func (s *Segment) DocFreq(term string) int {
	i, ok := s.lookup(term)
	if !ok {
		return 0
	}
	return int(s.rec(i).df)
}

// PrefixTerms appends to dst every term that starts with prefix, in byte
// order, at most limit of them (limit <= 0: no limit).
func (s *Segment) PrefixTerms(dst []string, prefix string, limit int) []string {
	i := s.lowerBound(prefix)
	for n := 0; i < s.numTerms; i++ {
		t := s.termBytes(i)
		if !bytes.HasPrefix(t, []byte(prefix)) || (limit > 0 && n >= limit) {
			break
		}
		dst = append(dst, string(t))
		n++
	}
	return dst
}

// Postings decodes term's whole posting list: local doc ids, term
// frequencies and (if stored) positions, tfs[i] of them per doc,
// concatenated. A missing term returns empty slices and no error.
func (s *Segment) Postings(term string) (docs, tfs, pos []uint32, err error) {
	i, ok := s.lookup(term)
	if !ok {
		return nil, nil, nil, nil
	}
	return s.postingsAt(i)
}

// CountIn returns how many documents of term's postings list allow holds,
// stopping early once limit are found (limit <= 0: count them all). It
// decodes doc ids only (no term frequencies or positions) and, when allow
// is much smaller than the list, walks allow with NextGEQ instead of
// walking the list. A term absent from the segment counts 0. Errors: the
// list's doc ids are corrupt (ErrCorrupt, path and offset).
func (s *Segment) CountIn(term string, allow *roaring.Bitmap, limit int) (int, error) {
	i, ok := s.lookup(term)
	if !ok || allow == nil || allow.IsEmpty() {
		return 0, nil
	}
	c, err := s.openCursor(i)
	if err != nil {
		return 0, err
	}
	n := 0
	if allow.GetCardinality()*8 < uint64(c.df) {
		it := allow.Iterator()
		for it.HasNext() && c.doc() != efEnd {
			d := it.Next()
			if c.nextGEQ(d) == d {
				if n++; n == limit {
					break
				}
			}
		}
	} else {
		for ; c.doc() != efEnd; c.next() {
			if allow.Contains(c.doc()) {
				if n++; n == limit {
					break
				}
			}
		}
	}
	if c.err != nil {
		return 0, c.err
	}
	return n, nil
}

func (s *Segment) postingsAt(i int) (docs, tfs, pos []uint32, err error) {
	c, err := s.openCursor(i)
	if err != nil {
		return nil, nil, nil, err
	}
	docs = make([]uint32, 0, c.df)
	tfs = make([]uint32, 0, c.df)
	var pstream []byte
	for c.doc() != efEnd {
		docs = append(docs, c.doc())
		tf := c.tf()
		tfs = append(tfs, tf)
		if s.positions && c.err == nil {
			// Sequential decode: reset the stream at each block start.
			if c.c.i%BlockSize == 0 {
				_, off := c.blockOffsets(c.c.i / BlockSize)
				if uint64(off) > uint64(len(c.blob)) {
					return nil, nil, nil, corruptf(s.path, c.blobAt, "positions offset out of range")
				}
				pstream = c.blob[off:]
			}
			prev := uint64(0)
			for k := uint32(0); k < tf; k++ {
				d, n := binary.Uvarint(pstream)
				if n <= 0 || prev+d > 1<<32-1 {
					return nil, nil, nil, corruptf(s.path, c.blobAt, "positions malformed")
				}
				pstream = pstream[n:]
				prev += d
				pos = append(pos, uint32(prev))
			}
		}
		c.next()
	}
	if c.err != nil {
		return nil, nil, nil, c.err
	}
	return docs, tfs, pos, nil
}

// Verify decodes every posting list completely and checks it (doc ids
// strictly increasing and < NumDocs, tf blocks, block-max metadata,
// positions), then encodes the decoded list again and checks that its
// blob is byte for byte the stored one (no stray bytes) and its term
// record the stored one (df, maxTF, minDL and lengths the list's own);
// in version 3 also that the record widths are the least the values need
// and the padding after the records is zero, so the terms section too is
// exactly what the writer produces. O(len(data)).
func (s *Segment) Verify() error {
	// re re-encodes each decoded list: the blob and record must be
	// exactly what a writer produces for it (no stray bytes, every
	// bound in the record the list's own).
	re := &segWriter{version: s.version, positions: s.positions, docLens: make([]uint32, s.numDocs)}
	for d := range re.docLens {
		re.docLens[d] = s.DocLen(uint32(d))
	}
	// Packed arrays are at the least width their values need, as a
	// writer writes them.
	if s.packed {
		f := s.data[len(s.data)-footerBytes:]
		if w := packedWidth(re.docLens); w != s.lenW {
			return corruptf(s.path, int64(binary.LittleEndian.Uint64(f[0:])), "document lengths packed at width %d, their largest needs %d", s.lenW, w)
		}
		if w := uint8(bits.Len32(uint32(len(s.dict)))); w != s.offW {
			return corruptf(s.path, int64(binary.LittleEndian.Uint64(f[8:])), "dictionary offsets packed at width %d, the largest needs %d", s.offW, w)
		}
	}
	var docs, tfs, allPos []uint32
	for i := 0; i < s.numTerms; i++ {
		r := s.rec(i)
		blobAt := s.postOff + int64(r.off)
		c, err := s.openCursor(i)
		if err != nil {
			return err
		}
		docs, tfs, allPos = docs[:0], tfs[:0], allPos[:0]
		if c.pc == nil {
			if err := c.ef.verify(s.path, blobAt); err != nil {
				return err
			}
		} else if err := c.verifyPEF(); err != nil {
			return err
		}
		prev := int64(-1)
		n := 0
		var maxTF, minDL uint32 = 0, math.MaxUint32
		for c.doc() != efEnd {
			d := c.doc()
			if int64(d) <= prev {
				return corruptf(s.path, blobAt, "term %q: doc ids not increasing", s.Term(i))
			}
			prev = int64(d)
			tf := c.tf()
			at := len(allPos)
			allPos = c.appendPositions(allPos)
			pos := allPos[at:]
			if c.err != nil {
				return c.err
			}
			docs, tfs = append(docs, d), append(tfs, tf)
			if s.positions {
				if len(pos) != int(tf) {
					return corruptf(s.path, blobAt, "term %q: %d positions for tf %d", s.Term(i), len(pos), tf)
				}
				for k := 1; k < len(pos); k++ {
					if pos[k] <= pos[k-1] {
						return corruptf(s.path, blobAt, "term %q: positions not increasing", s.Term(i))
					}
				}
			}
			maxTF, minDL = max(maxTF, tf), min(minDL, s.DocLen(d))
			if (n+1)%BlockSize == 0 || n+1 == int(r.df) {
				last, bmax, bmin := c.blockMeta(n / BlockSize)
				if last != d || bmax != maxTF || bmin != minDL {
					return corruptf(s.path, blobAt, "term %q: block %d metadata wrong", s.Term(i), n/BlockSize)
				}
				maxTF, minDL = 0, math.MaxUint32
			}
			n++
			c.next()
		}
		if c.err != nil {
			return c.err
		}
		if n != int(r.df) {
			return corruptf(s.path, blobAt, "term %q: %d postings, df %d", s.Term(i), n, r.df)
		}
		re.post, re.recs, re.dict, re.dictOffs, re.nterms = re.post[:0], re.recs[:0], re.dict[:0], re.dictOffs[:0], 0
		if err := re.addTerm(s.termBytes(i), docs, tfs, allPos); err != nil {
			return corruptf(s.path, blobAt, "term %q: %v", s.Term(i), err)
		}
		blob := s.post[r.off : r.off+uint64(r.blobLen)]
		if string(re.post) != string(blob) {
			return corruptf(s.path, blobAt, "term %q: postings not as written (%d bytes, re-encoded %d)", s.Term(i), len(blob), len(re.post))
		}
		want := re.recs[0]
		want.off = r.off
		if want != r {
			return corruptf(s.path, s.postOff-int64(len(s.terms))+s.recByteOff(i), "term %q: record %+v, the list's own %+v", s.Term(i), r, want)
		}
	}
	if s.version >= 3 {
		recs := make([]termRec, s.numTerms)
		for i := range recs {
			recs[i] = s.rec(i)
		}
		recsOff := s.postOff - int64(len(s.terms))
		if w, _ := recWidths(recs); w != s.recW {
			return corruptf(s.path, recsOff-8, "term record widths %v, the values need %v", s.recW, w)
		}
		for bit := uint64(s.numTerms) * s.recBits; bit < 8*uint64(len(s.terms)); bit++ {
			if s.terms[bit>>3]&(1<<(bit&7)) != 0 {
				return corruptf(s.path, recsOff+int64(bit>>3), "nonzero padding after the term records")
			}
		}
	}
	return nil
}

func crcOf(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// SectionInfo locates one section of a segment file.
type SectionInfo struct {
	Name   string
	Offset int64
	Length int64
}

// SegmentInfo describes a segment file for inspection tools.
type SegmentInfo struct {
	Version   uint32
	Positions bool
	NumDocs   int
	NumTerms  int
	SumDocLen uint64
	Sections  []SectionInfo // header, docs, dict, terms, postings, footer
	CRC32C    uint32        // stored (and verified by Open) checksum
	Size      int64
}

// Info returns the segment's header, sections and checksum.
func (s *Segment) Info() SegmentInfo {
	fo := int64(len(s.data) - footerBytes)
	f := s.data[fo:]
	docsOff := int64(binary.LittleEndian.Uint64(f[0:]))
	dictOff := int64(binary.LittleEndian.Uint64(f[8:]))
	termsOff := int64(binary.LittleEndian.Uint64(f[16:]))
	return SegmentInfo{
		Version:   s.version,
		Positions: s.positions,
		NumDocs:   s.numDocs,
		NumTerms:  s.numTerms,
		SumDocLen: s.sumDL,
		Sections: []SectionInfo{
			{"header", 0, headerBytes},
			{"docs", docsOff, dictOff - docsOff},
			{"dict", dictOff, termsOff - dictOff},
			{"terms", termsOff, s.postOff - termsOff},
			{"postings", s.postOff, fo - s.postOff},
			{"footer", fo, footerBytes},
		},
		CRC32C: binary.LittleEndian.Uint32(f[56:]),
		Size:   int64(len(s.data)),
	}
}
