package tier

import (
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"

	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/hnsw"
	"github.com/stratasearch/strata/engine/ivfpq"
	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/internal/inspect"
)

var segSectionNames = map[uint32]string{secMeta: "meta", secDocs: "docs", secHNSW: "hnsw", secBM25: "bm25",
	secIVFPQ: "ivfpq", secFlat: "flat", secTextIndex: "textIndex", secText: "text"}

// Inspect describes a warm segment file (doc.go "Warm segment file")
// without opening it: header and footer fields, the section table with
// each section's CRC32C recomputed, the footer CRC32C, the meta section
// decoded, and the embedded HNSW and BM25 sections inspected by their own
// packages as Children (offsets in this file's coordinates). Every
// inconsistency (newer version, bad footer, section out of bounds,
// duplicate or missing section, undecodable meta, children that disagree
// with the meta) is a problem with its byte offset. The zstd doc store is
// not decompressed. Cost: two CRC passes over b plus the children's.
//
// Errors: only when b does not start with the "STRATSEG" magic.
func Inspect(b []byte) (*inspect.Info, error) {
	if len(b) < len(segMagic) || string(b[:len(segMagic)]) != segMagic {
		return nil, fmt.Errorf("tier: not a warm segment file (no %q magic)", segMagic)
	}
	n := int64(len(b))
	in := &inspect.Info{Format: "STRATSEG", Size: n}
	in.Add("magic", segMagic, 0)
	if n < segHeaderSize {
		in.Problemf(n, "truncated: %d bytes, shorter than the %d-byte header", n, segHeaderSize)
		return in, nil
	}
	u32 := func(off int64) uint32 { v, _ := inspect.U32(b, off); return v }
	u64 := func(off int64) uint64 { v, _ := inspect.U64(b, off); return v }
	version, flags := u32(8), u32(12)
	in.Version = int(version)
	in.Add("version", version, 8)
	in.Add("flags", fmt.Sprintf("%#x", flags), 12)
	if version < segVersionHNSW || version > segFormatVersion {
		in.Problemf(8, "segment format version %d not supported (this build reads %d to %d)", version, segVersionHNSW, segFormatVersion)
		return in, nil
	}
	if n < segHeaderSize+segFooterSize {
		in.Problemf(n, "truncated: %d bytes, shorter than header and footer (%d)", n, segHeaderSize+segFooterSize)
		return in, nil
	}
	fo := n - segFooterSize
	if string(b[n-8:]) != segEndMagic {
		in.Problemf(n-8, "bad footer magic %q (truncated file?)", b[n-8:])
		return in, nil
	}
	tableOff, nsec, stored := u64(fo), uint64(u32(fo+8)), u32(fo+16)
	in.Add("tableOffset", tableOff, fo)
	in.Add("sections", nsec, fo+8)
	in.Add("crc32c", fmt.Sprintf("%08x", stored), fo+16)
	in.Check("file", fo+16, 0, n-16, stored, crc32.Checksum(b[:n-16], crcTable))
	if tableOff < segHeaderSize || tableOff > uint64(fo) || (uint64(fo)-tableOff) != nsec*segTableEntry {
		in.Problemf(fo, "section table offset %d / count %d do not fit before the footer at %d", tableOff, nsec, fo)
		return in, nil
	}
	if version >= segVersionText {
		tcrc := u32(fo + 12)
		in.Add("tableCrc32c", fmt.Sprintf("%08x", tcrc), fo+12)
		in.Check("section table", fo+12, int64(tableOff), fo, tcrc, crc32.Checksum(b[tableOff:fo], crcTable))
	}
	secs := map[uint32][]byte{}
	secOff := map[uint32]int64{}
	for i := uint64(0); i < nsec; i++ {
		at := int64(tableOff + i*segTableEntry)
		kind, off, ln, crc := u32(at), u64(at+8), u64(at+16), u32(at+24)
		name, known := segSectionNames[kind]
		if !known {
			name = fmt.Sprintf("kind%d", kind)
		}
		in.AddSection(name, int64(off), int64(ln), &crc)
		if !inspect.Within(off, ln, segHeaderSize, int64(tableOff)) {
			in.Problemf(at, "section %s [%d, +%d) outside [%d, %d)", name, off, ln, segHeaderSize, tableOff)
			continue
		}
		sb := b[off : off+ln]
		in.Check("section "+name, at+24, int64(off), int64(off+ln), crc, crc32.Checksum(sb, crcTable))
		if _, dup := secs[kind]; dup {
			in.Problemf(at, "duplicate section %s", name)
			continue
		}
		secs[kind], secOff[kind] = sb, int64(off)
	}
	for _, k := range []uint32{secMeta, secDocs} {
		if _, ok := secs[k]; !ok {
			in.Problemf(int64(tableOff), "missing section %s", segSectionNames[k])
		}
	}
	var dim, rows, rawLen uint64
	if mb, ok := secs[secMeta]; ok {
		md := &decoder{b: mb}
		dim = md.uvarint("dim")
		metric := Metric(md.byte1("metric"))
		rows = md.uvarint("rows")
		minE := md.uvarint("min epoch")
		maxE := md.uvarint("max epoch")
		rawLen = md.uvarint("doc store size")
		if md.err != nil {
			in.Problemf(secOff[secMeta], "meta: %v", md.err)
		} else {
			in.Add("dim", dim, -1)
			in.Add("metric", metric.String(), -1)
			in.Add("rows", rows, -1)
			in.Add("minEpoch", minE, -1)
			in.Add("maxEpoch", maxE, -1)
			in.Add("docStoreRawBytes", rawLen, -1)
			if minE > maxE && rows > 0 {
				in.Problemf(secOff[secMeta], "min epoch %d > max epoch %d", minE, maxE)
			}
			if db, ok := secs[secDocs]; ok {
				if rows > rawLen || rawLen > maxDocStoreBytes {
					in.Problemf(secOff[secMeta], "doc store size %d / rows %d implausible for %d compressed bytes", rawLen, rows, len(db))
				} else if len(db) > 0 {
					in.Add("docStoreRatio", fmt.Sprintf("%.2f", float64(rawLen)/float64(len(db))), -1)
				}
			}
		}
	}
	if hb, ok := secs[secHNSW]; ok {
		child, err := hnsw.Inspect(hb)
		if err != nil {
			in.Problemf(secOff[secHNSW], "hnsw section: %v", err)
		} else {
			child.Path = "section hnsw"
			child.Shift(secOff[secHNSW])
			in.Children = append(in.Children, child)
			if d, ok := child.Field("dim"); ok && dim != 0 && fmt.Sprint(d) != fmt.Sprint(dim) {
				in.Problemf(secOff[secHNSW], "hnsw dim %v, meta says %d", d, dim)
			}
			if nv, ok := child.Field("n"); ok && rows != 0 && toU64(nv) > rows {
				in.Problemf(secOff[secHNSW], "hnsw holds %v vectors, more than the %d rows", nv, rows)
			}
		}
	}
	idxSecs := 0
	for _, k := range []uint32{secHNSW, secIVFPQ, secFlat} {
		if _, ok := secs[k]; ok {
			idxSecs++
		}
	}
	if idxSecs > 1 {
		in.Problemf(int64(tableOff), "more than one vector-index section (hnsw, ivfpq, flat)")
	}
	if (version == segVersionHNSW || version == segVersionTextRef) && (secs[secIVFPQ] != nil || secs[secFlat] != nil) {
		in.Problemf(8, "format version %d segment with an ivfpq or flat section", version)
	}
	if ib, ok := secs[secIVFPQ]; ok {
		in.Add("vectorIndex", string(SegmentIndexIVFPQ), -1)
		child, err := ivfpq.Inspect(ib)
		if err != nil {
			in.Problemf(secOff[secIVFPQ], "ivfpq section: %v", err)
		} else {
			child.Path = "section ivfpq"
			child.Shift(secOff[secIVFPQ])
			in.Children = append(in.Children, child)
			if d, ok := child.Field("dim"); ok && dim != 0 && toU64(d) != dim {
				in.Problemf(secOff[secIVFPQ], "ivfpq dim %v, meta says %d", d, dim)
			}
			if nv, ok := child.Field("ntotal"); ok && rows != 0 && toU64(nv) > rows {
				in.Problemf(secOff[secIVFPQ], "ivfpq holds %v vectors, more than the %d rows", nv, rows)
			}
		}
	}
	if fb, ok := secs[secFlat]; ok {
		in.Add("vectorIndex", segmentIndexFlat, -1)
		fd := &decoder{b: fb}
		c := fd.uvarint("flat vectors")
		switch {
		case fd.err != nil || len(fd.b) != 0:
			in.Problemf(secOff[secFlat], "flat section is not one uvarint vector count")
		case rows != 0 && c > rows:
			in.Problemf(secOff[secFlat], "flat section counts %d vectors, more than the %d rows", c, rows)
		default:
			in.Add("flatVectors", c, secOff[secFlat])
		}
	}
	if _, ok := secs[secHNSW]; ok {
		in.Add("vectorIndex", string(SegmentIndexHNSW), -1)
	}
	tib, hasTI := secs[secTextIndex]
	tb, hasT := secs[secText]
	if (version >= segVersionText) != hasTI || hasTI != hasT {
		in.Problemf(8, "format version %d with text index/text sections present=%v/%v", version, hasTI, hasT)
	} else if hasTI {
		if _, refs, err := parseTextIndex(tib, rows, secOff[secText], int64(len(tb))); err != nil {
			in.Problemf(secOff[secTextIndex], "%v", err)
		} else {
			in.Add("textBlocks", len(refs), secOff[secTextIndex])
			// Only a failing block's checksum is listed (the first).
			for i, r := range refs {
				if got := crc32.Checksum(b[r.off:r.off+int64(r.n)], crcTable); got != r.crc {
					in.Check(fmt.Sprintf("text block %d", i), secOff[secTextIndex]+textIndexHeader+int64(i)*textIndexEntry+16,
						r.off, r.off+int64(r.n), r.crc, got)
					break
				}
			}
		}
	}
	if lb, ok := secs[secBM25]; ok {
		child, err := bm25.Inspect(lb)
		if err != nil {
			// The tier stores whatever its lexical hook wrote; the
			// engine writes an engine/bm25 segment.
			in.Warnf(secOff[secBM25], "bm25 section is not an engine/bm25 segment (another lexical hook?): %v", err)
		} else {
			child.Path = "section bm25"
			child.Shift(secOff[secBM25])
			in.Children = append(in.Children, child)
			if nd, ok := child.Field("numDocs"); ok && toU64(nd) != rows {
				in.Problemf(secOff[secBM25], "bm25 has %v documents, meta says %d rows", nd, rows)
			}
		}
	}
	return in, nil
}

