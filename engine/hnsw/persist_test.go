package hnsw

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func smallIndex(t testing.TB, n int, deleteEvery int) (*Index, []float32) {
	rng := rand.New(rand.NewPCG(8, 8))
	o := Options{Dim: 12, Metric: Cosine, M: 6, EfConstruction: 40, Seed: 4, KeepPrunedConnections: true}
	base := clustered(rng, n, o.Dim, 10)
	ix := build(t, o, base)
	if deleteEvery > 0 {
		for i := 0; i < n; i += deleteEvery {
			if err := ix.Delete(uint32(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ix, base
}

func serialize(t testing.TB, ix *Index) []byte {
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

func sameResults(t *testing.T, a, b *Index, base []float32, d int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(2, 2))
	for i := 0; i < 30; i++ {
		q := randVecs(rng, 1, d)
		for _, p := range []SearchParams{{EfSearch: 16}, {EfSearch: 64, Allow: bitmapOf([]uint32{1, 5, 9, 30, 31, 77})}} {
			ra, err1 := a.Search(q, 7, p)
			rb, err2 := b.Search(q, 7, p)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			// Same ids and labels in the same order. Distances may differ
			// in the last bit: a reopened file lists links sorted, and
			// a neighbour's distance comes from a batched or a single
			// kernel depending on its position in the list.
			if !sameHits(ra, rb) {
				t.Fatalf("results differ:\n%v\n%v", ra, rb)
			}
		}
	}
}

func sameHits(a, b []Result) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Label != b[i].Label ||
			math.Abs(float64(a[i].Distance-b[i].Distance)) > 1e-6*max(1, math.Abs(float64(a[i].Distance))) {
			return false
		}
	}
	return true
}

func TestPersistRoundTrip(t *testing.T) {
	ix, base := smallIndex(t, 700, 9)
	data := serialize(t, ix)
	re, err := Open(data)
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, ix, re, base, 12)
	if re.Len() != ix.Len() || re.Live() != ix.Live() {
		t.Fatalf("Len/Live %d/%d vs %d/%d", re.Len(), re.Live(), ix.Len(), ix.Live())
	}
	if _, err := re.Add(1, base[:12]); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Add on opened index: %v", err)
	}
	if err := re.Delete(3); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Delete on opened index: %v", err)
	}
	// Writing the reopened index gives the same bytes.
	if again := serialize(t, re); !bytes.Equal(again, data) {
		t.Fatal("re-serialised bytes differ")
	}
	// Misaligned input is copied, not rejected.
	mis := make([]byte, len(data)+1)
	copy(mis[1:], data)
	re2, err := Open(mis[1:])
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, ix, re2, base, 12)

	// OpenFile maps the file.
	path := filepath.Join(t.TempDir(), "x.hnsw")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fx, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, ix, fx, base, 12)
	if err := fx.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.Search(base[:12], 3, SearchParams{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("search after Close: %v", err)
	}
}

func TestPersistEmpty(t *testing.T) {
	ix, _ := New(Options{Dim: 3})
	re, err := Open(serialize(t, ix))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := re.Search([]float32{1, 2, 3}, 2, SearchParams{}); err != nil || len(res) != 0 {
		t.Fatal(res, err)
	}
}

