package hnsw

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"

	"github.com/stratasearch/strata/internal/inspect"
)

var sectionNames = [numSections]string{"vectors", "level0", "levels", "upperOff", "upper", "labels", "present", "deleted", "codes", "sq8"}

// Inspect describes an index file (the format drawn in persist.go) without
// opening the index: header fields, the section table, the whole-file
// CRC32C recomputed, and every inconsistency between them (newer version,
// bad trailer, section out of bounds, misaligned or of the wrong length for
// the header's n, dim, M and upperSlots) as a problem with its byte offset.
// It does not check the graph's links (Open does). Cost: one CRC pass over
// b plus O(n/32) for the bitset counts.
//
// Errors: only when b does not start with the "STRHNSW\x00" magic.
func Inspect(b []byte) (*inspect.Info, error) {
	if len(b) < len(fileMagic) || string(b[:len(fileMagic)]) != fileMagic {
		return nil, fmt.Errorf("hnsw: not an HNSW index file (no %q magic)", fileMagic)
	}
	size := int64(len(b))
	in := &inspect.Info{Format: "STRHNSW", Size: size}
	in.Add("magic", "STRHNSW\\0", 0)
	if size < headerSize {
		in.Problemf(size, "truncated: %d bytes, shorter than the %d-byte header", size, headerSize)
		return in, nil
	}
	u32 := func(off int64) uint32 { v, _ := inspect.U32(b, off); return v }
	version := u32(8)
	in.Version = int(version)
	in.Add("version", version, 8)
	if version == 0 || version > fileVersion {
		in.Problemf(8, "format version %d not supported (this build reads 1..%d)", version, fileVersion)
		return in, nil
	}
	metric := Metric(u32(12))
	dim, m, efc, flags := int(u32(16)), int(u32(20)), int(u32(24)), u32(28)
	n, slots, entry, maxL := int64(u32(32)), int64(u32(36)), u32(40), u32(44)
	seed, _ := inspect.U64(b, 48)
	storage := Storage(u32(56))
	in.Add("metric", metric.String(), 12)
	in.Add("dim", dim, 16)
	in.Add("M", m, 20)
	in.Add("efConstruction", efc, 24)
	in.Add("flags", fmt.Sprintf("%#x (extend=%v keepPruned=%v)", flags, flags&1 != 0, flags&2 != 0), 28)
	in.Add("n", n, 32)
	in.Add("upperSlots", slots, 36)
	if maxL == math.MaxUint32 {
		in.Add("entry", "none (empty)", 40)
		in.Add("maxLevel", "none", 44)
	} else {
		in.Add("entry", entry, 40)
		in.Add("maxLevel", maxL, 44)
	}
	in.Add("seed", seed, 48)
	in.Add("storage", storage.String(), 56)
	opts := Options{Dim: dim, Metric: metric, M: m, EfConstruction: efc, Storage: storage}
	if err := opts.Validate(); err != nil {
		in.Problemf(12, "bad header: %v", err)
	}
	if flags&^3 != 0 {
		in.Problemf(28, "unknown flags %#x", flags)
	}
	if n == 0 && maxL != math.MaxUint32 || n > 0 && (maxL > maxLevelCap || int64(entry) >= n) {
		in.Problemf(40, "bad entry point %d / max level %d for %d nodes", entry, maxL, n)
	}
	if size < headerSize+trailerSize+4 {
		in.Problemf(size, "truncated: %d bytes, shorter than header, section table and trailer", size)
		return in, nil
	}
	if !bytes.Equal(b[size-4:], []byte(endMagic)) {
		in.Problemf(size-4, "bad trailer magic %q (truncated file?)", b[size-4:])
		return in, nil
	}
	tableOff := int64(u32(size-16)) | int64(u32(size-12))<<32
	stored := u32(size - 8)
	in.Add("tableOffset", tableOff, size-16)
	in.Add("crc32c", fmt.Sprintf("%08x", stored), size-8)
	in.Check("file", size-8, 0, size-8, stored, crc32.Checksum(b[:size-8], castagnoli))
	if tableOff < headerSize || tableOff > size-trailerSize-4 {
		in.Problemf(size-16, "section table offset %d out of range [%d, %d]", tableOff, headerSize, size-trailerSize-4)
		return in, nil
	}
	count := int64(u32(tableOff))
	in.Add("sections", count, tableOff)
	if count != numSections || tableOff+4+count*24 != size-trailerSize {
		in.Problemf(tableOff, "section table: %d entries, want %d ending at the trailer", count, numSections)
		if count > numSections || tableOff+4+count*24 > size-trailerSize {
			return in, nil
		}
	}
	words := (n + 31) / 32
	want := sectionLengths(version, n, dim, m, slots, storage)
	var secs [numSections][]byte
	end := int64(headerSize)
	for i := int64(0); i < count; i++ {
		at := tableOff + 4 + i*24
		kind := u32(at)
		off, _ := inspect.U64(b, at+8)
		ln, _ := inspect.U64(b, at+16)
		name := fmt.Sprintf("kind%d", kind)
		if kind >= 1 && kind <= numSections {
			name = sectionNames[kind-1]
		}
		in.AddSection(name, int64(off), int64(ln), nil)
		if kind != uint32(i+1) {
			in.Problemf(at, "section %d has kind %d", i+1, kind)
		}
		if i < numSections && ln != want[i] && !packedSection(version, int(i)+1) && !(i == secSQ8-1 && storage == SQ8 && n == 0 && ln == 8*uint64(dim)) {
			in.Problemf(at+16, "section %s length %d, header implies %d", name, ln, want[i])
		}
		if off%sectionAlign != 0 || !inspect.Within(off, ln, end, tableOff) {
			in.Problemf(at+8, "section %s at [%d, +%d) outside [%d, %d) or misaligned", name, off, ln, end, tableOff)
			continue
		}
		if i < numSections {
			secs[i] = b[off : off+ln]
		}
		end = int64(off + ln)
	}
	present, deleted := secs[secPresent-1], secs[secDeleted-1]
	if int64(len(present)) == 4*words && int64(len(deleted)) == 4*words {
		var np, nd int
		for w := int64(0); w < words; w++ {
			p, _ := inspect.U32(present, 4*w)
			d, _ := inspect.U32(deleted, 4*w)
			np += bits.OnesCount32(p)
			nd += bits.OnesCount32(d & p)
		}
		in.Add("present", np, -1)
		in.Add("deleted", nd, -1)
		in.Add("live", np-nd, -1)
	}
	return in, nil
}
