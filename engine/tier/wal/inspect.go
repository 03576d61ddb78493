package wal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"sort"

	"github.com/stratasearch/strata/internal/inspect"
)

// InspectLog walks every record of a record log held in b (a WAL segment
// or a MANIFEST file; framing in doc.go) and describes it. Unlike Scan it
// does not stop at damage: a position that is not an intact record but is
// followed by one (sequence number ≥ the expected one) is corruption in
// the middle of the log, reported as a problem (with the recomputed
// checksum when the record is complete) before the walk resumes at that
// later record; damage with no intact record after it is the torn tail,
// reported as a warning (recovery truncates it without losing
// acknowledged records). An intact record with an unexpected sequence
// number is a problem. firstSeq is the sequence number the first record
// must have (0: whatever it has). each, if non-nil, is called for every
// intact record in order; it may add fields, records and problems to the
// Info. The Info's Format is "recordlog"; callers rename it.
//
// Sync marks are counted apart (they carry no sequence number of their
// own); damage followed only by a sync mark that vouches for it is a
// problem, not a torn tail, as in Scan.
//
// Header fields: records, firstSeq, lastSeq, payloadBytes, syncMarks and
// syncedSeq (when there are sync marks), per-type counts, tornTail
// (offset) and firstCorrupt (offset) when present.
func InspectLog(b []byte, firstSeq uint64, each func(in *inspect.Info, r Record)) *inspect.Info {
	in := &inspect.Info{Format: "recordlog", Version: RecordVersion, Size: int64(len(b))}
	var (
		count, payload int64
		first, last    uint64
		types          = map[uint8]int{}
		firstCorrupt   = int64(-1)
		expect         = firstSeq
		off            = 0
		tornAt         = int64(-1)
		tornWhy        string
		resync         bool
		marks          int64
		marked         uint64
	)
	for off < len(b) {
		rec, size, reason := parseAt(b, off)
		if reason == "" && rec.Type == TypeSyncMark {
			// Right after damage, a mark may vouch for the damaged
			// records: that damage is already reported.
			if expect != 0 && rec.Seq >= expect && !resync {
				in.Problemf(int64(off), "sync mark for sequence %d, but the last record is %d", rec.Seq, expect-1)
			}
			marks++
			marked = max(marked, rec.Seq)
			off += size
			continue
		}
		if reason == "" {
			// After a damaged region the records it held are missing:
			// a jump forward there is part of that damage.
			if expect != 0 && rec.Seq != expect && !(resync && rec.Seq > expect) {
				in.Problemf(int64(off), "sequence number %d, want %d", rec.Seq, expect)
			}
			resync = false
			if count == 0 {
				first = rec.Seq
			}
			last = rec.Seq
			expect = rec.Seq + 1
			count++
			payload += int64(len(rec.Payload))
			types[rec.Type]++
			if each != nil {
				each(in, rec)
			}
			off += size
			continue
		}
		minSeq := max(expect, 1)
		p, ok := findIntactAfter(b, off+1, minSeq)
		if ok {
			if r, _, _ := parseAt(b, p); r.Type == TypeSyncMark && !dataRecordAfter(b, p, minSeq) {
				// Only a sync mark follows: the damaged records were
				// fsynced and acknowledged, so this is a loss.
				in.Problemf(int64(off), "damaged record (%s) that the sync mark at byte %d shows was synced: acknowledged records are lost", reason, p)
				if firstCorrupt < 0 {
					firstCorrupt = int64(off)
				}
				marks++
				marked = max(marked, r.Seq)
				break
			}
		}
		if !ok {
			tornAt, tornWhy = int64(off), reason
			break
		}
		if firstCorrupt < 0 {
			firstCorrupt = int64(off)
		}
		in.Problemf(int64(off), "corrupt record (%s); next intact record at byte %d, %d bytes skipped", reason, p, p-off)
		if stored, computed, end, complete := recordCRC(b, off); complete {
			// The damaged record's checksum (the problem above says it).
			in.Checksums = append(in.Checksums, inspect.Checksum{Name: fmt.Sprintf("record@%d", off), Offset: int64(off),
				Start: int64(off) + 4, End: end, Stored: stored, Computed: computed, OK: stored == computed})
		}
		off, resync = p, true
	}
	in.Add("records", count, -1)
	if count > 0 {
		in.Add("firstSeq", first, -1)
		in.Add("lastSeq", last, -1)
	}
	in.Add("payloadBytes", payload, -1)
	if marks > 0 {
		in.Add("syncMarks", marks, -1)
		in.Add("syncedSeq", marked, -1)
	}
	keys := make([]int, 0, len(types))
	for t := range types {
		keys = append(keys, int(t))
	}
	sort.Ints(keys)
	for _, t := range keys {
		in.Add("records."+TypeName(uint8(t)), types[uint8(t)], -1)
	}
	if firstCorrupt >= 0 {
		in.Add("firstCorrupt", firstCorrupt, firstCorrupt)
	}
	if tornAt >= 0 {
		in.Add("tornTail", tornAt, tornAt)
		msg := fmt.Sprintf("torn tail: %d bytes from here do not hold an intact record (%s); recovery truncates them", int64(len(b))-tornAt, tornWhy)
		if stored, computed, _, complete := recordCRC(b, int(tornAt)); complete && stored != computed {
			msg += fmt.Sprintf(" (stored CRC32C %08x, computed %08x)", stored, computed)
		}
		in.Warnf(tornAt, "%s", msg)
	}
	return in
}

