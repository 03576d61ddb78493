package bm25

import (
	"encoding/binary"
	"math/bits"
)

// cursor iterates one term's postings in one segment: doc ids from the
// Elias-Fano sequence, term frequencies from bit-packed 128-doc blocks
// (unpacked lazily, only for blocks whose docs get scored), block-max
// metadata through a separate "shallow" block pointer, positions on demand.
// Every read is bounds-checked; on malformed bytes the cursor ends and err
// is set.
type cursor struct {
	seg    *Segment
	blob   []byte
	blobAt int64      // file offset of blob
	ef     efSeq      // a list coded as one Elias-Fano sequence (ef.go)
	pc     *pefCursor // a partitioned list: &pcv (pef.go), else nil
	pcv    pefCursor
	c      efCursor // current element (i, val), either coding
	term   int      // term index in the segment
	nb     int
	df     int
	err    error

	// meta is the list's block metadata, nb records of blockMetaBytes:
	// in the blob, or for a compact list (Segment.compact) mbuf, filled
	// from the term record.
	meta []byte
	mbuf [blockMetaBytes]byte

	tfBlock int // block whose tfs are in tfs, -1 none
	tfs     [BlockSize]uint32

	// posIdx is the posting index whose positions start at blob[posAt]
	// (the last one decoded), -1 none: appendPositions resumes from it.
	posIdx int
	posAt  int

	sb int // shallow block pointer for block-max bounds
}

func (s *Segment) openCursor(i int) (*cursor, error) {
	cu := new(cursor)
	if err := s.openCursorAt(cu, i); err != nil {
		return nil, err
	}
	return cu, nil
}

// openCursorAt is openCursor into *cu (whatever it held before), so a
// search can reuse one cursor per query term across segments instead of
// allocating ~700 bytes per term and segment.
func (s *Segment) openCursorAt(cu *cursor, i int) error {
	return s.openCursorRec(cu, i, s.rec(i))
}

// initCursor sets *cu to term i's list (record r, blob present) with its
// block metadata usable and its doc ids not yet opened (doc() = efEnd).
func (s *Segment) initCursor(cu *cursor, i int, r termRec) {
	blob := s.post[r.off : r.off+uint64(r.blobLen)]
	*cu = cursor{seg: s, blob: blob, blobAt: s.postOff + int64(r.off), nb: int(r.nb), df: int(r.df), tfBlock: -1, posIdx: -1, term: i, c: efCursor{val: efEnd}}
	if !s.compact(r) {
		cu.meta = blob[r.efLen : uint64(r.efLen)+uint64(r.nb)*blockMetaBytes] // Open checked the bounds
		return
	}
	// The tf block follows the doc ids; the positions follow the tf block.
	// A single-posting list has neither: its tf is the record's maxTF.
	tfOff := uint64(r.efLen)
	posOff := uint64(len(blob))
	if s.single(r) {
		posOff = 0
		cu.tfBlock, cu.tfs[0] = 0, r.maxTF-1 // Open checked maxTF >= 1
	} else if w := uint64(blob[tfOff]); w <= 32 { // else loadTFs reports it
		posOff = min(posOff, tfOff+1+(uint64(r.df)*w+7)/8)
	}
	m := cu.mbuf[:]
	binary.LittleEndian.PutUint32(m[0:], r.last)
	binary.LittleEndian.PutUint32(m[4:], r.maxTF)
	binary.LittleEndian.PutUint32(m[8:], r.minDL)
	binary.LittleEndian.PutUint32(m[12:], uint32(tfOff))
	binary.LittleEndian.PutUint32(m[16:], uint32(posOff))
	cu.meta = m
}

