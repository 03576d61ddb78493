package verify

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestReadSourceMatchesReadFile: ReadSource returns exactly os.ReadFile's
// bytes for files of sizes around its buffer boundaries (seeded
// contents), and an empty file reads as empty.
func TestReadSourceMatchesReadFile(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 511, 512, 513, 4095, 4096, 4097, 70_000} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
			if rng.IntN(40) == 0 {
				b[i] = '\n'
			}
		}
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadSource(p)
		if err != nil {
			t.Fatalf("size %d: %v", n, err)
		}
		if !bytes.Equal(got, b) {
			t.Fatalf("size %d: read %d bytes, differ from the file", n, len(got))
		}
	}
}