// recordCRC returns the stored and recomputed CRC of the record framed at
// off when its header and whole payload are inside b.
func recordCRC(b []byte, off int) (stored, computed uint32, end int64, complete bool) {
	if len(b)-off < HeaderSize {
		return 0, 0, 0, false
	}
	n := uint64(binary.LittleEndian.Uint32(b[off+4:]))
	if n > MaxPayloadBytes || n > uint64(len(b)-off-HeaderSize) {
		return 0, 0, 0, false
	}
	e := off + HeaderSize + int(n)
	return binary.LittleEndian.Uint32(b[off:]), crc32.Checksum(b[off+4:e], castagnoli), int64(e), true
}

// dataRecordAfter reports whether an intact record other than a sync mark,
// with sequence number ≥ minSeq, starts after offset p.
func dataRecordAfter(b []byte, p int, minSeq uint64) bool {
	for {
		q, ok := findIntactAfter(b, p+1, minSeq)
		if !ok {
			return false
		}
		if r, _, _ := parseAt(b, q); r.Type != TypeSyncMark {
			return true
		}
		p = q
	}
}

// TypeName names a record type: "batch", "syncMark",
// "manifestCheckpoint", "manifestEdit", "ingestJournalHeader",
// "ingestJournalEdit" or "type<N>".
func TypeName(t uint8) string {
	switch t {
	case TypeBatch:
		return "batch"
	case TypeManifestCheckpoint:
		return "manifestCheckpoint"
	case TypeManifestEdit:
		return "manifestEdit"
	case TypeSyncMark:
		return "syncMark"
	case TypeIngestJournalHeader:
		return "ingestJournalHeader"
	case TypeIngestJournalEdit:
		return "ingestJournalEdit"
	}
	return fmt.Sprintf("type%d", t)
}

// Inspect describes one WAL segment file's bytes (InspectLog with Format
// "wal"). A WAL sequence number is the epoch of its batch, so firstSeq and
// lastSeq are the segment's epoch range. It never fails: a WAL has no
// magic to identify, so the error is always nil.
func Inspect(b []byte) (*inspect.Info, error) {
	return inspectWAL(b, 0), nil
}

