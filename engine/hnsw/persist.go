package hnsw

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"unsafe"

	"github.com/stratasearch/strata/internal/base"
)

// File format, version 3. All integers little-endian; every section
// starts at a multiple of 64 bytes, so that an mmap of the file (page
// aligned) can be used in place as []float32 / []uint8 / []uint32 where
// the layout below is fixed-width (vectors, levels, bitsets, codes).
//
//	offset 0   header (64 bytes)
//	           magic "STRHNSW\x00" | version u32 | metric u32 | dim u32 | M u32 |
//	           efConstruction u32 | flags u32 (1 extend, 2 keepPruned) |
//	           n u32 | upperSlots u32 | entry u32 | maxLevel u32 (0xFFFFFFFF: empty) |
//	           seed u64 | storage u32 (1 float32, 2 sq8) | reserved (zero)
//	64         section 1 vectors   n·dim float32 (cosine rows unit length)
//	           section 2 level0    n packed link lists (pack.go), node order
//	           section 3 levels    uvarint count, then count × {uvarint
//	                               gap | u8 level}: the nodes whose top
//	                               level is above 0, ascending (gap: the
//	                               id minus the previous listed id + 1,
//	                               the first's id), each level ≥ 1 (pack.go)
//	           section 4 upperOff  empty: node id's upper slots start at
//	                               Σ levels[j<id]; upperSlots = Σ levels
//	           section 5 upper     upperSlots packed link lists: node order,
//	                               then layer 1 … levels[id]
//	           section 6 labels    n uvarint zigzag deltas (pack.go), or
//	                               empty when the labels are 0 … n−1
//	           section 7 present   ⌈n/32⌉ u32 bitset
//	           section 8 deleted   ⌈n/32⌉ u32 bitset (tombstones)
//	           section 9 codes     sq8: n·dim u8; float32: empty
//	           section 10 sq8      sq8 (trained): dim float32 scales, then dim offsets; else empty
//	           (zero padding to 64 between sections)
//	table      count u32, then count × {kind u32, reserved u32, offset u64, length u64}
//	trailer    tableOffset u64 | crc32c u32 of every byte before it | "HNSE"
//
// Version 1 (still read) stored section 2 as n·(1+2M) u32 rows [count,
// ids…], section 4 as n u32 first upper slots, section 5 as
// upperSlots·(1+M) u32 rows and section 6 as n u64, all used in place.
// Version 2 packs them; Open decodes them into the heap (about 4·(1+2M)
// bytes per node), the vectors stay in place. Version 2 (still read)
// stores section 3 as n u8 and section 6 always as the deltas: at M = 16
// about one node in 16 has a level above 0, and a segment's labels are
// usually its row numbers, so version 3 saves about 1.9 bytes a node.
//
// Readers accept versions ≤ fileVersion and refuse newer ones.
const (
	fileMagic    = "STRHNSW\x00"
	endMagic     = "HNSE"
	fileVersion  = 3
	headerSize   = 64
	trailerSize  = 16
	sectionAlign = 64
)

const (
	secVectors = 1 + iota
	secLevel0
	secLevels
	secUpperOff
	secUpper
	secLabels
	secPresent
	secDeleted
	secCodes
	secSQ8
	numSections = secSQ8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// packedSection reports whether section kind (1-based) has a variable,
// packed length in files of the given version.
func packedSection(version uint32, kind int) bool {
	return version >= 2 && (kind == secLevel0 || kind == secUpper || kind == secLabels) ||
		version >= 3 && kind == secLevels
}

// sectionLengths returns the byte length every section must have for a
// file of the given version with n nodes of dimension dim, M = m, slots
// upper-layer slots and the given vector storage (shared by the reader and
// Inspect). Packed sections (packedSection) have no fixed length; their
// entry is 0 and is not checked.
func sectionLengths(version uint32, n int64, dim, m int, slots int64, storage Storage) [numSections]uint64 {
	words := (n + 31) / 32
	want := [numSections]uint64{
		uint64(n) * uint64(dim) * 4,
		uint64(n) * uint64(1+2*m) * 4,
		uint64(n),
		uint64(n) * 4,
		uint64(slots) * uint64(1+m) * 4,
		uint64(n) * 8,
		uint64(words) * 4,
		uint64(words) * 4,
		0,
		0,
	}
	if storage == SQ8 {
		want[secCodes-1] = uint64(n) * uint64(dim)
		if n > 0 {
			want[secSQ8-1] = 8 * uint64(dim)
		}
	}
	if version >= 2 {
		want[secLevel0-1], want[secUpperOff-1], want[secUpper-1], want[secLabels-1] = 0, 0, 0, 0
	}
	return want
}

func asBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

func fromBytes[T any](b []byte) []T {
	if len(b) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(z)))
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

