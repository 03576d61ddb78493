package ivfpq

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"unsafe"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/stratasearch/strata/internal/base"
)

// File format constants (layout in doc.go).
const (
	fileMagic     = "STRAIVPQ"
	footerMagic   = "STRAIVPE"
	formatVersion = 2 // newest version read and written
	headerSize    = 64
	numSections   = 6 // sections of version 1
	footerSize    = numSections*16 + 16
	flagResidual  = 1
	flagOPQ       = 2 // version ≥ 2: the rotation section holds Dim×Dim f32
)

// sectionsOf returns the number of sections of format version v: 6 in
// version 1, 7 (the OPQ rotation added) from version 2.
func sectionsOf(v uint32) int {
	if v >= 2 {
		return numSections + 1
	}
	return numSections
}

// footerSizeOf returns the footer size of format version v.
func footerSizeOf(v uint32) int64 { return int64(sectionsOf(v))*16 + 16 }

// Section indexes in the footer table.
const (
	secCoarse = iota
	secCodebooks
	secDirectory
	secIDs
	secCodes
	secTombstones
	secRotation // version ≥ 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcWriter counts and checksums everything written through it.
type crcWriter struct {
	w   *bufio.Writer
	n   int64
	crc uint32
	err error
}

func (c *crcWriter) write(p []byte) {
	if c.err != nil {
		return
	}
	_, c.err = c.w.Write(p)
	c.crc = crc32.Update(c.crc, castagnoli, p)
	c.n += int64(len(p))
}

func (c *crcWriter) pad(align int64) {
	var z [headerSize]byte
	if r := c.n % align; r != 0 {
		c.write(z[:align-r])
	}
}

func (c *crcWriter) u32(v uint32) { c.write(binary.LittleEndian.AppendUint32(nil, v)) }
func (c *crcWriter) u64(v uint64) { c.write(binary.LittleEndian.AppendUint64(nil, v)) }

func (c *crcWriter) f32s(v []float32) {
	b := make([]byte, 0, 4096)
	for len(v) > 0 {
		n := min(len(v), 1024)
		b = b[:0]
		for _, f := range v[:n] {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
		}
		c.write(b)
		v = v[n:]
	}
}

// WriteTo serialises the trained index (centroids, codebooks, inverted
// lists, tombstones, the OPQ rotation; not the refine vectors) and returns
// the bytes written. An index without OPQ is written in format version 1
// (byte-identical to earlier releases, so older readers and the cold-tier
// codec files are unchanged); with OPQ in version 2, which adds the
// rotation section and header flag bit 1. The layout is drawn in doc.go.
// Errors: ErrNotTrained, or the writer's error.
func (ix *Index) WriteTo(w io.Writer) (int64, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if !ix.trained {
		return 0, ErrNotTrained
	}
	o := ix.opts
	c := &crcWriter{w: bufio.NewWriterSize(w, 1<<16)}
	var flags uint32
	if o.byResidual() {
		flags |= flagResidual
	}
	version := uint32(1)
	if ix.rot != nil {
		flags |= flagOPQ
		version = 2
	}
	nsec := sectionsOf(version)
	var ntotal uint64
	for _, L := range ix.lists {
		ntotal += uint64(len(L.ids))
	}
	c.write([]byte(fileMagic))
	for _, v := range []uint32{version, flags, uint32(o.Dim), uint32(o.Metric), uint32(o.Nlist), uint32(o.M), uint32(o.Nbits), 0} {
		c.u32(v)
	}
	c.u64(ntotal)
	c.u64(ix.nextID)
	c.pad(headerSize)
	var sec [numSections + 1][2]int64
	begin := func(i int) { c.pad(8); sec[i][0] = c.n }
	end := func(i int) { sec[i][1] = c.n - sec[i][0] }
	begin(secCoarse)
	c.f32s(ix.coarse)
	end(secCoarse)
	begin(secCodebooks)
	c.f32s(ix.pq.Centroids)
	end(secCodebooks)
	begin(secDirectory)
	for _, L := range ix.lists {
		c.u64(uint64(len(L.ids)))
		c.u64(uint64(len(L.codes)))
	}
	end(secDirectory)
	begin(secIDs)
	buf := make([]byte, 0, 4096)
	for _, L := range ix.lists {
		for i := 0; i < len(L.ids); i += 1024 {
			buf = buf[:0]
			for _, id := range L.ids[i:min(len(L.ids), i+1024)] {
				buf = binary.LittleEndian.AppendUint32(buf, id)
			}
			c.write(buf)
		}
	}
	end(secIDs)
	begin(secCodes)
	for _, L := range ix.lists {
		c.write(L.codes)
	}
	end(secCodes)
	begin(secTombstones)
	tb, err := ix.deleted.ToBytes()
	if err != nil {
		return c.n, fmt.Errorf("ivfpq: tombstones: %w", err)
	}
	c.write(tb)
	end(secTombstones)
	if version >= 2 {
		begin(secRotation)
		c.f32s(ix.rot)
		end(secRotation)
	}
	c.pad(8)
	for _, s := range sec[:nsec] {
		c.u64(uint64(s[0]))
		c.u64(uint64(s[1]))
	}
	crc := c.crc
	c.u32(crc)
	c.u32(version)
	c.write([]byte(footerMagic))
	if c.err == nil {
		c.err = c.w.Flush()
	}
	if c.err != nil {
		return c.n, fmt.Errorf("ivfpq: write: %w", c.err)
	}
	return c.n, nil
}

// Open opens an index serialised by WriteTo from data, which may be an mmap
// of the file: the inverted lists' codes (and ids, when data is 4-byte
// aligned) alias data without copying, so data must stay valid and
// unmodified while the index is used. Every length, offset and the CRC32C
// are verified; malformed input returns a *CorruptError (errors.Is
// ErrCorrupt) with path "<bytes>" and the byte offset; a newer format
// version returns ErrVersion. Search parameters and refine vectors are not
// stored. Cost: O(len(data)) (checksum and id set), plus O(Dim³) for the
// orthogonality check of an OPQ rotation (max |R·Rᵀ − I| ≤ 1e-3).
func Open(data []byte) (*Index, error) { return openBytes(data, "<bytes>") }

func openBytes(data []byte, path string) (ix *Index, err error) {
	corrupt := func(off int64, format string, a ...any) error {
		return base.Corruptf(corruptKind, path, off, format, a...)
	}
	size := int64(len(data))
	if size < headerSize+footerSize {
		return nil, corrupt(size, "file has %d bytes, shorter than header + footer (%d)", size, headerSize+footerSize)
	}
	if string(data[:8]) != fileMagic {
		return nil, corrupt(0, "bad magic %q", data[:8])
	}
	le := binary.LittleEndian
	version := le.Uint32(data[8:])
	if version == 0 {
		return nil, corrupt(8, "format version 0")
	}
	if version > formatVersion {
		return nil, fmt.Errorf("%w: %s has version %d, this reader knows ≤ %d", ErrVersion, path, version, formatVersion)
	}
	nsec := sectionsOf(version)
	if size < headerSize+footerSizeOf(version) {
		return nil, corrupt(size, "file has %d bytes, shorter than header + version %d footer (%d)", size, version, headerSize+footerSizeOf(version))
	}
	fstart := size - footerSizeOf(version)
	if string(data[size-8:]) != footerMagic {
		return nil, corrupt(size-8, "bad footer magic %q", data[size-8:])
	}
	if v := le.Uint32(data[size-12:]); v != version {
		return nil, corrupt(size-12, "footer version %d differs from header version %d", v, version)
	}
	if want, got := le.Uint32(data[size-16:]), crc32.Checksum(data[:size-16], castagnoli); want != got {
		return nil, corrupt(size-16, "CRC32C mismatch: stored %#08x, computed %#08x", want, got)
	}
	h := func(i int) uint32 { return le.Uint32(data[12+4*i:]) }
	flags, dim, metric, nlist, m, nbits := h(0), h(1), h(2), h(3), h(4), h(5)
	ntotal := le.Uint64(data[40:])
	nextID := le.Uint64(data[48:])
	o := Options{Dim: int(dim), Metric: Metric(metric), Nlist: int(nlist), M: int(m), Nbits: int(nbits), Residual: ResidualOn}
	if flags&flagResidual == 0 {
		o.Residual = ResidualOff
	}
	known := uint32(flagResidual)
	if version >= 2 {
		known |= flagOPQ
	}
	if flags&^known != 0 || dim == 0 || dim > 1<<20 || m == 0 || m > dim {
		return nil, corrupt(12, "bad header: flags %#x, dim %d, M %d", flags, dim, m)
	}
	o = o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, corrupt(12, "bad header: %v", err)
	}
	var sec [numSections + 1][2]uint64
	for i := range sec[:nsec] {
		p := fstart + int64(16*i)
		off, ln := le.Uint64(data[p:]), le.Uint64(data[p+8:])
		if off < headerSize || off > uint64(fstart) || ln > uint64(fstart)-off {
			return nil, corrupt(p, "section %d [%d, +%d) outside [%d, %d)", i, off, ln, headerSize, fstart)
		}
		sec[i] = [2]uint64{off, ln}
	}
	ksub := uint64(1) << nbits
	want := [...]uint64{
		secCoarse:     uint64(nlist) * uint64(dim) * 4,
		secCodebooks:  uint64(dim) * ksub * 4,
		secDirectory:  uint64(nlist) * 16,
		secIDs:        ntotal * 4,
		secCodes:      sec[secCodes][1], // checked against the directory
		secTombstones: sec[secTombstones][1],
		secRotation:   0,
	}
	if flags&flagOPQ != 0 {
		want[secRotation] = uint64(dim) * uint64(dim) * 4
	}
	if ntotal > 1<<32 {
		return nil, corrupt(40, "%d vectors exceed the uint32 id space", ntotal)
	}
	if nextID > 1<<32 {
		return nil, corrupt(48, "next id %d exceeds 2^32", nextID)
	}
	for i, w := range want[:nsec] {
		if sec[i][1] != w {
			return nil, corrupt(fstart+int64(16*i)+8, "section %d has %d bytes, want %d", i, sec[i][1], w)
		}
	}
	ix, err = New(o)
	if err != nil {
		return nil, corrupt(12, "bad header: %v", err)
	}
	ix.coarse = readF32s(data[sec[secCoarse][0]:][:sec[secCoarse][1]])
	ix.pq, _ = newPQ(o.Dim, o.M, o.Nbits)
	ix.pq.Centroids = readF32s(data[sec[secCodebooks][0]:][:sec[secCodebooks][1]])
	if !finite(ix.coarse) || !finite(ix.pq.Centroids) {
		return nil, corrupt(int64(sec[secCoarse][0]), "non-finite centroid")
	}
	if flags&flagOPQ != 0 {
		rot := readF32s(data[sec[secRotation][0]:][:sec[secRotation][1]])
		if !finite(rot) {
			return nil, corrupt(int64(sec[secRotation][0]), "non-finite OPQ rotation")
		}
		if e := orthogonalityError(rot, o.Dim); !(e <= maxOrthogonalityError) {
			return nil, corrupt(int64(sec[secRotation][0]), "OPQ rotation is not orthogonal: max |R·Rᵀ − I| = %g > %g", e, maxOrthogonalityError)
		}
		ix.rot = rot
		ix.opts.OPQ = true
		ix.opts.OPQIters = defaultOPQIters
	}
	dir := data[sec[secDirectory][0]:][:sec[secDirectory][1]]
	idOff, codeOff := sec[secIDs][0], sec[secCodes][0]
	var idSum, codeSum uint64
	ids := readU32s(data[idOff:][:sec[secIDs][1]])
	bsz := uint64(16 * ((m + 1) / 2) * 2)
	for l := range ix.lists {
		cnt, clen := le.Uint64(dir[16*l:]), le.Uint64(dir[16*l+8:])
		p := int64(sec[secDirectory][0]) + int64(16*l)
		if cnt > ntotal-idSum {
			return nil, corrupt(p, "list %d holds %d vectors, more than the %d left of %d", l, cnt, ntotal-idSum, ntotal)
		}
		wantLen := cnt * uint64(m)
		if nbits == 4 {
			wantLen = (cnt + 31) / 32 * bsz
		}
		if clen != wantLen {
			return nil, corrupt(p+8, "list %d has %d code bytes, want %d", l, clen, wantLen)
		}
		if clen > sec[secCodes][1]-codeSum {
			return nil, corrupt(p+8, "list %d codes overrun the codes section", l)
		}
		ix.lists[l] = invList{
			ids:   ids[idSum : idSum+cnt : idSum+cnt],
			codes: data[codeOff+codeSum : codeOff+codeSum+clen : codeOff+codeSum+clen],
		}
		idSum += cnt
		codeSum += clen
	}
	if idSum != ntotal || codeSum != sec[secCodes][1] {
		return nil, corrupt(int64(sec[secDirectory][0]), "lists hold %d vectors and %d code bytes; header says %d vectors, codes section %d bytes", idSum, codeSum, ntotal, sec[secCodes][1])
	}
	for i, id := range ids {
		if !ix.present.CheckedAdd(id) {
			return nil, corrupt(int64(idOff)+int64(4*i), "duplicate id %d", id)
		}
		if uint64(id) >= nextID {
			return nil, corrupt(int64(idOff)+int64(4*i), "id %d ≥ next id %d", id, nextID)
		}
	}
	ix.nextID = nextID
	if err := readBitmap(ix.deleted, data[sec[secTombstones][0]:][:sec[secTombstones][1]]); err != nil {
		return nil, corrupt(int64(sec[secTombstones][0]), "tombstones: %v", err)
	}
	if ix.deleted.AndCardinality(ix.present) != ix.deleted.GetCardinality() {
		return nil, corrupt(int64(sec[secTombstones][0]), "tombstone for an id that is not stored")
	}
	ix.trained = true
	return ix, nil
}

// readBitmap decodes a portable roaring bitmap, turning a panic on
// malformed input into an error.
func readBitmap(b *roaring.Bitmap, data []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed roaring bitmap: %v", r)
		}
	}()
	n, err := b.ReadFrom(bytes.NewReader(data))
	if err != nil {
		return err
	}
	if n != int64(len(data)) {
		return fmt.Errorf("bitmap uses %d of %d bytes", n, len(data))
	}
	return b.Validate()
}

// maxOrthogonalityError bounds max |R·Rᵀ − I| of a stored OPQ rotation
// (a float32 rotation from the SVD is within ~d·2^-24 of orthogonal).
const maxOrthogonalityError = 1e-3

func readF32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// readU32s returns b as little-endian uint32s, aliasing b when the platform
// is little-endian and b is 4-byte aligned, else copying.
func readU32s(b []byte) []uint32 {
	n := len(b) / 4
	if n == 0 {
		return nil
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
