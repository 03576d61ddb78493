package ivfpq

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// smallIndex builds a small trained index with tombstones, for persistence
// tests and the fuzz seed corpus.
func smallIndex(t testing.TB, nbits int, metric Metric) (*Index, []float32) {
	const d = 8
	x := randVecs(71, 300, d, false)
	o := Options{Dim: d, Metric: metric, Nlist: 4, M: 4, Nbits: nbits, KMeansIters: 3, Seed: 4}
	ix := buildIndex(t, o, x)
	ix.Remove([]uint32{3, 10, 299})
	return ix, x
}

func serialise(t testing.TB, ix *Index) []byte {
	var buf bytes.Buffer
	n, err := ix.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo returned %d, wrote %d", n, buf.Len())
	}
	return buf.Bytes()
}

// TestPersistRoundTrip: Open(WriteTo(ix)) and OpenFile give identical
// search results (ids and distances), tombstones included; the reopened
// index accepts Add (copy-on-write of mapped lists) and re-serialises to
// the same bytes before that.
func TestPersistRoundTrip(t *testing.T) {
	for _, nbits := range []int{8, 4} {
		for _, metric := range []Metric{L2, IP} {
			ix, x := smallIndex(t, nbits, metric)
			data := serialise(t, ix)
			path := filepath.Join(t.TempDir(), "ix.ivfpq")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			a, err := Open(data)
			if err != nil {
				t.Fatal(err)
			}
			b, err := OpenFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if again := serialise(t, b); !bytes.Equal(again, data) {
				t.Fatal("re-serialised mapped index differs")
			}
			if a.Len() != ix.Len() || a.Tombstones() != 3 {
				t.Fatalf("Len %d (want %d), Tombstones %d", a.Len(), ix.Len(), a.Tombstones())
			}
			for qi := 0; qi < 10; qi++ {
				q := x[qi*8 : qi*8+8]
				want, _ := ix.Search(q, 20, SearchParams{Nprobe: 3})
				for _, o := range []*Index{a, b} {
					got, err := o.Search(q, 20, SearchParams{Nprobe: 3})
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("nbits=%d %v q%d: reopened results differ", nbits, metric, qi)
					}
				}
			}
			// Add to the mapped index: lists are copied, never written in place.
			if _, err := b.Add(nil, x[:16]); err != nil {
				t.Fatal(err)
			}
			if b.Len() != ix.Len()+2 {
				t.Fatalf("after Add Len %d", b.Len())
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Search(x[:8], 1, SearchParams{}); !errors.Is(err, ErrNotTrained) {
				t.Fatalf("search after Close: %v", err)
			}
		}
	}
}

// TestOpenCorrupt: truncation, bit flips everywhere, bad versions and
// CRC-consistent structural damage are all reported as *CorruptError with
// an offset inside the file (or ErrVersion), never a panic.
func TestOpenCorrupt(t *testing.T) {
	ix, _ := smallIndex(t, 4, L2)
	data := serialise(t, ix)
	check := func(name string, b []byte) {
		t.Helper()
		_, err := Open(b)
		var ce *CorruptError
		if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) {
			t.Fatalf("%s: err = %v, want *CorruptError", name, err)
		}
		if ce.Offset < 0 || ce.Offset > int64(len(b)) || ce.Path != "<bytes>" {
			t.Fatalf("%s: offset %d path %q", name, ce.Offset, ce.Path)
		}
	}
	for _, n := range []int{0, 10, 64, len(data) / 2, len(data) - 1} {
		check("truncated", data[:n])
	}
	step := 1
	if testing.Short() {
		step = 7
	}
	for i := 0; i < len(data); i += step {
		b := bytes.Clone(data)
		b[i] ^= 0x10
		if _, err := Open(b); err == nil {
			t.Fatalf("flip at byte %d accepted", i)
		} else if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
			t.Fatalf("flip at byte %d: %v", i, err)
		}
	}
	newer := bytes.Clone(data)
	binary.LittleEndian.PutUint32(newer[8:], formatVersion+1)
	if _, err := Open(newer); !errors.Is(err, ErrVersion) {
		t.Fatalf("newer version: %v", err)
	}
	// Structural damage with a recomputed CRC: list count too large.
	bad := bytes.Clone(data)
	fstart := len(bad) - footerSize
	dirOff := binary.LittleEndian.Uint64(bad[fstart+16*secDirectory:])
	binary.LittleEndian.PutUint64(bad[dirOff:], 1<<40)
	check("list count", refreshCRC(bad))
	_, err := OpenFile(filepath.Join(t.TempDir(), "missing"))
	if err == nil {
		t.Fatal("missing file opened")
	}
}

// refreshCRC recomputes the footer checksum so structural checks are hit.
func refreshCRC(b []byte) []byte {
	n := len(b)
	binary.LittleEndian.PutUint32(b[n-16:], crc32c(b[:n-16]))
	return b
}

// FuzzOpen: Open never panics and either fails with ErrCorrupt/ErrVersion
// or returns an index that can be searched and re-serialised.
func FuzzOpen(f *testing.F) {
	for _, nbits := range []int{8, 4} {
		ix, _ := smallIndex(f, nbits, IP)
		data := serialise(f, ix)
		f.Add(data)
		f.Add(data[:len(data)-5])
		b := bytes.Clone(data)
		b[70] ^= 1
		f.Add(refreshCRC(b))
	}
	for _, nbits := range []int{8, 4} {
		// Version 2 with the OPQ rotation section.
		ix, _ := smallOPQIndex(f, nbits, L2)
		data := serialise(f, ix)
		f.Add(data)
		b := bytes.Clone(data)
		b[len(b)-footerSize-16-40] ^= 1 // inside the rotation section
		f.Add(refreshCRC(b))
	}
	f.Add([]byte(fileMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, err := Open(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		q := make([]float32, ix.Options().Dim)
		if _, err := ix.Search(q, 5, SearchParams{Nprobe: ix.Options().Nlist}); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := ix.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
	})
}
