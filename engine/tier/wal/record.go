package wal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/stratasearch/strata/internal/base"
)

// ErrCorrupt marks a record log damaged before its tail. Errors carrying
// it are *CorruptError values naming the file and byte offset. It is
// base.ErrCorrupt, shared by every format.
var ErrCorrupt = base.ErrCorrupt

// CorruptError reports damage at a byte offset of a file (Kind
// KindRecordLog for a record log; package tier uses it for its manifest
// and segment files too). It is the type every format shares and
// satisfies errors.Is(err, ErrCorrupt).
type CorruptError = base.CorruptError

// KindRecordLog is the CorruptError.Kind of a damaged record log.
const KindRecordLog = "wal record log"

// Record framing (see doc.go for the diagram). All integers little-endian.
const (
	// HeaderSize is the fixed size of a record header in bytes.
	HeaderSize = 18
	// RecordVersion is the only framing version written and read.
	RecordVersion = 1
	// MaxPayloadBytes bounds a single record's payload (64 MiB); longer
	// length fields are treated as damage.
	MaxPayloadBytes = 64 << 20
)

// Record types. 0 is never valid, so a zero-filled (preallocated) tail
// never parses as a record.
const (
	TypeBatch uint8 = 1 // a WAL write batch (engine/tier batch encoding)
	// TypeSyncMark records that every record up to its sequence number
	// was fsynced. It has an empty payload and does not consume a
	// sequence number: its sequence field is that of an earlier record.
	TypeSyncMark uint8 = 2
	// Types 3..15 are reserved for WAL use; the manifest uses 16 and up.
	TypeManifestCheckpoint uint8 = 16
	TypeManifestEdit       uint8 = 17
	// Types 32 and 33 frame the ingest manifest's journal (package
	// ingest): its header (the generation it applies to) and its edits.
	TypeIngestJournalHeader uint8 = 32
	TypeIngestJournalEdit   uint8 = 33
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// AppendRecord appends one framed record to dst and returns the extended
// slice. typ must be non-zero; len(payload) ≤ MaxPayloadBytes.
func AppendRecord(dst []byte, typ uint8, seq uint64, payload []byte) []byte {
	return append(AppendHeader(dst, typ, seq, payload), payload...)
}

// AppendHeader appends the header of the record AppendRecord would frame
// (its CRC covers payload) without the payload, for a writer that writes
// the payload from where it already is.
func AppendHeader(dst []byte, typ uint8, seq uint64, payload []byte) []byte {
	var h [HeaderSize]byte
	binary.LittleEndian.PutUint32(h[4:8], uint32(len(payload)))
	h[8] = typ
	h[9] = RecordVersion
	binary.LittleEndian.PutUint64(h[10:18], seq)
	crc := crc32.Update(crc32.Checksum(h[4:], castagnoli), castagnoli, payload)
	binary.LittleEndian.PutUint32(h[0:4], crc)
	return append(dst, h[:]...)
}

// appendHeaderPieces is AppendHeader of the payload that is the
// concatenation of pieces (size bytes in all).
func appendHeaderPieces(dst []byte, typ uint8, seq uint64, pieces [][]byte, size int) []byte {
	if len(pieces) == 1 {
		return AppendHeader(dst, typ, seq, pieces[0])
	}
	var h [HeaderSize]byte
	binary.LittleEndian.PutUint32(h[4:8], uint32(size))
	h[8] = typ
	h[9] = RecordVersion
	binary.LittleEndian.PutUint64(h[10:18], seq)
	crc := crc32.Checksum(h[4:], castagnoli)
	for _, p := range pieces {
		crc = crc32.Update(crc, castagnoli, p)
	}
	binary.LittleEndian.PutUint32(h[0:4], crc)
	return append(dst, h[:]...)
}

// Record is one decoded record. Payload aliases the scanned buffer.
type Record struct {
	Type    uint8
	Seq     uint64
	Payload []byte
	// Offset is the byte offset of the record header in its file.
	Offset int64
}

// parseAt returns the record at off if it is intact (complete, known type
// and version, CRC ok) and its size in bytes.
func parseAt(data []byte, off int) (Record, int, string) {
	if len(data)-off < HeaderSize {
		return Record{}, 0, "incomplete header"
	}
	h := data[off : off+HeaderSize]
	n := binary.LittleEndian.Uint32(h[4:8])
	typ, ver := h[8], h[9]
	if typ == 0 {
		return Record{}, 0, "zero record type"
	}
	if ver != RecordVersion {
		return Record{}, 0, fmt.Sprintf("unknown record version %d", ver)
	}
	if n > MaxPayloadBytes {
		return Record{}, 0, fmt.Sprintf("record length %d exceeds %d", n, MaxPayloadBytes)
	}
	end := off + HeaderSize + int(n)
	if end > len(data) {
		return Record{}, 0, "record extends past end of file"
	}
	if crc32.Checksum(data[off+4:end], castagnoli) != binary.LittleEndian.Uint32(h[0:4]) {
		return Record{}, 0, "checksum mismatch"
	}
	return Record{Type: typ, Seq: binary.LittleEndian.Uint64(h[10:18]), Payload: data[off+HeaderSize : end], Offset: int64(off)}, end - off, ""
}

// ScanResult describes how a scan ended.
type ScanResult struct {
	// End is the byte offset just past the last intact record: the
	// length the file should be truncated to.
	End int64
	// Torn is true if bytes after End were discarded as a torn tail.
	Torn bool
	// TornReason says why the first discarded byte did not parse.
	TornReason string
	// TornIncomplete is true when the torn position holds a record cut
	// short by the end of the file (less than a header, or a header whose
	// length runs past the end): the shape a write interrupted by a crash
	// leaves. False for a complete record that fails its checks.
	TornIncomplete bool
	// LastSeq is the sequence number of the last intact record (or
	// firstSeq-1 if none).
	LastSeq uint64
	// MarkedSeq is the highest sequence number a sync mark in the file
	// vouches for (0: none), counting a sync mark found after a damaged
	// tail (then MarkedSeq > LastSeq and MarkOffset is its offset).
	MarkedSeq  uint64
	MarkOffset int64
}

// Scan decodes the records of one file held in data. Sequence numbers
// must run firstSeq, firstSeq+1, ... ; fn is called for each intact
// record in order (a non-nil error from fn stops the scan and is
// returned). Sync marks (TypeSyncMark) are not passed to fn: they set
// ScanResult.MarkedSeq. A sync mark must vouch for an earlier record
// (sequence number < the expected one); any other is corruption.
//
// Recovery rule: at the first position that does not hold an intact record
// with the expected sequence number, Scan looks for any intact record
// further on with a sequence number ≥ the expected one. If there is a
// write record (not a sync mark), the damage is in the middle of the log
// and Scan returns a *CorruptError (ErrCorrupt) with the offset. Otherwise
// everything from that position on is a torn tail (a partially written
// final batch, or a zero-filled preallocated region): ScanResult.Torn is
// set and End is where to truncate. If a sync mark after the damage vouches
// for the damaged record, MarkedSeq > LastSeq says so: the damaged record
// had been fsynced, which makes the damage a loss rather than a torn write
// (the caller decides; Open refuses it). An intact record whose sequence
// number is not the expected one is always corruption.
func Scan(data []byte, file string, firstSeq uint64, fn func(Record) error) (ScanResult, error) {
	off := 0
	expect := firstSeq
	var marked uint64
	for off < len(data) {
		rec, size, reason := parseAt(data, off)
		if reason == "" {
			if rec.Type == TypeSyncMark {
				if rec.Seq >= expect {
					return ScanResult{}, &CorruptError{Kind: KindRecordLog, Path: file, Offset: int64(off), Reason: fmt.Sprintf("sync mark for sequence %d, but the last record is %d", rec.Seq, expect-1)}
				}
				marked = max(marked, rec.Seq)
				off += size
				continue
			}
			if rec.Seq != expect {
				return ScanResult{}, &CorruptError{Kind: KindRecordLog, Path: file, Offset: int64(off), Reason: fmt.Sprintf("sequence number %d, want %d", rec.Seq, expect)}
			}
			if fn != nil {
				if err := fn(rec); err != nil {
					return ScanResult{}, err
				}
			}
			off += size
			expect++
			continue
		}
		res := ScanResult{End: int64(off), Torn: true, TornReason: reason, TornIncomplete: incompleteAt(data, off), LastSeq: expect - 1, MarkedSeq: marked}
		for from := off + 1; ; {
			p, ok := findIntactAfter(data, from, expect)
			if !ok {
				break
			}
			r, size, _ := parseAt(data, p)
			if r.Type != TypeSyncMark {
				return ScanResult{}, &CorruptError{Kind: KindRecordLog, Path: file, Offset: int64(off), Reason: fmt.Sprintf("%s, with an intact record at offset %d after it", reason, p)}
			}
			if r.Seq > res.MarkedSeq {
				res.MarkedSeq, res.MarkOffset = r.Seq, int64(p)
			}
			from = p + size
		}
		return res, nil
	}
	return ScanResult{End: int64(off), LastSeq: expect - 1, MarkedSeq: marked}, nil
}

// incompleteAt reports whether the bytes at off are a record prefix cut
// by the end of data: fewer than HeaderSize bytes, or a plausible length
// field that runs past the end.
func incompleteAt(data []byte, off int) bool {
	if len(data)-off < HeaderSize {
		return true
	}
	n := binary.LittleEndian.Uint32(data[off+4 : off+8])
	return n <= MaxPayloadBytes && off+HeaderSize+int(n) > len(data)
}

// findIntactAfter reports the first offset ≥ from holding an intact record
// with sequence number ≥ minSeq.
func findIntactAfter(data []byte, from int, minSeq uint64) (int, bool) {
	for p := from; p+HeaderSize <= len(data); p++ {
		h := data[p : p+HeaderSize]
		if h[8] == 0 || h[9] != RecordVersion {
			continue // cheap pre-checks before the CRC
		}
		if binary.LittleEndian.Uint64(h[10:18]) < minSeq {
			continue
		}
		if _, _, reason := parseAt(data, p); reason == "" {
			return p, true
		}
	}
	return 0, false
}
