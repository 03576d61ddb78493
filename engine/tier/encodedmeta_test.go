package tier

import (
	"maps"
	"testing"

	"github.com/stratasearch/strata/vfs"
)

// TestEncodedMetadata: a document written with EncodedMetadata is stored
// with the metadata map it encodes, before and after reopening; one whose
// EncodedMetadata does not decode is refused before the WAL sees it (the
// epoch does not move and nothing is written).
func TestEncodedMetadata(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := mustOpen(t, testOptions(fs))
	want := map[string]string{"a": `"x"`, "b": "1e20", "c": "true"}
	enc := AppendMetadataCount(nil, 3)
	for _, k := range []string{"a", "b", "c"} {
		enc = AppendMetadataEntry(enc, k, want[k])
	}
	var b Batch
	b.Upsert(Document{ID: "d", Content: "x", EncodedMetadata: enc})
	if _, err := s.Apply(&b); err != nil {
		t.Fatal(err)
	}
	check := func(s *Store, when string) {
		d, _, ok := s.Snapshot().Get("d")
		if !ok || !maps.Equal(d.Metadata, want) || d.EncodedMetadata != nil {
			t.Fatalf("%s: %v %q %q", when, ok, d.Metadata, d.EncodedMetadata)
		}
	}
	check(s, "applied")
	e := s.Epoch()
	var bad Batch
	bad.Upsert(Document{ID: "e", Content: "y", EncodedMetadata: AppendMetadataCount(nil, 5)})
	if _, err := s.Apply(&bad); err == nil {
		t.Fatal("a malformed EncodedMetadata was applied")
	}
	if s.Epoch() != e {
		t.Fatalf("epoch %d after a refused batch, want %d", s.Epoch(), e)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := mustOpen(t, testOptions(fs))
	defer s2.Close()
	check(s2, "reopened")
	if _, _, ok := s2.Snapshot().Get("e"); ok || s2.Epoch() != e {
		t.Fatalf("the refused batch reached the WAL: epoch %d, want %d", s2.Epoch(), e)
	}
}