type crcWriter struct {
	w   io.Writer
	crc uint32
	n   int64
	err error
}

func (c *crcWriter) write(p []byte) {
	if c.err != nil {
		return
	}
	m, err := c.w.Write(p)
	c.crc = crc32.Update(c.crc, castagnoli, p[:m])
	c.n += int64(m)
	c.err = err
}

var zeros [sectionAlign]byte

// WriteTo writes the index in the versioned file format above. It holds
// the index exclusively while writing (inserts, deletes and searches wait),
// so the snapshot is consistent. It returns the bytes written.
func (ix *Index) WriteTo(w io.Writer) (int64, error) {
	if !littleEndian() {
		return 0, errors.New("hnsw: WriteTo needs a little-endian host")
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return 0, ErrClosed
	}
	ix.allocMu.Lock()
	n := int(ix.next)
	slots := int(ix.upperUsed)
	ix.allocMu.Unlock()
	// A concurrent Add may have reserved ids and upper slots (alloc) but not
	// yet grown the arrays (ensureCap) or stored the vector. Such nodes are
	// not present yet, and every stored node fits in the arrays, so clamping
	// to the allocated capacity drops only nodes no Add has returned.
	n = min(n, len(ix.levels))
	slots = min(slots, len(ix.upper)/ix.strideU)
	words := (n + 31) / 32
	level0, upper, nslots := ix.packLinks(n, slots)

	var h [headerSize]byte
	copy(h[:8], fileMagic)
	le := binary.LittleEndian
	le.PutUint32(h[8:], fileVersion)
	le.PutUint32(h[12:], uint32(ix.metric))
	le.PutUint32(h[16:], uint32(ix.dim))
	le.PutUint32(h[20:], uint32(ix.m))
	le.PutUint32(h[24:], uint32(ix.opts.EfConstruction))
	var flags uint32
	if ix.opts.ExtendCandidates {
		flags |= 1
	}
	if ix.opts.KeepPrunedConnections {
		flags |= 2
	}
	le.PutUint32(h[28:], flags)
	le.PutUint32(h[32:], uint32(n))
	le.PutUint32(h[36:], uint32(nslots))
	ep, maxL, ok := ix.entry()
	if !ok {
		le.PutUint32(h[40:], 0)
		le.PutUint32(h[44:], math.MaxUint32)
	} else {
		le.PutUint32(h[40:], ep)
		le.PutUint32(h[44:], uint32(maxL))
	}
	le.PutUint64(h[48:], ix.opts.Seed)
	le.PutUint32(h[56:], uint32(ix.opts.Storage))
	var codes, params []byte
	if ix.quant {
		codes = ix.codes[:n*ix.dim]
		if ix.trained.Load() {
			params = append(asBytes(slicesClone(ix.sqScale)), asBytes(ix.sqOffset)...)
		}
	}

	cw := &crcWriter{w: w}
	cw.write(h[:])
	secs := [numSections][]byte{
		asBytes(ix.vecs[:n*ix.dim]),
		level0,
		appendLevels(nil, ix.levels[:n]),
		nil,
		upper,
		appendLabelsOrIdentity(ix.labels[:n]),
		asBytes(ix.present[:words]),
		asBytes(ix.deleted[:words]),
		codes,
		params,
	}
	var table bytes.Buffer
	var e [24]byte
	binary.LittleEndian.PutUint32(e[:4], numSections)
	table.Write(e[:4])
	for i, s := range secs {
		off := cw.n
		le.PutUint32(e[0:], uint32(i+1))
		le.PutUint32(e[4:], 0)
		le.PutUint64(e[8:], uint64(off))
		le.PutUint64(e[16:], uint64(len(s)))
		table.Write(e[:])
		cw.write(s)
		if pad := int(-cw.n & (sectionAlign - 1)); pad > 0 {
			cw.write(zeros[:pad])
		}
	}
	tableOff := cw.n
	cw.write(table.Bytes())
	var tr [trailerSize]byte
	le.PutUint64(tr[:8], uint64(tableOff))
	cw.write(tr[:8])
	le.PutUint32(tr[8:], cw.crc)
	copy(tr[12:], endMagic)
	cw.write(tr[8:])
	return cw.n, cw.err
}