func TestPersistCorrupt(t *testing.T) {
	ix, _ := smallIndex(t, 200, 0)
	data := serialize(t, ix)
	path := filepath.Join(t.TempDir(), "c.hnsw")
	check := func(name string, b []byte) {
		t.Helper()
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := OpenFile(path)
		var ce *CorruptError
		if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) {
			t.Fatalf("%s: error %v does not match ErrCorrupt", name, err)
		}
		if ce.Path != path || ce.Offset < 0 || ce.Offset > int64(len(b)) {
			t.Fatalf("%s: bad error location %q@%d", name, ce.Path, ce.Offset)
		}
		if !contains(err.Error(), path) {
			t.Fatalf("%s: %v does not name the file", name, err)
		}
	}
	for _, cut := range []int{0, 10, 64, len(data) / 2, len(data) - 1} {
		check("truncated", data[:cut])
	}
	for _, at := range []int{0, 20, 100, len(data) / 2, len(data) - 10} {
		b := slices.Clone(data)
		b[at] ^= 0x40
		check("flipped", b)
	}
	// Structurally bad files with a valid CRC: a link to an id ≥ n, a
	// link to a node below the layer, in level0 and in an upper layer.
	// Each is reported inside the list's section.
	sectionOf := func(b []byte, kind int) (int64, int64) {
		off := int64(binary.LittleEndian.Uint64(b[len(b)-16:]))
		at := off + 4 + int64(kind-1)*24
		return int64(binary.LittleEndian.Uint64(b[at+8:])), int64(binary.LittleEndian.Uint64(b[at+16:]))
	}
	for _, tc := range []struct {
		name string
		kind int
		edit func(x *Index) bool
	}{
		{"level0 id beyond n", secLevel0, func(x *Index) bool {
			x.level0[x.stride0*5+1] = 1 << 30
			return x.level0[x.stride0*5] > 0
		}},
		{"upper id beyond n", secUpper, func(x *Index) bool {
			for id := range x.levels {
				if x.levels[id] > 0 {
					l := x.links(uint32(id), 1)
					l[0], l[1] = max(l[0], 1), 1<<20
					return true
				}
			}
			return false
		}},
		{"upper link to a level-0 node", secUpper, func(x *Index) bool {
			var low uint32
			for id := range x.levels {
				if x.levels[id] == 0 {
					low = uint32(id)
					break
				}
			}
			for id := range x.levels {
				if x.levels[id] > 0 {
					l := x.links(uint32(id), 1)
					l[0], l[1] = max(l[0], 1), low
					return true
				}
			}
			return false
		}},
	} {
		x, _ := smallIndex(t, 200, 0)
		if !tc.edit(x) {
			t.Fatalf("%s: the index has no list to edit", tc.name)
		}
		b := serialize(t, x)
		_, err := Open(b)
		var ce *CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: %v", tc.name, err)
		}
		off, ln := sectionOf(b, tc.kind)
		if ce.Offset < off || ce.Offset >= off+ln {
			t.Fatalf("%s: offset %d outside the section [%d, +%d): %v", tc.name, ce.Offset, off, ln, err)
		}
		t.Log(err)
	}
	// Packed sections cut short or with trailing bytes.
	for _, kind := range []int{secLevel0, secUpper, secLabels} {
		for _, delta := range []int64{-1, 1} {
			b := slices.Clone(data)
			off := int64(binary.LittleEndian.Uint64(b[len(b)-16:]))
			at := off + 4 + int64(kind-1)*24 + 16
			ln := int64(binary.LittleEndian.Uint64(b[at:]))
			binary.LittleEndian.PutUint64(b[at:], uint64(ln+delta))
			fixCRC(b)
			if _, err := Open(b); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("section %d length %+d: %v", kind, delta, err)
			}
		}
	}
	// Newer version: refused with a clear, non-corrupt error.
	b := slices.Clone(data)
	binary.LittleEndian.PutUint32(b[8:], fileVersion+1)
	fixCRC(b)
	if _, err := Open(b); err == nil || errors.Is(err, ErrCorrupt) || !contains(err.Error(), "version") {
		t.Fatalf("newer version: %v", err)
	}
}

func fixCRC(b []byte) {
	if len(b) < 8 {
		return
	}
	binary.LittleEndian.PutUint32(b[len(b)-8:], crc32.Checksum(b[:len(b)-8], castagnoli))
}

// FuzzOpen: Open never panics and a successfully opened index can be
// searched without panicking. fix=true recomputes the CRC so that the
// structural validation behind it is exercised.
func FuzzOpen(f *testing.F) {
	ix, _ := smallIndex(f, 40, 7)
	data := serialize(f, ix)
	f.Add(data, false)
	f.Add(data, true)
	f.Add(data[:len(data)/2], true)
	empty, _ := New(Options{Dim: 2})
	f.Add(serialize(f, empty), true)
	f.Add([]byte("STRHNSW\x00"), false)
	// Labels 0…n−1: the empty labels section of version 3.
	ident, _ := New(Options{Dim: 3, M: 4, EfConstruction: 8})
	if _, err := ident.AddBatch([]uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, make([]float32, 30), 1); err != nil {
		f.Fatal(err)
	}
	f.Add(serialize(f, ident), true)
	f.Fuzz(func(t *testing.T, b []byte, fix bool) {
		b = slices.Clone(b)
		if fix {
			fixCRC(b)
		}
		x, err := Open(b)
		if err != nil {
			return
		}
		q := make([]float32, x.dim)
		for i := range q {
			q[i] = float32(i%3) - 1
		}
		for _, p := range []SearchParams{{EfSearch: 8}, {EfSearch: 8, Allow: bitmapOf([]uint32{0, 1, 2, 3}), forceGraph: true}} {
			if _, err := x.Search(q, 4, p); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestPersistAfterEntryDeleted: deleting the top entry point moves the
// entry to the highest live level, leaving deleted nodes taller than it;
// such a snapshot must reopen (found by the randomized concurrent test
// under qemu).
func TestPersistAfterEntryDeleted(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const n, d = 600, 8
	ix, err := New(Options{Dim: d, M: 4, EfConstruction: 32})
	if err != nil {
		t.Fatal(err)
	}
	vecs := randVecs(rng, n, d)
	for i := 0; i < n; i++ {
		if _, err := ix.Add(uint64(i), vecs[i*d:(i+1)*d]); err != nil {
			t.Fatal(err)
		}
	}
	// Delete every node of the top level, so the entry drops a level.
	_, top, _ := ix.entry()
	if top == 0 {
		t.Skip("seed gave a flat graph")
	}
	for id := 0; id < n; id++ {
		if int(ix.levels[id]) == top {
			if err := ix.Delete(uint32(id)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, l, _ := ix.entry(); l >= top {
		t.Fatalf("entry level %d, want below %d", l, top)
	}
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	re, err := Open(buf.Bytes())
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	q := vecs[:d]
	a, _ := ix.Search(q, 10, SearchParams{EfSearch: 64})
	b, err := re.Search(q, 10, SearchParams{EfSearch: 64})
	if err != nil || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("results differ after reopen: %v vs %v (%v)", a, b, err)
	}
}
