package verify

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/zeebo/blake3"
)

// TestSumStringMatchesSum256: SumString equals blake3.Sum256 of the same
// bytes for lengths around the chunk (1 KiB) and block (64 B) edges.
func TestSumStringMatchesSum256(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for _, n := range []int{0, 1, 63, 64, 65, 1023, 1024, 1025, 4096, 20000, 1 << 20} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		if got, want := SumString(string(b)), blake3.Sum256(b); got != want {
			t.Fatalf("n=%d: SumString %x, Sum256 %x", n, got, want)
		}
		if got, want := VersionHashString(string(b)), VersionHash(b); got != want {
			t.Fatalf("n=%d: VersionHashString %s, VersionHash %s", n, got, want)
		}
	}
}

// TestSumStringNoCopy: hashing a 1 MiB string allocates far less than
// the string (no []byte conversion of it).
func TestSumStringNoCopy(t *testing.T) {
	s := strings.Repeat("strata ", 1<<20/7)
	var sink [32]byte
	allocs := testing.AllocsPerRun(5, func() { sink = SumString(s) })
	_ = sink
	if allocs > 2 {
		t.Fatalf("SumString made %v allocations a call, want ≤ 2", allocs)
	}
}