// Open returns a read-only index over data, a complete file written by
// WriteTo. data is used in place (not copied) when it is 8-byte aligned,
// as an mmap or a Go heap buffer is; otherwise it is copied once into an aligned buffer. data
// must not change while the index is in use. Every structural field is
// validated (CRC32C, section bounds, link counts and ids), so a corrupt
// file gives a *CorruptError (errors.Is(err, ErrCorrupt)) naming the byte
// offset, never a panic.
func Open(data []byte) (*Index, error) { return openBytes(data, "") }

func openBytes(data []byte, path string) (*Index, error) {
	bad := func(off int64, format string, args ...any) error {
		return base.Corruptf(corruptKind, path, off, format, args...)
	}
	if !littleEndian() {
		return nil, errors.New("hnsw: Open needs a little-endian host")
	}
	size := int64(len(data))
	if size < headerSize+trailerSize+4 {
		return nil, bad(0, "file of %d bytes is shorter than header and trailer", size)
	}
	if string(data[:8]) != fileMagic {
		return nil, bad(0, "bad magic %q", data[:8])
	}
	le := binary.LittleEndian
	version := le.Uint32(data[8:])
	if version == 0 || version > fileVersion {
		return nil, fmt.Errorf("hnsw: %s: file format version %d not supported (this build reads ≤ %d)", pathOr(path), version, fileVersion)
	}
	if string(data[size-4:]) != endMagic {
		return nil, bad(size-4, "bad trailer magic (truncated file?)")
	}
	if got, want := crc32.Checksum(data[:size-8], castagnoli), le.Uint32(data[size-8:]); got != want {
		return nil, bad(size-8, "CRC32C mismatch: stored %08x, computed %08x", want, got)
	}
	metric := Metric(le.Uint32(data[12:]))
	dim := int(le.Uint32(data[16:]))
	m := int(le.Uint32(data[20:]))
	efc := int(le.Uint32(data[24:]))
	flags := le.Uint32(data[28:])
	n := int(le.Uint32(data[32:]))
	slots := int(le.Uint32(data[36:]))
	entry := le.Uint32(data[40:])
	maxL := le.Uint32(data[44:])
	storage := Storage(le.Uint32(data[56:]))
	opts := Options{Dim: dim, Metric: metric, M: m, EfConstruction: efc, Seed: le.Uint64(data[48:]),
		ExtendCandidates: flags&1 != 0, KeepPrunedConnections: flags&2 != 0, InitialCapacity: 0, Storage: storage}
	if err := opts.Validate(); err != nil {
		return nil, bad(12, "bad header: %v", err)
	}
	if flags&^3 != 0 {
		return nil, bad(28, "unknown flags %#x", flags)
	}
	if n == 0 && maxL != math.MaxUint32 || n > 0 && (maxL > maxLevelCap || int(entry) >= n) {
		return nil, bad(40, "bad entry point %d / max level %d for %d nodes", entry, maxL, n)
	}

	tableOff := int64(le.Uint64(data[size-16:]))
	if tableOff < headerSize || tableOff > size-trailerSize-4 {
		return nil, bad(size-16, "section table offset %d out of range", tableOff)
	}
	count := int64(le.Uint32(data[tableOff:]))
	if count != numSections || tableOff+4+count*24 != size-trailerSize {
		return nil, bad(tableOff, "section table: %d entries, want %d ending at the trailer", count, numSections)
	}
	words := (n + 31) / 32
	want := sectionLengths(version, int64(n), dim, m, int64(slots), storage)
	var secs [numSections][]byte
	var secOff [numSections]int64
	end := int64(headerSize)
	for i := range secs {
		at := tableOff + 4 + int64(i)*24
		kind := le.Uint32(data[at:])
		off := le.Uint64(data[at+8:])
		ln := le.Uint64(data[at+16:])
		if kind != uint32(i+1) {
			return nil, bad(at, "section %d has kind %d", i+1, kind)
		}
		if ln != want[i] && !packedSection(version, i+1) && !(i == secSQ8-1 && storage == SQ8 && n == 0 && ln == 8*uint64(dim)) {
			return nil, bad(at+16, "section %d length %d, want %d", i+1, ln, want[i])
		}
		if off%sectionAlign != 0 || off < uint64(end) || off > uint64(tableOff) || ln > uint64(tableOff)-off {
			return nil, bad(at+8, "section %d at [%d, +%d) outside [%d, %d) or misaligned", i+1, off, ln, end, tableOff)
		}
		secs[i] = data[off : off+ln : off+ln]
		secOff[i] = int64(off)
		end = int64(off + ln)
	}
	// In-place use needs 8-byte alignment of the buffer.
	if uintptr(unsafe.Pointer(&data[0]))%8 != 0 {
		buf := make([]uint64, (len(data)+7)/8)
		copy(asBytes(buf), data)
		return openBytes(asBytes(buf)[:len(data)], path)
	}
	ix := newIndex(opts.EnsureDefaults())
	ix.readOnly = true
	ix.path = path
	ix.vecs = fromBytes[float32](secs[0])
	ix.levels = secs[2]
	if version >= 3 {
		ix.levels = make([]uint8, n)
		if at, msg := readLevels(ix.levels, secs[2]); at >= 0 {
			return nil, bad(secOff[2]+int64(at), "levels: %s", msg)
		}
	}
	if version >= 2 {
		if err := ix.unpackLinks(version, secs, secOff, n, slots, bad); err != nil {
			return nil, err
		}
	} else {
		ix.level0 = fromBytes[uint32](secs[1])
		ix.upperOff = fromBytes[uint32](secs[3])
		ix.upper = fromBytes[uint32](secs[4])
		ix.labels = fromBytes[uint64](secs[5])
	}
	ix.present = fromBytes[uint32](secs[6])
	ix.deleted = fromBytes[uint32](secs[7])
	if ix.quant {
		ix.codes = secs[8]
		if p := fromBytes[float32](secs[9]); len(p) == 2*dim {
			ix.sqScale, ix.sqOffset = p[:dim:dim], p[dim:]
			ix.trained.Store(true)
		}
	}
	ix.next = uint32(n)
	ix.upperUsed = uint32(slots)
	// Empty bitset slices still need a word for isDeleted on id 0.
	if n == 0 {
		ix.present, ix.deleted = []uint32{0}, []uint32{0}
	}

	// Validate the graph so that a search can never index out of range.
	offOf := func(sec int, idx int64, elem int64) int64 { return secOff[sec] + idx*elem }
	var ndel int64
	for w := 0; w < words; w++ {
		ndel += int64(bits.OnesCount32(ix.deleted[w]))
	}
	ix.numDeleted.Store(ndel)
	for id := 0; id < n; id++ {
		lv := int(ix.levels[id])
		// A node may sit above the entry point's level only if it is
		// deleted: deleting the top entry point moves the entry to the
		// highest live level (replaceEntry), leaving taller tombstones.
		if lv > maxLevelCap || (lv > int(maxL) && ix.present[id>>5]&(1<<(id&31)) != 0 && ix.deleted[id>>5]&(1<<(id&31)) == 0) {
			return nil, bad(offOf(2, int64(id), 1), "node %d level %d above max level %d", id, lv, maxL)
		}
		if lv > 0 && uint64(ix.upperOff[id])+uint64(lv) > uint64(slots) {
			return nil, bad(offOf(3, int64(id), 4), "node %d upper slots [%d, +%d) beyond %d", id, ix.upperOff[id], lv, slots)
		}
		for lc := 0; lc <= lv; lc++ {
			l := ix.links(uint32(id), lc)
			base := int64(id) * int64(ix.stride0)
			sec := 1
			if lc > 0 {
				base = int64(ix.upperOff[id]+uint32(lc-1)) * int64(ix.strideU)
				sec = 4
			}
			if int(l[0]) > len(l)-1 {
				return nil, bad(offOf(sec, base, 4), "node %d layer %d: %d links, max %d", id, lc, l[0], len(l)-1)
			}
			for i := 1; i <= int(l[0]); i++ {
				if int(l[i]) >= n || int(ix.levels[l[i]]) < lc {
					at := offOf(sec, base+int64(i), 4)
					if version >= 2 {
						at = secOff[sec] + int64(listStart(secs[sec], int(base)/ix.stride0, ix.mmax0))
						if lc > 0 {
							at = secOff[sec] + int64(listStart(secs[sec], int(base)/ix.strideU, ix.m))
						}
					}
					return nil, bad(at, "node %d layer %d links bad id %d", id, lc, l[i])
				}
			}
		}
	}
	if n > 0 {
		if int(ix.levels[entry]) != int(maxL) {
			return nil, bad(40, "entry point %d has level %d, header says %d", entry, ix.levels[entry], maxL)
		}
		ix.setEntry(entry, int(maxL))
	}
	return ix, nil
}

