package ingest

import (
	"testing"

	"github.com/stratasearch/strata/engine"
)

// TestChunkSum: the manifest's chunk sum changes with each of its inputs
// (language, generated flag, header, source bytes) and only with them; in
// particular a header change with the same source (a renamed declaration,
// which also moves content_offset) is a new document.
func TestChunkSum(t *testing.T) {
	span := []byte("func F() {}\n")
	vh := engine.VersionHash(span)
	base := chunkSum("go", false, "F a.go\n", vh)
	if got := chunkSum("go", false, "F a.go\n", engine.VersionHash([]byte("func F() {}\n"))); got != base {
		t.Fatalf("same inputs: %s vs %s", got, base)
	}
	if len(base) != 16 {
		t.Fatalf("sum %q: want 16 hex digits", base)
	}
	for name, s := range map[string]string{
		"language":  chunkSum("python", false, "F a.go\n", vh),
		"generated": chunkSum("go", true, "F a.go\n", vh),
		"header":    chunkSum("go", false, "G a.go\n", vh),
		"source":    chunkSum("go", false, "F a.go\n", engine.VersionHash([]byte("func F() { }\n"))),
		// the separators keep a shifted boundary from colliding
		"boundary": chunkSum("go", false, "F a.go\n\x00", vh[1:]+"0"),
	} {
		if s == base {
			t.Errorf("%s changed but the sum did not (%s)", name, s)
		}
	}
}
