package engine

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stratasearch/strata/engine/catalog"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier"
	"github.com/zeebo/blake3"
)

// TestEncodeMetaMatchesStoredForm: the payload form toTier writes equals
// catalog.EncodeMeta's stored values (the VerifiableSources mark added)
// laid out in sorted key order, on seeded random metadata of every kind.
func TestEncodeMetaMatchesStoredForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 5))
	vals := func() contract.Value {
		switch rng.IntN(5) {
		case 0:
			return contract.String(fmt.Sprintf("s<%d>\"é\x01", rng.IntN(100)))
		case 1:
			return contract.Number([]float64{1e20, -0.5, 3, 1e-7, math.MaxFloat64}[rng.IntN(5)])
		case 2:
			return contract.Bool(rng.IntN(2) == 0)
		case 3:
			return contract.Strings("a", "b\n")
		}
		return contract.Strings()
	}
	for iter := range 200 {
		m := map[string]contract.Value{}
		for range rng.IntN(8) {
			m[fmt.Sprintf("\x01k%d", rng.IntN(50))] = vals()
		}
		verifiable := iter%3 == 0
		got, err := encodeMeta(m, verifiable)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := catalog.EncodeMeta(m)
		if err != nil {
			t.Fatal(err)
		}
		if verifiable {
			if stored == nil {
				stored = map[string]string{}
			}
			stored[metaVerifiable] = "true"
		}
		var want []byte
		if len(stored) > 0 {
			want = tier.AppendMetadataCount(nil, len(stored))
			for _, k := range slices.Sorted(func(yield func(string) bool) {
				for k := range stored {
					if !yield(k) {
						return
					}
				}
			}) {
				want = tier.AppendMetadataEntry(want, k, stored[k])
			}
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("iter %d: %q, want %q", iter, got, want)
		}
	}
	if _, err := encodeMeta(map[string]contract.Value{"bad": contract.Number(math.NaN())}, false); err == nil {
		t.Fatal("a NaN was encoded")
	}
}

// TestToTierHashesContentInPlace: toTier's version hash of a 1 MiB
// content equals blake3 of its bytes and is computed without a copy of
// the content (it allocates a small fraction of it).
func TestToTierHashesContentInPlace(t *testing.T) {
	content := string(bytes.Repeat([]byte("a version hash of the content "), 1<<20/30))
	d := contract.Document{ID: "x", Content: content, Trust: contract.Authoritative}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	td, err := toTier(&d, false)
	runtime.ReadMemStats(&ms1)
	if err != nil {
		t.Fatal(err)
	}
	if want := blake3.Sum256([]byte(content)); td.VersionHash != want {
		t.Fatalf("version hash %x, want %x", td.VersionHash, want)
	}
	if got := ms1.TotalAlloc - ms0.TotalAlloc; got > uint64(len(content))/8 {
		t.Fatalf("toTier allocated %d bytes for a %d-byte content", got, len(content))
	}
}
