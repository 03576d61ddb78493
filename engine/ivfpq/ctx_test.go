package ivfpq

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/internal/testenv"
)

const ctxDim, ctxTrain = 32, 4000

// ctxIndex trains an IP index (d = 32, nlist = 16; M = 16 at 8 bits, 32 at
// 4 bits) on 4,000 seeded vectors, adds them with refine vectors, and then
// pads the lists with seeded random codes up to total vectors (ids from
// 4,000 on, no refine vector: searched with refinement off), so that a
// full scan is long without a long build.
func ctxIndex(t testing.TB, nbits, total int) (*Index, []float32) {
	t.Helper()
	x := randVecs(11, ctxTrain, ctxDim, true)
	m := 16
	if nbits == 4 {
		m = 32
	}
	ix := buildIndex(t, Options{Dim: ctxDim, Metric: IP, Nlist: 16, M: m, Nbits: nbits, Seed: 5}, x)
	if err := ix.SetRefineVectors(x); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	code := make([]uint8, m)
	ix.mu.Lock()
	for id := ctxTrain; id < total; id++ {
		for j := range code {
			code[j] = uint8(rng.IntN(1 << nbits))
		}
		ix.appendCode(id%16, uint32(id), code)
		ix.present.Add(uint32(id))
	}
	ix.nextID = uint64(max(total, ctxTrain))
	ix.mu.Unlock()
	return ix, x
}

// ctxBigIndex is ctxIndex(nbits, ctxTrain) whose 16 lists all alias one
// list of perList seeded random codes (ids ctxTrain.., repeated in every
// list): a full scan reads 16·perList codes from 1/16 of the memory.
func ctxBigIndex(t testing.TB, nbits, perList int) *Index {
	t.Helper()
	ix, _ := ctxIndex(t, nbits, ctxTrain)
	rng := rand.New(rand.NewPCG(7, 8))
	m := ix.opts.M
	code := make([]uint8, m)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.lists[0] = invList{owned: true}
	for i := range perList {
		for j := range code {
			code[j] = uint8(rng.IntN(1 << nbits))
		}
		ix.appendCode(0, uint32(ctxTrain+i), code)
	}
	for l := 1; l < len(ix.lists); l++ {
		ix.lists[l] = ix.lists[0]
	}
	return ix
}

