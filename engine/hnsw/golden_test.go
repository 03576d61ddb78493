package hnsw

import (
	"bytes"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// goldenIndex is built from small integer vectors, whose L2 distances are
// exact in float32 under every kernel (AVX-512, AVX2, NEON, pure Go), so
// the graph and hence the file bytes are identical on every platform.
func goldenIndex(t *testing.T) *Index {
	rng := rand.New(rand.NewPCG(77, 78))
	const n, d = 40, 4
	base := make([]float32, n*d)
	for i := range base {
		base[i] = float32(rng.IntN(8))
	}
	ix := build(t, Options{Dim: d, Metric: L2, M: 4, EfConstruction: 12, Seed: 9}, base)
	for _, id := range []uint32{3, 17} {
		if err := ix.Delete(id); err != nil {
			t.Fatal(err)
		}
	}
	return ix
}

// sameUpToTies: the same distances in order, and the same ids wherever a
// distance is not shared by another hit or by the last hit (with integer
// vectors, which of several tied nodes is kept depends on link order).
func sameUpToTies(a, b []Result) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[float32]int{}
	for _, r := range a {
		count[r.Distance]++
	}
	for i := range a {
		if a[i].Distance != b[i].Distance {
			return false
		}
		if count[a[i].Distance] == 1 && a[i].Distance != a[len(a)-1].Distance && a[i].ID != b[i].ID {
			return false
		}
	}
	return true
}

// TestGoldenFileV1: a version 1 file (fixed-width link rows) still opens
// and searches like the current file of the same index.
func TestGoldenFileV1(t *testing.T) {
	v1, err := os.ReadFile(filepath.Join("testdata", "golden-v1.hnsw"))
	if err != nil {
		t.Fatal(err)
	}
	old, err := Open(v1)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := Open(serialize(t, goldenIndex(t)))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range [][]float32{{1, 2, 3, 4}, {0, 0, 0, 0}, {7, 7, 7, 7}, {3, 1, 4, 1}} {
		a, err1 := old.Search(q, 10, SearchParams{EfSearch: 40})
		b, err2 := cur.Search(q, 10, SearchParams{EfSearch: 40})
		if err1 != nil || err2 != nil || !sameUpToTies(a, b) {
			t.Fatalf("v1 %v (%v) vs current %v (%v)", a, err1, b, err2)
		}
	}
	// Rewritten, the version 1 index gives the current bytes.
	if !bytes.Equal(serialize(t, old), serialize(t, goldenIndex(t))) {
		t.Fatal("a v1 index rewritten differs from the current file of the same index")
	}
}

// TestGoldenFileV2: a version 2 file (levels as n bytes, labels always
// as deltas) still opens and searches like the version 3 file of the same
// index, and rewritten gives the version 3 bytes, smaller.
func TestGoldenFileV2(t *testing.T) {
	v2, err := os.ReadFile(filepath.Join("testdata", "golden-v2.hnsw"))
	if err != nil {
		t.Fatal(err)
	}
	old, err := Open(v2)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := Open(serialize(t, goldenIndex(t)))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range [][]float32{{1, 2, 3, 4}, {0, 0, 0, 0}, {7, 7, 7, 7}, {3, 1, 4, 1}} {
		a, err1 := old.Search(q, 10, SearchParams{EfSearch: 40})
		b, err2 := cur.Search(q, 10, SearchParams{EfSearch: 40})
		if err1 != nil || err2 != nil || !slices.Equal(a, b) {
			t.Fatalf("v2 %v (%v) vs v3 %v (%v)", a, err1, b, err2)
		}
	}
	v3 := serialize(t, old)
	if !bytes.Equal(v3, serialize(t, goldenIndex(t))) {
		t.Fatal("a v2 index rewritten differs from the v3 file of the same index")
	}
	if len(v3) > len(v2) {
		t.Fatalf("v3 file %d bytes, v2 %d", len(v3), len(v2))
	}
}

// TestGoldenFile pins format version 3 byte for byte (run with -update
// after an intentional format change, and bump fileVersion).
func TestGoldenFile(t *testing.T) {
	data := serialize(t, goldenIndex(t))
	path := filepath.Join("testdata", "golden-v3.hnsw")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) {
		t.Fatalf("serialised index (%d bytes) differs from %s (%d bytes)", len(data), path, len(want))
	}
	// The golden file opens and searches like the index it came from.
	ix, err := Open(want)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ix.Search([]float32{1, 2, 3, 4}, 5, SearchParams{EfSearch: 40})
	if err != nil || len(res) != 5 {
		t.Fatal(res, err)
	}
	for _, r := range res {
		if r.ID == 3 || r.ID == 17 {
			t.Fatalf("deleted id %d returned from golden file", r.ID)
		}
	}
}

// TestSearchNoAllocs: steady-state searches allocate nothing.
func TestSearchNoAllocs(t *testing.T) {
	if testing.Short() && raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	rng := rand.New(rand.NewPCG(1, 9))
	base := randVecs(rng, 2000, 16)
	for _, st := range []Storage{Float32, SQ8} {
		ix := build(t, Options{Dim: 16, Metric: Cosine, M: 8, EfConstruction: 40, Storage: st}, base)
		q := randVecs(rng, 1, 16)
		dst := make([]Result, 0, 10)
		allow := bitmapOf([]uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35})
		for _, p := range []SearchParams{{EfSearch: 64}, {EfSearch: 64, Allow: allow, forceGraph: true}} {
			ix.SearchInto(dst, q, 10, p) // warm the pool
			if a := testing.AllocsPerRun(50, func() { dst, _ = ix.SearchInto(dst, q, 10, p) }); a != 0 {
				t.Errorf("storage=%v filtered=%v: %.1f allocs per search", st, p.Allow != nil, a)
			}
		}
	}
}
