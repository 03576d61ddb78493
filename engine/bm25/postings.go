package bm25

import (
	"encoding/binary"
)

// cursor iterates one term's postings in one segment: doc ids from the
// Elias-Fano sequence, term frequencies from bit-packed 128-doc blocks
// (unpacked lazily, only for blocks whose docs get scored), block-max
// metadata through a separate "shallow" block pointer, positions on demand.
// Every read is bounds-checked; on malformed bytes the cursor ends and err
// is set.
type cursor struct {
	seg     *Segment
	blob    []byte
	blobAt  int64 // file offset of blob
	ef      efSeq
	c       efCursor
	nb      int
	metaOff int
	df      int
	err     error

	tfBlock int // block whose tfs are in tfs, -1 none
	tfs     [BlockSize]uint32

	sb int // shallow block pointer for block-max bounds
}

func (s *Segment) openCursor(i int) (*cursor, error) {
	r := s.rec(i)
	blob := s.post[r.off : r.off+uint64(r.blobLen)]
	at := s.postOff + int64(r.off)
	cu := &cursor{seg: s, blob: blob, blobAt: at, nb: int(r.nb), df: int(r.df), tfBlock: -1}
	ef, n, err := openEF(blob, s.path, at)
	if err != nil {
		return nil, err
	}
	if n != int(r.efLen) || ef.len() != int(r.df) || ef.ly.u != uint32(s.numDocs) {
		return nil, corruptf(s.path, at, "term %d: Elias-Fano sequence (n=%d, u=%d, %d bytes) does not match record (df=%d, %d docs, %d bytes)", i, ef.len(), ef.ly.u, n, r.df, s.numDocs, r.efLen)
	}
	cu.ef = ef
	cu.metaOff = n
	cu.c = cu.ef.cursor()
	cu.check()
	return cu, nil
}

func (cu *cursor) check() {
	if cu.c.corrupt && cu.err == nil {
		cu.err = corruptf(cu.seg.path, cu.blobAt, "Elias-Fano doc ids undecodable")
	}
}

// doc returns the current doc id, or efEnd when exhausted.
func (cu *cursor) doc() uint32 { return cu.c.val }

func (cu *cursor) next() {
	cu.c.next()
	cu.check()
}

func (cu *cursor) nextGEQ(t uint32) uint32 {
	v := cu.c.nextGEQ(t)
	cu.check()
	return v
}

func (cu *cursor) blockMeta(b int) (lastDoc, maxTF, minDL uint32) {
	m := cu.blob[cu.metaOff+b*blockMetaBytes:]
	return binary.LittleEndian.Uint32(m[0:]), binary.LittleEndian.Uint32(m[4:]), binary.LittleEndian.Uint32(m[8:])
}

func (cu *cursor) blockOffsets(b int) (tfOff, posOff uint32) {
	m := cu.blob[cu.metaOff+b*blockMetaBytes:]
	return binary.LittleEndian.Uint32(m[12:]), binary.LittleEndian.Uint32(m[16:])
}

func (cu *cursor) fail(format string, args ...any) {
	if cu.err == nil {
		cu.err = corruptf(cu.seg.path, cu.blobAt, format, args...)
	}
	cu.c.end()
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
	if !cu.seg.positions {
		return dst
	}
	i := cu.c.i
	if i < 0 || i >= cu.df {
		return dst
	}
	b := i / BlockSize
	if b != cu.tfBlock && !cu.loadTFs(b) {
		return dst
	}
	_, off := cu.blockOffsets(b)
	if uint64(off) > uint64(len(cu.blob)) {
		cu.fail("positions of block %d out of range", b)
		return dst
	}
	p := cu.blob[off:]
	// Skip the positions of the block's earlier docs.
	for j := b * BlockSize; j < i; j++ {
		for k := uint32(0); k <= cu.tfs[j%BlockSize]; k++ {
			_, n := binary.Uvarint(p)
			if n <= 0 {
				cu.fail("positions of block %d malformed", b)
				return dst
			}
			p = p[n:]
		}
	}
	prev := uint64(0)
	for k := uint32(0); k <= cu.tfs[i%BlockSize]; k++ {
		d, n := binary.Uvarint(p)
		if n <= 0 || prev+d > 1<<32-1 {
			cu.fail("positions of block %d malformed", b)
			return dst
		}
		p = p[n:]
		prev += d
		dst = append(dst, uint32(prev))
	}
	return dst
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