// TestSearchContextLiveSame: under a live (cancellable, never cancelled)
// context, SearchContext returns exactly what Search returns, 8 and 4
// bits, refined or not, filtered or not; so does ColdCodec.ScanContext.
func TestSearchContextLiveSame(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	qs := randVecs(12, 10, ctxDim, true)
	odd := roaring.New()
	for i := uint32(1); i < ctxTrain; i += 2 {
		odd.Add(i)
	}
	for _, nbits := range []int{8, 4} {
		ix, _ := ctxIndex(t, nbits, ctxTrain)
		for _, p := range []SearchParams{{Nprobe: 4}, {Nprobe: 16, KFactor: 4}, {Nprobe: 8, Allow: odd}} {
			for qi := range 10 {
				q := qs[qi*ctxDim : (qi+1)*ctxDim]
				want, err := ix.Search(q, 10, p)
				if err != nil {
					t.Fatal(err)
				}
				got, err := ix.SearchContext(ctx, q, 10, p)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("nbits=%d %+v query %d: SearchContext %v, Search %v", nbits, p, qi, got, want)
				}
			}
		}
	}
	x := randVecs(13, 3000, ctxDim, true)
	cc, err := TrainColdCodec(x, Options{Dim: ctxDim, Metric: IP, Nlist: 16, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	codes, err := cc.Encode(nil, x)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []ColdScanParams{{}, {Vectors: x, KFactor: 4}, {Allow: odd, Nprobe: 4}} {
		for qi := range 10 {
			q := qs[qi*ctxDim : (qi+1)*ctxDim]
			want, err := cc.Scan(q, codes, 10, p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := cc.ScanContext(ctx, q, codes, 10, p)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("cold query %d: ScanContext %v, Scan %v", qi, got, want)
			}
		}
	}
}

// TestSearchContextStops: a context found done in the scan loop stops the
// 8-bit ADC, the 4-bit fast-scan and the cold scan after one chunk of
// codes: the call returns ctx.Err() and at most scanChunk hits (plus the
// refined ones), best first, where the complete search returns thousands.
// A context cancelled before the call does no work.
func TestSearchContextStops(t *testing.T) {
	const total = 20000
	q := randVecs(14, 1, ctxDim, true)
	for _, nbits := range []int{8, 4} {
		ix, _ := ctxIndex(t, nbits, total)
		p := SearchParams{Nprobe: 16}
		full, err := ix.Search(q, total, p)
		if err != nil || len(full) != total {
			t.Fatalf("nbits=%d: complete search: %d hits, %v", nbits, len(full), err)
		}
		got, err := ix.SearchContext(testenv.DoneUnseen(), q, total, p)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("nbits=%d: err = %v, want context.Canceled", nbits, err)
		}
		if len(got) > scanChunk {
			t.Fatalf("nbits=%d: a cancelled search returned %d hits", nbits, len(got))
		}
		if !slices.IsSortedFunc(got, func(a, b Result) int { return cmpResult(a, b) }) {
			t.Fatalf("nbits=%d: hits not sorted", nbits)
		}
		// Refined: the partial candidates are refined (exact distances).
		ids := make([]uint32, ctxTrain)
		for i := range ids {
			ids[i] = uint32(i)
		}
		pr := SearchParams{Nprobe: 16, KFactor: 2, Allow: roaring.BitmapOf(ids...)}
		if got, err := ix.SearchContext(testenv.DoneUnseen(), q, 100, pr); !errors.Is(err, context.Canceled) || len(got) > 100 {
			t.Fatalf("nbits=%d refined: %d hits, %v", nbits, len(got), err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if got, err := ix.SearchContext(ctx, q, 10, p); !errors.Is(err, context.Canceled) || len(got) != 0 {
			t.Fatalf("nbits=%d: search under a cancelled context: %d hits, %v", nbits, len(got), err)
		}
	}
	cc, codes := ctxColdCodes(t, total)
	full, err := cc.Scan(q, codes, total, ColdScanParams{})
	if err != nil || len(full) != total {
		t.Fatalf("cold: complete scan: %d hits, %v", len(full), err)
	}
	got, err := cc.ScanContext(testenv.DoneUnseen(), q, codes, total, ColdScanParams{})
	if !errors.Is(err, context.Canceled) || len(got) > scanChunk {
		t.Fatalf("cold: cancelled scan: %d hits, %v", len(got), err)
	}
}

func cmpResult(a, b Result) int {
	switch {
	case a.Distance < b.Distance:
		return -1
	case a.Distance > b.Distance:
		return 1
	}
	return int(a.ID) - int(b.ID)
}

// ctxColdCodes trains a cold codec on 3,000 seeded vectors and returns n
// seeded random codes for it (valid centroid ids, random PQ codes).
func ctxColdCodes(t testing.TB, n int) (*ColdCodec, []byte) {
	t.Helper()
	x := randVecs(15, 3000, ctxDim, true)
	cc, err := TrainColdCodec(x, Options{Dim: ctxDim, Metric: IP, Nlist: 16, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	codes := make([]byte, n*ColdCodeSize)
	for i := range n {
		c := codes[i*ColdCodeSize : (i+1)*ColdCodeSize]
		binary.LittleEndian.PutUint16(c, uint16(rng.IntN(16)))
		for j := 2; j < ColdCodeSize; j++ {
			c[j] = uint8(rng.IntN(256))
		}
	}
	return cc, codes
}

// TestSearchContextCancelLatency: a full scan (nprobe = nlist) of millions
// of codes (8-bit ADC, 4-bit fast-scan, cold ADC; each over 50 ms)
// cancelled 10 ms in returns within 2 ms of the cancel
// (testenv.CheckCancelLatency: median of 5 trials). One chunk of 256
// codes is microseconds of work, also under -race.
func TestSearchContextCancelLatency(t *testing.T) {
	testenv.SkipIfEmulated(t, "scans millions of codes")
	// Half a million codes at 8 bits, 6 million at 4 bits, a million cold
	// codes (15–50 ms each here); under the race detector, which slows the
	// Go loops ~10×, a tenth of the 8-bit and cold codes and a quarter of the
	// 4-bit ones (its scan is asm kernels, which the detector does not
	// slow).
	per8, per4, cold := 500_000, 6_000_000, 1_000_000
	if raceEnabled {
		per8, per4, cold = per8/10, per4/4, cold/10
	}
	q := randVecs(16, 1, ctxDim, true)
	check := func(name string, full time.Duration, search func(ctx context.Context) error) {
		t.Logf("%s: complete search %v", name, full)
		testenv.CheckCancelLatency(t, name, 2*time.Millisecond, search)
	}
	for _, nbits := range []int{8, 4} {
		per := per8
		if nbits == 4 {
			per = per4
		}
		ix := ctxBigIndex(t, nbits, per)
		p := SearchParams{Nprobe: 16}
		start := time.Now()
		if _, err := ix.Search(q, 10, p); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("nbits=%d", nbits), time.Since(start), func(ctx context.Context) error {
			_, err := ix.SearchContext(ctx, q, 10, p)
			return err
		})
	}
	cc, codes := ctxColdCodes(t, cold)
	start := time.Now()
	if _, err := cc.Scan(q, codes, 10, ColdScanParams{}); err != nil {
		t.Fatal(err)
	}
	check("cold", time.Since(start), func(ctx context.Context) error {
		_, err := cc.ScanContext(ctx, q, codes, 10, ColdScanParams{})
		return err
	})
}
