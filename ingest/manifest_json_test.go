package ingest

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// marshalRef is the manifest as encoding/json writes it with HTML
// escaping off: the reference for Manifest.appendJSON.
func marshalRef(t testing.TB, m *Manifest) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

var manifestStrings = []string{"", "a", "/usr/src/x.go", "L1-L9", "with \"quote\" and \\", "<tag>&amp;", "tab\tnl\ncr\r",
	"\x00\x01\x1f", "ünïcödé ✓", "bad \xff\xfe utf8", "\u2028\u2029", "0123456789abcdef0123456789abcdef"}

func randManifest(rng *rand.Rand) *Manifest {
	pick := func() string { return manifestStrings[rng.IntN(len(manifestStrings))] }
	list := func() []string {
		switch rng.IntN(4) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		out := make([]string, 1+rng.IntN(4))
		for i := range out {
			out[i] = pick()
		}
		return out
	}
	m := &Manifest{FormatVersion: rng.IntN(3), Journal: uint64(rng.IntN(3)), Files: map[string]*FileEntry{}}
	if rng.IntN(10) == 0 {
		m.Files = nil
		return m
	}
	for i := rng.IntN(8); i > 0; i-- {
		if rng.IntN(10) == 0 {
			m.Files[pick()+pick()] = nil
			continue
		}
		m.Files[pick()+pick()] = &FileEntry{Size: rng.Int64N(1<<40) - 5, MTimeNS: rng.Int64() - 1<<62, Hash: pick(),
			Chunks: list(), ChunkSums: list(), Skip: []string{"", SkipBinary, SkipGenerated}[rng.IntN(3)], Chunker: pick()}
	}
	return m
}

// TestManifestJSONMatchesEncoding: the manifest Save writes is byte for
// byte what encoding/json (HTML escaping off) writes, over random
// manifests with nil and empty lists, nil entries, omitted fields and
// strings that need escaping (quotes, control bytes, invalid UTF-8,
// U+2028); and it loads back to the same manifest.
func TestManifestJSONMatchesEncoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 13))
	for i := 0; i < 2000; i++ {
		m := randManifest(rng)
		got, want := m.appendJSON(nil), marshalRef(t, m)
		if !bytes.Equal(got, want) {
			t.Fatalf("manifest %d:\n got %s\nwant %s", i, got, want)
		}
	}
	path := t.TempDir() + "/m.json"
	m := randManifest(rand.New(rand.NewPCG(1, 2)))
	m.FormatVersion = ManifestVersion
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	live := 0 // entries saved as null load as absent
	for _, e := range m.Files {
		if e != nil {
			live++
		}
	}
	if got, want := back.appendJSON(nil), marshalRef(t, back); !bytes.Equal(got, want) || len(back.Files) != live {
		t.Fatalf("reloaded manifest differs: %s", got)
	}
}

func FuzzManifestJSON(f *testing.F) {
	f.Add("/a/b.go", "L1-L2", "h", int64(3))
	f.Fuzz(func(t *testing.T, path, chunk, hash string, n int64) {
		m := &Manifest{FormatVersion: ManifestVersion, Files: map[string]*FileEntry{
			path: {Size: n, MTimeNS: -n, Hash: hash, Chunks: []string{chunk, path}, ChunkSums: []string{hash}, Skip: chunk, Chunker: hash},
		}}
		if got, want := m.appendJSON(nil), marshalRef(t, m); !bytes.Equal(got, want) {
			t.Fatalf("got %s\nwant %s", got, want)
		}
	})
}
