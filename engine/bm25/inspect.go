package bm25

import (
	"fmt"
	"hash/crc32"

	"github.com/stratasearch/strata/internal/inspect"
)

// Inspect describes a segment file (layout in doc.go) without opening it:
// header and footer fields, the six sections the footer implies, the
// CRC32C recomputed, and every inconsistency (newer version, unknown flags,
// bad footer, section offsets that do not follow from the counts, document
// lengths not summing to the footer's ΣDL) as a problem with its byte
// offset. Posting lists are not decoded (Segment.Verify does that). Cost:
// one CRC pass plus O(numDocs).
//
// Errors: only when b does not start with the "STRBM25\x00" magic.
func Inspect(b []byte) (*inspect.Info, error) {
	if len(b) < len(segMagic) || string(b[:len(segMagic)]) != segMagic {
		return nil, fmt.Errorf("bm25: not a BM25 segment (no %q magic)", segMagic)
	}
	size := int64(len(b))
	in := &inspect.Info{Format: "STRBM25", Size: size}
	in.Add("magic", "STRBM25\\0", 0)
	if size < headerBytes {
		in.Problemf(size, "truncated: %d bytes, shorter than the %d-byte header", size, headerBytes)
		return in, nil
	}
	u32 := func(off int64) uint32 { v, _ := inspect.U32(b, off); return v }
	u64 := func(off int64) uint64 { v, _ := inspect.U64(b, off); return v }
	version, flags := u32(8), u32(12)
	in.Version = int(version)
	in.Add("version", version, 8)
	in.Add("flags", fmt.Sprintf("%#x (positions=%v, packed=%v, extIDs=%v)", flags, flags&flagPositions != 0, flags&flagPacked != 0, flags&flagNoExtIDs == 0), 12)
	if version < segVersionMin || version > segVersion {
		if version > segVersion {
			in.Problemf(8, "format version %d is newer than this reader (%d)", version, segVersion)
		} else {
			in.Problemf(8, "unknown format version %d", version)
		}
		return in, nil
	}
	packed := flags&flagPacked != 0
	noExt := flags&flagNoExtIDs != 0
	if flags&^(flagPositions|flagPacked|flagNoExtIDs) != 0 || packed && version < 3 || noExt && version < 4 {
		in.Problemf(12, "unknown flags %#x for format version %d", flags, version)
	}
	if size < headerBytes+footerBytes {
		in.Problemf(size, "truncated: %d bytes, shorter than header and footer (%d)", size, headerBytes+footerBytes)
		return in, nil
	}
	fo := size - footerBytes
	if string(b[fo+60:]) != footerMagic {
		in.Problemf(fo+60, "bad footer magic %q (truncated file?)", b[fo+60:])
		return in, nil
	}
	docsOff, dictOff, termsOff, postOff := u64(fo), u64(fo+8), u64(fo+16), u64(fo+24)
	sumDL := u64(fo + 32)
	nd, nt, dictBytes := uint64(u32(fo+40)), uint64(u32(fo+44)), uint64(u32(fo+48))
	fver, stored := u32(fo+52), u32(fo+56)
	in.Add("docsOff", docsOff, fo)
	in.Add("dictOff", dictOff, fo+8)
	in.Add("termsOff", termsOff, fo+16)
	in.Add("postOff", postOff, fo+24)
	in.Add("sumDocLen", sumDL, fo+32)
	in.Add("numDocs", nd, fo+40)
	in.Add("numTerms", nt, fo+44)
	in.Add("dictBytes", dictBytes, fo+48)
	in.Add("footerVersion", fver, fo+52)
	in.Add("crc32c", fmt.Sprintf("%08x", stored), fo+56)
	in.Check("file", fo+56, 0, fo+56, stored, crc32.Checksum(b[:fo+56], castagnoli))
	if fver != version {
		in.Problemf(fo+52, "footer version %d, header version %d", fver, version)
	}
	in.AddSection("header", 0, headerBytes, nil)
	p8 := func(x uint64) uint64 { return (x + 7) &^ 7 }
	lensBytes, offsBytes := p8(4*nd), 4*(nt+1)
	lensAt, lenW := int64(docsOff), uint8(32)
	if packed {
		// Packed arrays (packed.go): a width byte, then the values.
		widthAt := func(at uint64, what string) (uint8, bool) {
			if at > uint64(fo)-packedHeaderBytes {
				return 0, false
			}
			w := b[at]
			in.Add(what+"Width", w, int64(at))
			if w > 32 || u64(int64(at))>>8 != 0 {
				in.Problemf(int64(at), "%s: packed array width %d (or its padding) invalid", what, w)
				return 0, false
			}
			return w, true
		}
		lw, ok1 := widthAt(docsOff, "docLen")
		ow, ok2 := widthAt(dictOff, "dictOffset")
		if !ok1 || !ok2 {
			in.AddSection("footer", fo, footerBytes, nil)
			return in, nil
		}
		lensBytes, offsBytes = uint64(packedBytes(int(nd), lw)), uint64(packedBytes(int(nt+1), ow))
		lensAt, lenW = int64(docsOff)+packedHeaderBytes, lw
	}
	extBytes := 8 * nd
	if noExt {
		extBytes = 0
	}
	ok := docsOff == headerBytes &&
		dictOff == docsOff+lensBytes+extBytes &&
		termsOff == dictOff+p8(offsBytes+dictBytes) &&
		postOff >= termsOff && postOff <= uint64(fo)
	var recBits uint64
	widthsOK := true
	if ok && version >= 3 {
		w, rb, err := readRecWidths(b[termsOff:postOff])
		if err != nil {
			in.Problemf(int64(termsOff), "term record widths: %v", err)
			widthsOK = false
		} else {
			recBits = rb
			in.Add("termRecordBits", fmt.Sprintf("%d (widths %v: offset, length, df, maxTF, minDL, efLen, lastDoc)", rb, w), int64(termsOff))
		}
	}
	if ok && widthsOK && postOff != termsOff+termsBytes(version, nt, recBits) {
		if version >= 3 {
			in.Problemf(int64(termsOff), "terms section is %d bytes; %d records of %d bits need %d", postOff-termsOff, nt, recBits, termsBytes(version, nt, recBits))
		} else {
			ok = false
		}
	}
	if !ok {
		in.Problemf(fo, "section offsets inconsistent (docs %d dict %d terms %d post %d, %d docs, %d terms, %d dictionary bytes)",
			docsOff, dictOff, termsOff, postOff, nd, nt, dictBytes)
		in.AddSection("footer", fo, footerBytes, nil)
		return in, nil
	}
	in.AddSection("docs", int64(docsOff), int64(dictOff-docsOff), nil)
	in.AddSection("dict", int64(dictOff), int64(termsOff-dictOff), nil)
	in.AddSection("terms", int64(termsOff), int64(postOff-termsOff), nil)
	in.AddSection("postings", int64(postOff), fo-int64(postOff), nil)
	in.AddSection("footer", fo, footerBytes, nil)
	if packed {
		if !packedTailClean(b[lensAt:int64(docsOff+lensBytes)], int(nd), lenW) {
			in.Problemf(lensAt, "document lengths: nonzero padding")
		}
		if oat := int64(dictOff) + packedHeaderBytes; !packedTailClean(b[oat:int64(dictOff+offsBytes)], int(nt+1), b[dictOff]) {
			in.Problemf(oat, "dictionary offsets: nonzero padding")
		}
	}
	var sum uint64
	for i := uint64(0); i < nd; i++ {
		sum += uint64(packedArrayGet(b[lensAt:], lenW, int(i)))
	}
	if sum != sumDL {
		in.Problemf(fo+32, "sum of document lengths %d, footer says %d", sum, sumDL)
	}
	if nd > 0 {
		in.Add("avgDocLen", fmt.Sprintf("%.2f", float64(sum)/float64(nd)), -1)
	}
	return in, nil
}