// packLinks packs the link lists of the first n nodes (slots upper slots
// in use) in the version 2 layout (pack.go). It returns the level0 and
// upper sections and the number of upper lists, Σ levels[id < n].
func (ix *Index) packLinks(n, slots int) (level0, upper []byte, nslots int) {
	var scratch []uint32
	level0 = make([]byte, 0, n*(ix.mmax0+4))
	for id := 0; id < n; id++ {
		l := ix.level0[id*ix.stride0 : (id+1)*ix.stride0]
		level0, scratch = appendList(level0, l[1:1+min(int(l[0]), ix.mmax0)], scratch)
	}
	for id := 0; id < n; id++ {
		for lc := 1; lc <= int(ix.levels[id]); lc++ {
			var ids []uint32
			if s := int(ix.upperOff[id]) + lc - 1; s < slots {
				l := ix.upper[s*ix.strideU : (s+1)*ix.strideU]
				ids = l[1 : 1+min(int(l[0]), ix.m)]
			}
			upper, scratch = appendList(upper, ids, scratch)
			nslots++
		}
	}
	return level0, upper, nslots
}

// unpackLinks decodes the packed sections of a version 2 or 3 file into heap
// arrays of the in-memory layout (level0, upperOff, upper, labels). Link
// ids are checked against n here; layers are checked by the caller.
func (ix *Index) unpackLinks(version uint32, secs [numSections][]byte, secOff [numSections]int64, n, slots int,
	bad func(off int64, format string, args ...any) error) error {
	ix.upperOff = make([]uint32, n)
	total := 0
	for id := 0; id < n; id++ {
		lv := int(ix.levels[id])
		if lv > maxLevelCap {
			return bad(secOff[secLevels-1]+int64(id), "node %d level %d above the cap %d", id, lv, maxLevelCap)
		}
		ix.upperOff[id] = uint32(total)
		total += lv
	}
	if total != slots {
		return bad(36, "upperSlots %d, but the node levels sum to %d", slots, total)
	}
	ix.level0 = make([]uint32, n*ix.stride0)
	r := listReader{b: secs[secLevel0-1]}
	for id := 0; id < n; id++ {
		if e := r.next(ix.level0[id*ix.stride0:(id+1)*ix.stride0], ix.mmax0, uint32(n)); e != nil {
			return bad(secOff[secLevel0-1]+int64(e.at), "level0 list of node %d: %s", id, e.msg)
		}
	}
	if r.pos != len(r.b) {
		return bad(secOff[secLevel0-1]+int64(r.pos), "level0: %d bytes after the last list", len(r.b)-r.pos)
	}
	ix.upper = make([]uint32, slots*ix.strideU)
	r = listReader{b: secs[secUpper-1]}
	for s := 0; s < slots; s++ {
		if e := r.next(ix.upper[s*ix.strideU:(s+1)*ix.strideU], ix.m, uint32(n)); e != nil {
			return bad(secOff[secUpper-1]+int64(e.at), "upper list %d: %s", s, e.msg)
		}
	}
	if r.pos != len(r.b) {
		return bad(secOff[secUpper-1]+int64(r.pos), "upper: %d bytes after the last list", len(r.b)-r.pos)
	}
	ix.labels = make([]uint64, n)
	if len(secs[secLabels-1]) == 0 && version >= 3 {
		for i := range ix.labels {
			ix.labels[i] = uint64(i)
		}
	} else if at := readLabels(ix.labels, secs[secLabels-1]); at >= 0 {
		return bad(secOff[secLabels-1]+int64(at), "labels: bad or missing varint (want %d labels in %d bytes)", n, len(secs[secLabels-1]))
	}
	return nil
}

// listStart returns the byte offset of packed list i in b (for error
// offsets; b was decoded successfully up to at least list i, each of at
// most maxCount links).
func listStart(b []byte, i, maxCount int) int {
	r := listReader{b: b}
	buf := make([]uint32, 1+maxCount)
	for k := 0; k < i; k++ {
		if r.next(buf, maxCount, math.MaxUint32) != nil {
			break
		}
	}
	return r.pos
}

func slicesClone(s []float32) []float32 { return append([]float32(nil), s...) }

func pathOr(p string) string {
	if p == "" {
		return "<bytes>"
	}
	return p
}

// Close releases the file mapping of an index from OpenFile; the index
// must not be used afterwards (calls return ErrClosed). Close on other
// indexes only marks them closed.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	ix.vecs, ix.level0, ix.levels, ix.upperOff, ix.upper, ix.labels = nil, nil, nil, nil, nil, nil
	ix.present, ix.deleted = []uint32{0}, []uint32{0}
	ix.codes, ix.sqScale, ix.sqOffset = nil, nil, nil
	ix.ep.Store(noEntry)
	if ix.closer != nil {
		return ix.closer()
	}
	return nil
}
