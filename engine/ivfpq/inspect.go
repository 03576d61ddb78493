package ivfpq

import (
	"fmt"
	"hash/crc32"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/internal/inspect"
)

var sectionNames = [numSections + 1]string{"coarse", "codebooks", "directory", "ids", "codes", "tombstones", "rotation"}

// Inspect describes an index file (layout in doc.go; a ColdCodec file has
// the same format with empty lists) without building the index: header
// fields, the six footer sections (seven in version 2: the OPQ
// rotation), the CRC32C recomputed, and every
// inconsistency (newer version, footer/header version mismatch, bad
// header, sections out of bounds or of the wrong length, list directory
// not adding up to ntotal and the codes section, unreadable tombstone
// bitmap) as a problem with its byte offset. Ids are not checked for
// uniqueness (Open does). Cost: one CRC pass plus O(nlist) and the
// tombstone bitmap.
//
// Errors: only when b does not start with the "STRAIVPQ" magic.
func Inspect(b []byte) (*inspect.Info, error) {
	if len(b) < len(fileMagic) || string(b[:len(fileMagic)]) != fileMagic {
		return nil, fmt.Errorf("ivfpq: not an IVF-PQ index file (no %q magic)", fileMagic)
	}
	size := int64(len(b))
	in := &inspect.Info{Format: "STRAIVPQ", Size: size}
	in.Add("magic", fileMagic, 0)
	if size < headerSize {
		in.Problemf(size, "truncated: %d bytes, shorter than the %d-byte header", size, headerSize)
		return in, nil
	}
	u32 := func(off int64) uint32 { v, _ := inspect.U32(b, off); return v }
	u64 := func(off int64) uint64 { v, _ := inspect.U64(b, off); return v }
	version := u32(8)
	in.Version = int(version)
	in.Add("version", version, 8)
	if version == 0 || version > formatVersion {
		in.Problemf(8, "format version %d not supported (this reader knows 1..%d)", version, formatVersion)
		return in, nil
	}
	flags, dim, metric, nlist, m, nbits := u32(12), u32(16), Metric(u32(20)), u32(24), u32(28), u32(32)
	ntotal, nextID := u64(40), u64(48)
	in.Add("flags", fmt.Sprintf("%#x (residual=%v, opq=%v)", flags, flags&flagResidual != 0, flags&flagOPQ != 0), 12)
	in.Add("dim", dim, 16)
	in.Add("metric", metric.String(), 20)
	in.Add("nlist", nlist, 24)
	in.Add("M", m, 28)
	in.Add("nbits", nbits, 32)
	in.Add("ntotal", ntotal, 40)
	in.Add("nextID", nextID, 48)
	o := Options{Dim: int(dim), Metric: metric, Nlist: int(nlist), M: int(m), Nbits: int(nbits), Residual: ResidualOn}
	known := uint32(flagResidual)
	if version >= 2 {
		known |= flagOPQ
	}
	if flags&^known != 0 || dim == 0 || dim > 1<<20 || m == 0 || m > dim {
		in.Problemf(12, "bad header: flags %#x, dim %d, M %d", flags, dim, m)
	} else if err := o.EnsureDefaults().Validate(); err != nil {
		in.Problemf(12, "bad header: %v", err)
	}
	if ntotal > 1<<32 {
		in.Problemf(40, "%d vectors exceed the uint32 id space", ntotal)
	}
	if nextID > 1<<32 {
		in.Problemf(48, "next id %d exceeds 2^32", nextID)
	}
	in.Add("coldCodec", m == ColdM && nbits == 8 && nlist <= ColdMaxNlist && ntotal == 0, -1)
	nsec := sectionsOf(version)
	if size < headerSize+footerSizeOf(version) {
		in.Problemf(size, "truncated: %d bytes, shorter than header and footer (%d)", size, headerSize+footerSizeOf(version))
		return in, nil
	}
	fstart := size - footerSizeOf(version)
	if string(b[size-8:]) != footerMagic {
		in.Problemf(size-8, "bad footer magic %q (truncated file?)", b[size-8:])
		return in, nil
	}
	fver, stored := u32(size-12), u32(size-16)
	in.Add("footerVersion", fver, size-12)
	in.Add("crc32c", fmt.Sprintf("%08x", stored), size-16)
	if fver != version {
		in.Problemf(size-12, "footer version %d differs from header version %d", fver, version)
	}
	in.Check("file", size-16, 0, size-16, stored, crc32.Checksum(b[:size-16], castagnoli))
	ksub := uint64(1) << (nbits & 31)
	want := [...]uint64{
		secCoarse:    uint64(nlist) * uint64(dim) * 4,
		secCodebooks: uint64(dim) * ksub * 4,
		secDirectory: uint64(nlist) * 16,
		secIDs:       ntotal * 4,
	}
	rotLen := uint64(0)
	if flags&flagOPQ != 0 {
		rotLen = uint64(dim) * uint64(dim) * 4
	}
	var sec [numSections + 1][]byte
	var secOff [numSections + 1]int64
	for i := range sec[:nsec] {
		p := fstart + int64(16*i)
		off, ln := u64(p), u64(p+8)
		in.AddSection(sectionNames[i], int64(off), int64(ln), nil)
		if !inspect.Within(off, ln, headerSize, fstart) {
			in.Problemf(p, "section %s [%d, +%d) outside [%d, %d)", sectionNames[i], off, ln, headerSize, fstart)
			continue
		}
		if i < len(want) && ln != want[i] {
			in.Problemf(p+8, "section %s has %d bytes, header implies %d", sectionNames[i], ln, want[i])
			continue
		}
		if i == secRotation && ln != rotLen {
			in.Problemf(p+8, "section %s has %d bytes, header implies %d", sectionNames[i], ln, rotLen)
			continue
		}
		sec[i], secOff[i] = b[off:off+ln], int64(off)
	}
	if dir := sec[secDirectory]; dir != nil && sec[secCodes] != nil && m > 0 {
		var idSum, codeSum uint64
		bsz := uint64(16 * ((m + 1) / 2) * 2)
		empty := 0
		for l := uint64(0); l < uint64(nlist); l++ {
			p := secOff[secDirectory] + int64(16*l)
			cnt, clen := u64(p), u64(p+8)
			wantLen := cnt * uint64(m)
			if nbits == 4 {
				wantLen = (cnt + 31) / 32 * bsz
			}
			if cnt > 1<<32 || clen != wantLen {
				in.Problemf(p+8, "list %d: %d vectors, %d code bytes, want %d", l, cnt, clen, wantLen)
				break
			}
			if cnt == 0 {
				empty++
			}
			idSum += cnt
			codeSum += clen
		}
		if idSum != ntotal || codeSum != uint64(len(sec[secCodes])) {
			in.Problemf(secOff[secDirectory], "lists hold %d vectors and %d code bytes; header says %d vectors, codes section %d bytes",
				idSum, codeSum, ntotal, len(sec[secCodes]))
		}
		in.Add("emptyLists", empty, -1)
	}
	if tb := sec[secTombstones]; tb != nil {
		bm := roaring.New()
		if err := readBitmap(bm, tb); err != nil {
			in.Problemf(secOff[secTombstones], "tombstones: %v", err)
		} else {
			in.Add("tombstones", bm.GetCardinality(), -1)
		}
	}
	return in, nil
}