// openCursorRec is openCursorAt given term i's record r = s.rec(i).
func (s *Segment) openCursorRec(cu *cursor, i int, r termRec) error {
	if err := s.need(i, r); err != nil {
		return err
	}
	s.initCursor(cu, i, r)
	blob, at := cu.blob, cu.blobAt
	if s.partitioned(r) {
		cu.pcv = pefCursor{reg: blob[:r.efLen], meta: cu.meta, nb: cu.nb, df: cu.df, u: uint32(s.numDocs), one: s.version >= 4}
		cu.pc = &cu.pcv
		cu.pc.start(&cu.c)
		cu.check()
		return nil
	}
	ef, n, err := openEF(blob, s.path, at)
	if err != nil {
		return err
	}
	if n != int(r.efLen) || ef.len() != int(r.df) || ef.ly.u != uint32(s.numDocs) {
		return corruptf(s.path, at, "term %d: Elias-Fano sequence (n=%d, u=%d, %d bytes) does not match record (df=%d, %d docs, %d bytes)", i, ef.len(), ef.ly.u, n, r.df, s.numDocs, r.efLen)
	}
	cu.ef = ef
	cu.c = cu.ef.cursor()
	cu.check()
	return nil
}

func (cu *cursor) check() {
	if cu.c.corrupt && cu.err == nil {
		cu.err = corruptf(cu.seg.path, cu.blobAt, "Elias-Fano doc ids undecodable")
	}
}

// doc returns the current doc id, or efEnd when exhausted.
func (cu *cursor) doc() uint32 { return cu.c.val }

func (cu *cursor) next() {
	if cu.pc != nil {
		cu.pc.next(&cu.c)
	} else {
		cu.c.next()
	}
	cu.check()
}

func (cu *cursor) nextGEQ(t uint32) uint32 {
	var v uint32
	if cu.pc != nil {
		v = cu.pc.nextGEQ(&cu.c, t)
	} else {
		v = cu.c.nextGEQ(t)
	}
	cu.check()
	return v
}

func (cu *cursor) blockMeta(b int) (lastDoc, maxTF, minDL uint32) {
	m := cu.meta[b*blockMetaBytes:]
	return binary.LittleEndian.Uint32(m[0:]), binary.LittleEndian.Uint32(m[4:]), binary.LittleEndian.Uint32(m[8:])
}

func (cu *cursor) blockOffsets(b int) (tfOff, posOff uint32) {
	m := cu.meta[b*blockMetaBytes:]
	return binary.LittleEndian.Uint32(m[12:]), binary.LittleEndian.Uint32(m[16:])
}

func (cu *cursor) fail(format string, args ...any) {
	if cu.err == nil {
		cu.err = corruptf(cu.seg.path, cu.blobAt, format, args...)
	}
	if cu.pc != nil {
		cu.pc.end(&cu.c)
	} else {
		cu.c.end()
	}
}

// tf returns the current doc's term frequency (>= 1), or 0 on corruption.
func (cu *cursor) tf() uint32 {
	i := cu.c.i
	if i < 0 || i >= cu.df {
		return 0
	}
	b := i / BlockSize
	if b != cu.tfBlock {
		if !cu.loadTFs(b) {
			return 0
		}
	}
	return cu.tfs[i%BlockSize] + 1
}

func (cu *cursor) loadTFs(b int) bool {
	off, _ := cu.blockOffsets(b)
	n := min(BlockSize, cu.df-b*BlockSize)
	if uint64(off) >= uint64(len(cu.blob)) {
		cu.fail("tf block %d offset %d out of range", b, off)
		return false
	}
	w := int(cu.blob[off])
	if w > 32 || !unpack(cu.blob[off+1:], w, n, cu.tfs[:]) {
		cu.fail("tf block %d (width %d) malformed", b, w)
		return false
	}
	cu.tfBlock = b
	return true
}

// appendPositions appends the current doc's positions (nothing when the
// segment stores none).
func (cu *cursor) appendPositions(dst []uint32) []uint32 {
	it := cu.positions()
	for it.next() {
		dst = append(dst, uint32(it.cur))
	}
	return dst
}