// toU64 converts a numeric header field value (any integer type) for
// comparison; other values give 0.
func toU64(v any) uint64 {
	switch x := v.(type) {
	case int:
		return uint64(x)
	case int64:
		return uint64(x)
	case uint32:
		return uint64(x)
	case uint64:
		return x
	}
	return 0
}

// InspectManifest describes a MANIFEST-<n> file: every record (the first
// must be a checkpoint, the rest edits) decoded and applied in order, as
// Open does, with the resulting durable epoch, segment set, archives and
// tombstones as header fields. Framing damage follows wal.InspectLog,
// with Open's rule for the final edit: cut short by the end of the file it
// is a torn write (a warning), whole but failing its checks it is a
// problem; an undecodable or inapplicable edit is a problem at its
// record's offset. It never fails: a manifest has no magic
// to identify.
func InspectManifest(b []byte) (*inspect.Info, error) {
	in, _ := inspectManifest(b)
	return in, nil
}

func inspectManifest(b []byte) (*inspect.Info, ManifestState) {
	var st ManifestState
	records := 0
	version := 0
	in := wal.InspectLog(b, 1, func(in *inspect.Info, r wal.Record) {
		want := wal.TypeManifestEdit
		if records == 0 {
			want = wal.TypeManifestCheckpoint
		}
		records++
		rec := inspect.Record{Offset: r.Offset, Length: int64(wal.HeaderSize + len(r.Payload)), Seq: r.Seq, Type: wal.TypeName(r.Type)}
		if r.Type != want {
			in.Problemf(r.Offset, "record type %s, want %s", wal.TypeName(r.Type), wal.TypeName(want))
		}
		if len(r.Payload) > 0 {
			version = max(version, int(r.Payload[0]))
		}
		e, err := decodeEdit(r.Payload)
		if err == nil {
			next := st.clone()
			if err = next.apply(e); err == nil {
				st = next
			}
		}
		if err != nil {
			in.Problemf(r.Offset, "edit: %v", err)
			rec.Summary = "undecodable: " + err.Error()
		} else if rec.Summary = editSummary(e); rec.Summary == "" {
			rec.Summary = "(empty)"
		}
		in.Records = append(in.Records, rec)
	})
	in.Format = "MANIFEST"
	in.Version = version
	if records == 0 {
		in.Problemf(0, "manifest has no checkpoint record")
	}
	if v, ok := in.Field("tornTail"); ok && !recordCutShort(b, int64(toU64(v))) {
		// Open's rule (openManifest): every edit was fsynced before it
		// took effect, so only a record cut short by the end of the file
		// is an interrupted write.
		in.Problemf(int64(toU64(v)), "final edit is damaged, not cut short: Open refuses the manifest")
	}
	in.Add("durableEpoch", st.DurableEpoch, -1)
	in.Add("nextSegmentID", st.NextSegmentID, -1)
	in.Add("segments", len(st.Segments), -1)
	for _, s := range st.Segments {
		in.Add(fmt.Sprintf("segment %d", s.ID), fmt.Sprintf("%s rows=%d epochs=[%d,%d] bytes=%d", s.File, s.Rows, s.MinEpoch, s.MaxEpoch, s.SizeBytes), -1)
	}
	in.Add("archives", len(st.Archives), -1)
	for _, a := range st.Archives {
		in.Add(fmt.Sprintf("archive %d", a.ID), fmt.Sprintf("%s rows=%d epochs=[%d,%d] bytes=%d", a.File, a.Rows, a.MinEpoch, a.MaxEpoch, a.SizeBytes), -1)
	}
	in.Add("tombstones", len(st.Tombstones), -1)
	return in, st
}

