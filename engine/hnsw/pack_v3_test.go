package hnsw

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestLevelsRoundTrip: the version 3 levels section decodes to the levels
// written, for seeded level arrays as HNSW draws them and for the edges
// (no node above 0, every node above 0, the last node only), in fewer
// bytes than one a node once most nodes are at level 0.
func TestLevelsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	cases := [][]uint8{{}, {0}, {5}, make([]uint8, 300), slices.Repeat([]uint8{2}, 300), append(make([]uint8, 999), 7)}
	for range 20 {
		n := 1 + rng.IntN(5000)
		lv := make([]uint8, n)
		for i := range lv {
			for lv[i] < maxLevelCap && rng.IntN(16) == 0 {
				lv[i]++
			}
		}
		cases = append(cases, lv)
	}
	for _, lv := range cases {
		b := appendLevels(nil, lv)
		got := make([]uint8, len(lv))
		if at, msg := readLevels(got, b); at >= 0 || !slices.Equal(got, lv) {
			t.Fatalf("n=%d: %d %s", len(lv), at, msg)
		}
		above := 0
		for _, l := range lv {
			if l > 0 {
				above++
			}
		}
		if len(lv) >= 1000 && above*16 < len(lv)*2 && len(b) >= len(lv)/2 {
			t.Fatalf("n=%d, %d above 0: %d bytes", len(lv), above, len(b))
		}
	}
}

// TestLevelsCorrupt: a damaged levels section names the offset of its
// problem, and Open reports it as corruption within the section.
func TestLevelsCorrupt(t *testing.T) {
	for name, c := range map[string]struct {
		b  []byte
		at int
	}{
		"empty":          {nil, 0},
		"count > n":      {[]byte{5}, 0},
		"id past n":      {[]byte{1, 4, 1}, 1},
		"gap past n":     {[]byte{2, 1, 1, 3, 1}, 3},
		"level 0":        {[]byte{1, 2, 0}, 2},
		"missing level":  {[]byte{1, 2}, 2},
		"trailing bytes": {[]byte{1, 2, 1, 9}, 3},
		"bad gap varint": {[]byte{1, 0x80}, 1},
	} {
		dst := make([]uint8, 4)
		at, msg := readLevels(dst, c.b)
		if at != c.at || msg == "" {
			t.Errorf("%s: at %d %q, want at %d", name, at, msg, c.at)
		}
	}
	// Through Open: the section's count set past n (CRC repaired).
	ix, _ := smallIndex(t, 40, 0)
	data := serialize(t, ix)
	off := sectionAt(t, data, secLevels)
	bad := slices.Clone(data)
	bad[off] = 41
	fixCRC(bad)
	_, err := Open(bad)
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Offset != off || !strings.Contains(err.Error(), "levels") {
		t.Fatalf("count past n: %v", err)
	}
}

// sectionAt is the file offset of section kind.
func sectionAt(t *testing.T, data []byte, kind int) int64 {
	t.Helper()
	tableOff := int64(binary.LittleEndian.Uint64(data[len(data)-16:]))
	return int64(binary.LittleEndian.Uint64(data[tableOff+4+int64(kind-1)*24+8:]))
}

// TestIdentityLabels: an index whose labels are its ids (as a segment's
// rows are) writes an empty labels section and reopens with the same
// labels; any other labels are written as deltas.
func TestIdentityLabels(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	const n, d = 200, 6
	base := clustered(rng, n, d, 5)
	for _, offset := range []uint64{0, 1000} {
		ix, err := New(Options{Dim: d, M: 4, EfConstruction: 16, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		labels := make([]uint64, n)
		for i := range labels {
			labels[i] = offset + uint64(i)
		}
		if _, err := ix.AddBatch(labels, base, 1); err != nil {
			t.Fatal(err)
		}
		data := serialize(t, ix)
		tableOff := int64(binary.LittleEndian.Uint64(data[len(data)-16:]))
		ln := binary.LittleEndian.Uint64(data[tableOff+4+int64(secLabels-1)*24+16:])
		if (ln == 0) != (offset == 0) {
			t.Fatalf("labels from %d: section %d bytes", offset, ln)
		}
		x, err := Open(data)
		if err != nil {
			t.Fatal(err)
		}
		res, err := x.Search(base[:d], n, SearchParams{EfSearch: n})
		if err != nil || len(res) != n {
			t.Fatalf("search: %d %v", len(res), err)
		}
		for _, r := range res {
			if r.Label != offset+uint64(r.ID) {
				t.Fatalf("labels from %d: id %d label %d", offset, r.ID, r.Label)
			}
		}
	}
}
