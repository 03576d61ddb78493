package remote

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stratasearch/strata/engine/tier"
	"github.com/stratasearch/strata/internal/base"
)

func validManifest() []byte {
	b := make([]byte, 3*BlockSize/2)
	sum, blocks := checksums(b)
	m := Manifest{FormatVersion: FormatVersion, Version: 3, Parent: 2, Writer: "w", LeaseToken: "t",
		Collections: []CollectionManifest{{Name: "docs", Config: json.RawMessage(`{"name":"docs"}`),
			State: tier.ManifestState{DurableEpoch: 4, NextSegmentID: 2,
				Segments: []tier.SegmentMeta{{ID: 1, File: "seg-000001.sst", Rows: 2, SizeBytes: uint64(len(b))}}},
			Objects: []Object{{File: "seg-000001.sst", Key: objectKey("docs", "seg-000001.sst", sum), Size: int64(len(b)),
				SHA256: sum, Blocks: blocks}}}}}
	out, _ := json.Marshal(&m)
	return out
}

func TestDecodeManifest(t *testing.T) {
	good := validManifest()
	m, err := DecodeManifest("s3://b/p/manifests/3", 3, good)
	if err != nil || m.Version != 3 || len(m.Collections[0].Objects) != 1 {
		t.Fatalf("valid manifest: %v", err)
	}
	if _, err := DecodeManifest("k", 4, good); !errors.Is(err, base.ErrCorrupt) {
		t.Fatalf("version mismatch accepted: %v", err)
	}
	for name, mut := range map[string]func(*Manifest){
		"format":      func(m *Manifest) { m.FormatVersion = 9 },
		"parent":      func(m *Manifest) { m.Parent = 3 },
		"name":        func(m *Manifest) { m.Collections[0].Name = "../x" },
		"key":         func(m *Manifest) { m.Collections[0].Objects[0].Key = "data/docs/../../lease" },
		"blocks":      func(m *Manifest) { m.Collections[0].Objects[0].Blocks = nil },
		"extra file":  func(m *Manifest) { m.Collections[0].Objects[0].File = "seg-000009.sst" },
		"no object":   func(m *Manifest) { m.Collections[0].Objects = nil },
		"dup":         func(m *Manifest) { m.Collections = append(m.Collections, m.Collections[0]) },
		"config":      func(m *Manifest) { m.Collections[0].Config = json.RawMessage(`{`) },
		"short hash":  func(m *Manifest) { m.Collections[0].Objects[0].SHA256 = "ab" },
		"negative sz": func(m *Manifest) { m.Collections[0].Objects[0].Size = -1 },
	} {
		var m Manifest
		json.Unmarshal(good, &m)
		mut(&m)
		b, err := json.Marshal(&m)
		if err != nil {
			continue // unmarshalable mutation (bad RawMessage): the decoder never sees it
		}
		var ce *base.CorruptError
		if _, err := DecodeManifest("s3://b/p/k", 3, b); !errors.As(err, &ce) || ce.Path != "s3://b/p/k" {
			t.Errorf("%s: %v, want a CorruptError naming the key", name, err)
		}
	}
	var ce *base.CorruptError
	if _, err := DecodeManifest("k", 0, good[:len(good)/2]); !errors.As(err, &ce) {
		t.Fatalf("truncated: %v", err)
	}
}

// FuzzDecodeManifest: any input is decoded or refused with a
// CorruptError, never a panic; an accepted manifest re-encodes to one
// that is accepted again.
func FuzzDecodeManifest(f *testing.F) {
	f.Add(validManifest())
	f.Add([]byte(`{"format_version":1,"version":1,"parent":0,"collections":[]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeManifest("k", 0, b)
		if err != nil {
			if !errors.Is(err, base.ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
			return
		}
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeManifest("k", m.Version, out); err != nil {
			t.Fatalf("re-encoded manifest refused: %v", err)
		}
	})
}