// recordCutShort reports whether the record log bytes at off are a record
// prefix cut by the end of b (wal.ScanResult.TornIncomplete).
func recordCutShort(b []byte, off int64) bool {
	res, err := wal.Scan(b[off:], "", 1, nil)
	return err == nil && res.Torn && res.TornIncomplete && res.End == 0
}

func editSummary(e Edit) string {
	var sb strings.Builder
	if e.DurableEpoch != 0 {
		fmt.Fprintf(&sb, "durable=%d ", e.DurableEpoch)
	}
	if e.NextSegmentID != 0 {
		fmt.Fprintf(&sb, "nextID=%d ", e.NextSegmentID)
	}
	for _, s := range e.Add {
		fmt.Fprintf(&sb, "+seg%d(%d rows) ", s.ID, s.Rows)
	}
	for _, id := range e.Remove {
		fmt.Fprintf(&sb, "-seg%d ", id)
	}
	for _, a := range e.AddArchives {
		fmt.Fprintf(&sb, "+cold%d(%d rows) ", a.ID, a.Rows)
	}
	for _, id := range e.RemoveArchives {
		fmt.Fprintf(&sb, "-cold%d ", id)
	}
	if len(e.Tombstones) > 0 {
		fmt.Fprintf(&sb, "tombstones=%d", len(e.Tombstones))
	}
	return strings.TrimSpace(sb.String())
}

