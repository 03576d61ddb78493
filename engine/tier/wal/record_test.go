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
// re-encodes to exactly data[:End]; Torn iff End < len(data).
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
		if res.End > int64(len(data)) || !bytes.Equal(re, data[:res.End]) {
			t.Fatalf("re-encoded prefix differs (End %d)", res.End)
		}
		if res.Torn != (res.End < int64(len(data))) {
			t.Fatalf("Torn=%v End=%d len=%d", res.Torn, res.End, len(data))
		}
	})
}
