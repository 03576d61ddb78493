package hnsw

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPackedListsRoundTrip: random lists (empty, one id, wide and narrow
// gaps, duplicates, ids up to 2^32−2) decode to their sorted ids.
func TestPackedListsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const maxCount = 64
	var buf []byte
	var scratch []uint32
	var lists [][]uint32
	for i := 0; i < 2000; i++ {
		c := rng.IntN(maxCount + 1)
		universe := []uint32{1, 2, 100, 1 << 14, 1 << 20, 1<<32 - 2}[rng.IntN(6)]
		ids := make([]uint32, c)
		for j := range ids {
			ids[j] = uint32(rng.Uint64N(uint64(universe) + 1))
		}
		lists = append(lists, ids)
		buf, scratch = appendList(buf, ids, scratch)
	}
	r := listReader{b: buf}
	dst := make([]uint32, 1+maxCount)
	for i, ids := range lists {
		if e := r.next(dst, maxCount, 1<<32-1); e != nil {
			t.Fatalf("list %d: %s at %d", i, e.msg, e.at)
		}
		want := slices.Sorted(slices.Values(ids))
		if int(dst[0]) != len(ids) || !slices.Equal(dst[1:1+len(ids)], want) {
			t.Fatalf("list %d: got %v, want %v", i, dst[:1+len(ids)], want)
		}
		for _, x := range dst[1+len(ids):] {
			if x != 0 {
				t.Fatalf("list %d: slots after the list not cleared", i)
			}
		}
	}
	if r.pos != len(buf) {
		t.Fatalf("consumed %d of %d bytes", r.pos, len(buf))
	}
	// Consecutive and duplicate labels, and wrap-around deltas.
	labels := []uint64{0, 1, 2, 1 << 63, 5, 5, 1<<64 - 1, 0}
	enc := appendLabels(nil, labels)
	got := make([]uint64, len(labels))
	if at := readLabels(got, enc); at >= 0 || !slices.Equal(got, labels) {
		t.Fatalf("labels %v (at %d), want %v", got, at, labels)
	}
	if at := readLabels(make([]uint64, len(labels)+1), enc); at != len(enc) {
		t.Fatalf("one label too many: at %d, want %d", at, len(enc))
	}
	if at := readLabels(make([]uint64, len(labels)-1), enc); at < 0 {
		t.Fatal("trailing bytes accepted")
	}
}

// FuzzPackedLists: next never panics, never writes past dst, and what it
// accepts re-encodes to a list that decodes to the same ids.
func FuzzPackedLists(f *testing.F) {
	var seed []byte
	seed, _ = appendList(seed, []uint32{9, 3, 7, 1000}, nil)
	f.Add(seed, uint16(8), uint32(2000))
	f.Add(binary.AppendUvarint(nil, 3), uint16(8), uint32(10))
	f.Add([]byte{2, 1, 40, 0xff}, uint16(4), uint32(1<<31))
	f.Fuzz(func(t *testing.T, b []byte, maxCount uint16, n uint32) {
		m := int(maxCount % 200)
		dst := make([]uint32, 1+m)
		r := listReader{b: b}
		for r.pos < len(b) {
			before := r.pos
			if e := r.next(dst, m, n); e != nil {
				if e.at < before || e.at > len(b) {
					t.Fatalf("error offset %d outside [%d, %d]", e.at, before, len(b))
				}
				return
			}
			c := int(dst[0])
			ids := slices.Clone(dst[1 : 1+c])
			for _, id := range ids {
				if id >= n {
					t.Fatalf("id %d ≥ n %d accepted", id, n)
				}
			}
			enc, _ := appendList(nil, ids, nil)
			r2 := listReader{b: enc}
			d2 := make([]uint32, 1+m)
			if e := r2.next(d2, m, n); e != nil || !slices.Equal(d2[1:1+c], ids) {
				t.Fatalf("re-encoded list %v decodes to %v (%v)", ids, d2, e)
			}
		}
	})
}

// BenchmarkOpen: Open of a 20,000-node graph (d = 16, M = 16): CRC,
// decoding the packed links and labels, and link validation.
func BenchmarkOpen(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	base := randVecs(rng, 20000, 16)
	ix := build(b, Options{Dim: 16, Metric: L2, M: 16, EfConstruction: 40}, base)
	data := serialize(b, ix)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Open(data); err != nil {
			b.Fatal(err)
		}
	}
}