// InspectNamed is Inspect for a file whose base name is name: a segment
// named wal-<16 hex digits>.log must start with that sequence number.
func InspectNamed(name string, b []byte) (*inspect.Info, error) {
	seq, _ := parseSegName(filepath.Base(name))
	in := inspectWAL(b, seq)
	in.Path = name
	return in, nil
}

// InspectReader is Inspect over size bytes read from r (the whole segment
// is read into memory: segments are at most Options.SegmentSizeBytes plus
// one batch). Errors: only r's.
func InspectReader(r io.ReaderAt, size int64) (*inspect.Info, error) {
	b := make([]byte, size)
	if _, err := r.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, fmt.Errorf("wal: inspect: %w", err)
	}
	return Inspect(b)
}

func inspectWAL(b []byte, firstSeq uint64) *inspect.Info {
	in := InspectLog(b, firstSeq, func(in *inspect.Info, r Record) {
		if r.Type != TypeBatch {
			in.Problemf(r.Offset, "record type %s in a WAL segment", TypeName(r.Type))
		}
	})
	in.Format = "wal"
	if f, ok := in.Field("firstSeq"); ok {
		l, _ := in.Field("lastSeq")
		in.Add("epochs", fmt.Sprintf("[%v, %v]", f, l), -1)
	}
	if firstSeq != 0 {
		in.Header = append([]inspect.Field{{Name: "nameSeq", Value: firstSeq, Offset: -1}}, in.Header...)
	}
	return in
}

// CheckSegments applies the cross-segment recovery rules of Open (doc.go
// "Across segments") to the Infos of one WAL directory's segments, as
// returned by InspectNamed, adding problems to the offending segment's
// Info: each segment must start right after the previous one's last
// record, unless every record it could miss is ≤ afterSeq (durable
// elsewhere, e.g. the manifest's durable epoch); the oldest must start at
// most at afterSeq+1 (skipped when afterSeq is 0, meaning unknown); and a
// torn tail in a segment other than the newest is corruption when a later
// segment holds records. Infos of other formats are ignored.
func CheckSegments(segs []*inspect.Info, afterSeq uint64) {
	type seg struct {
		in                 *inspect.Info
		name, first, last  uint64
		records, tornAt    int64
		hasRecords, isTorn bool
	}
	var ss []seg
	u := func(in *inspect.Info, f string) (uint64, bool) {
		v, ok := in.Field(f)
		switch x := v.(type) {
		case uint64:
			return x, ok
		case int64:
			return uint64(x), ok
		}
		return 0, false
	}
	for _, in := range segs {
		if in.Format != "wal" {
			continue
		}
		s := seg{in: in}
		var ok bool
		if s.name, ok = u(in, "nameSeq"); !ok {
			continue
		}
		r, _ := u(in, "records")
		s.records, s.hasRecords = int64(r), r > 0
		s.first, _ = u(in, "firstSeq")
		s.last, _ = u(in, "lastSeq")
		if t, ok := u(in, "tornTail"); ok {
			s.tornAt, s.isTorn = int64(t), true
		}
		ss = append(ss, s)
	}
	sort.Slice(ss, func(i, j int) bool { return ss[i].name < ss[j].name })
	var prevEnd uint64
	for i, s := range ss {
		if i == 0 && afterSeq != 0 && s.name > afterSeq+1 {
			s.in.Problemf(0, "oldest segment starts at sequence %d but records after %d are needed", s.name, afterSeq)
		}
		if i > 0 && prevEnd+1 != s.name && s.name > afterSeq+1 {
			s.in.Problemf(0, "segment starts at sequence %d but the previous one ended at %d", s.name, prevEnd)
		}
		if s.isTorn && i+1 < len(ss) {
			for _, later := range ss[i+1:] {
				if later.hasRecords {
					s.in.Problemf(s.tornAt, "damaged record in a non-final segment, with records in later segments")
					break
				}
			}
		}
		prevEnd = s.name - 1
		if s.hasRecords {
			prevEnd = s.last
		}
	}
}