// positions returns an iterator over the current doc's positions (empty
// when the segment stores none or on corruption, which sets cu.err).
//
// Positions are stored per 128-doc block (the block meta gives the byte
// offset of the block's stream), each doc's tf uvarint deltas after the
// previous doc's. The cursor remembers where the last doc it opened
// starts (posIdx, posAt), so a forward walk through a block skips each
// byte at most once, and skipping never decodes: it counts varint
// terminator bytes (high bit clear) eight at a time (skipVarints). A
// conjunctive traversal therefore pays O(position bytes of the block) per
// block touched, not per candidate; the iterator decodes lazily, so a
// phrase check stops decoding at its first match.
func (cu *cursor) positions() posIter {
	if !cu.seg.positions {
		return posIter{}
	}
	i := cu.c.i
	if i < 0 || i >= cu.df {
		return posIter{}
	}
	b := i / BlockSize
	if b != cu.tfBlock && !cu.loadTFs(b) {
		return posIter{}
	}
	at, from := cu.posAt, cu.posIdx
	if cu.posIdx < 0 || cu.posIdx/BlockSize != b || cu.posIdx > i {
		_, off := cu.blockOffsets(b)
		if uint64(off) > uint64(len(cu.blob)) {
			cu.fail("positions of block %d out of range", b)
			return posIter{}
		}
		at, from = int(off), b*BlockSize
	}
	if from < i {
		// Skip the positions of the block's docs from..i-1.
		n := 0
		for j := from; j < i; j++ {
			n += int(cu.tfs[j%BlockSize]) + 1
		}
		k, ok := skipVarints(cu.blob[at:], n)
		if !ok {
			cu.fail("positions of block %d malformed", b)
			return posIter{}
		}
		at += k
	}
	cu.posIdx, cu.posAt = i, at
	return posIter{cu: cu, p: cu.blob[at:], left: int(cu.tfs[i%BlockSize]) + 1, cur: -1}
}

// posIter decodes one document's positions lazily, in increasing order.
// cur is the current position (-1 before the first).
type posIter struct {
	cu   *cursor
	p    []byte
	left int
	cur  int64
}

// next advances to the following position; false when none is left or the
// bytes are malformed (the cursor's err is then set).
func (it *posIter) next() bool {
	if it.left == 0 {
		return false
	}
	d, n := binary.Uvarint(it.p)
	prev := uint64(max(it.cur, 0))
	if n <= 0 || prev+d > 1<<32-1 {
		it.cu.fail("positions of block %d malformed", it.cu.c.i/BlockSize)
		it.left = 0
		return false
	}
	it.p = it.p[n:]
	it.cur = int64(prev + d)
	it.left--
	return true
}

// seek advances to the first position >= want; false when there is none.
func (it *posIter) seek(want int64) bool {
	for it.cur < want {
		if !it.next() {
			return false
		}
	}
	return true
}

// skipVarints returns the length of the first n uvarints of p, counting
// terminator bytes (high bit clear) a 64-bit word at a time; ok is false
// when p holds fewer than n terminators. It does not check that each
// varint is at most 10 bytes (the decoder of the varints actually read
// does; CRC32C guards the rest).
func skipVarints(p []byte, n int) (int, bool) {
	const hi = 0x8080808080808080
	off := 0
	for n > 0 && off+8 <= len(p) {
		t := ^binary.LittleEndian.Uint64(p[off:]) & hi
		c := bits.OnesCount64(t)
		if c < n {
			n -= c
			off += 8
			continue
		}
		for ; n > 1; n-- {
			t &= t - 1
		}
		return off + bits.TrailingZeros64(t)/8 + 1, true
	}
	for ; n > 0 && off < len(p); off++ {
		if p[off] < 0x80 {
			n--
		}
	}
	return off, n == 0
}

// shallowBlock moves the block-max pointer to the block that may contain
// doc d (never backwards) and returns its (maxTF, minDL); ok is false when
// no block can contain d.
func (cu *cursor) shallowBlock(d uint32) (maxTF, minDL uint32, ok bool) {
	for cu.sb < cu.nb {
		last, mt, md := cu.blockMeta(cu.sb)
		if last >= d {
			return mt, md, true
		}
		cu.sb++
	}
	return 0, 0, false
}
