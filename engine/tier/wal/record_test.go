package wal

import (
	"bytes"
	"errors"
	"testing"
)

func TestRecordRoundTrip(t *testing.T) {
	var buf []byte
	for i := uint64(1); i <= 10; i++ {
		buf = AppendRecord(buf, TypeBatch, i, payloadFor(i))
	}
	var n uint64
	res, err := Scan(buf, "f", 1, func(r Record) error {
		n++
		if r.Seq != n || !bytes.Equal(r.Payload, payloadFor(n)) || r.Type != TypeBatch {
			t.Fatalf("record %d wrong", n)
		}
		return nil
	})
	if err != nil || res.Torn || res.End != int64(len(buf)) || res.LastSeq != 10 || n != 10 {
		t.Fatalf("%+v %v", res, err)
	}
	// Wrong first sequence number: an intact record out of order is corruption.
	if _, err := Scan(buf, "f", 2, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatal(err)
	}
	// Empty input.
	if res, err := Scan(nil, "f", 1, nil); err != nil || res.Torn || res.End != 0 || res.LastSeq != 0 {
		t.Fatal(res, err)
	}
}

// FuzzScan feeds arbitrary bytes (seeded with valid logs, torn and damaged
// ones) to Scan. Invariants: no panic; on success the intact prefix
// re-encodes to exactly data[:End] less its sync marks; Torn iff End <
// len(data); MarkedSeq ≤ LastSeq unless the scan ended in a torn tail.
func FuzzScan(f *testing.F) {
	var good []byte
	for i := uint64(1); i <= 4; i++ {
		good = AppendRecord(good, TypeBatch, i, payloadFor(i))
	}
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add(append(append([]byte{}, good...), make([]byte, 64)...))
	bad := append([]byte{}, good...)
	bad[HeaderSize+2] ^= 0xff
	f.Add(bad)
	f.Add([]byte{})
	f.Add(make([]byte, HeaderSize))
	var marked []byte
	for i := uint64(1); i <= 3; i++ {
		marked = AppendRecord(marked, TypeBatch, i, payloadFor(i))
		marked = AppendRecord(marked, TypeSyncMark, i, nil)
	}
	f.Add(marked)
	flipped := append([]byte{}, marked...)
	flipped[len(flipped)-HeaderSize-1] ^= 1 // the last record, before its mark
	f.Add(flipped)
	f.Fuzz(func(t *testing.T, data []byte) {
		var re []byte
		res, err := Scan(data, "fuzz", 1, func(r Record) error {
			re = AppendRecord(re, r.Type, r.Seq, r.Payload)
			return nil
		})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("non-corruption error %v", err)
			}
			return
		}
		if res.End > int64(len(data)) || !bytes.Equal(re, withoutMarks(data[:res.End])) {
			t.Fatalf("re-encoded prefix differs (End %d)", res.End)
		}
		if res.Torn != (res.End < int64(len(data))) {
			t.Fatalf("Torn=%v End=%d len=%d", res.Torn, res.End, len(data))
		}
		if !res.Torn && res.MarkedSeq > res.LastSeq {
			t.Fatalf("MarkedSeq %d beyond LastSeq %d without damage", res.MarkedSeq, res.LastSeq)
		}
	})
}

// withoutMarks returns the intact records of b (a scanned prefix) with
// its sync marks left out.
func withoutMarks(b []byte) []byte {
	var out []byte
	for off := 0; off < len(b); {
		r, size, reason := parseAt(b, off)
		if reason != "" {
			return append(out, b[off:]...)
		}
		if r.Type != TypeSyncMark {
			out = append(out, b[off:off+size]...)
		}
		off += size
	}
	return out
}