// InspectManifestFiles is InspectManifest for the manifest file at path,
// also checking the store directory around it: every segment and archive
// of the resulting set must exist there with the size the manifest
// recorded (a problem otherwise); segment or archive files the manifest
// does not list, which Open removes or quarantines, and a CURRENT naming another manifest
// (this one is then stale) are warnings. Errors: only reading path.
func InspectManifestFiles(path string) (*inspect.Info, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tier: inspect: %w", err)
	}
	in, st := inspectManifest(b)
	in.Path = path
	dir := filepath.Dir(path)
	listed := map[string]bool{}
	check := func(kind string, id uint64, file string, size uint64) {
		listed[file] = true
		fi, err := os.Stat(filepath.Join(dir, file))
		switch {
		case err != nil:
			in.Problemf(-1, "%s %d: file %s: %v", kind, id, file, err)
		case uint64(fi.Size()) != size:
			in.Problemf(-1, "%s %d: file %s has %d bytes, the manifest recorded %d", kind, id, file, fi.Size(), size)
		}
	}
	for _, s := range st.Segments {
		check("segment", s.ID, s.File, s.SizeBytes)
	}
	for _, a := range st.Archives {
		check("archive", a.ID, a.File, a.SizeBytes)
	}
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			n := e.Name()
			if (strings.HasPrefix(n, "seg-") || isColdFile(n)) && !listed[n] {
				in.Warnf(-1, "%s is not in the manifest (Open removes it if provably garbage, else moves it to quarantine/)", n)
			}
		}
	}
	if cur, err := os.ReadFile(filepath.Join(dir, currentName)); err == nil {
		if name := strings.TrimSpace(string(cur)); name != filepath.Base(path) {
			in.Warnf(-1, "CURRENT names %s: this manifest is stale (Open removes it)", name)
		}
	}
	return in, nil
}

// InspectCurrent describes a CURRENT file: it must hold "MANIFEST-<n>\n".
func InspectCurrent(b []byte) (*inspect.Info, error) {
	in := &inspect.Info{Format: "CURRENT", Size: int64(len(b))}
	name := strings.TrimSpace(string(b))
	in.Add("manifest", name, 0)
	if _, ok := parseManifestName(name); !ok || string(b) != name+"\n" {
		in.Problemf(0, "CURRENT holds %q, want \"MANIFEST-<n>\\n\"", b)
	}
	return in, nil
}
