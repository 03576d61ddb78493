package tier

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/internal/inspect"
	"github.com/stratasearch/strata/vfs"
)

// bm25Lex builds real engine/bm25 sections (whitespace tokens).
type bm25Lex struct{}

func (bm25Lex) BuildLexical(docs []*Document) ([]byte, error) {
	b := bm25.NewBuilder(bm25.Options{})
	for i, d := range docs {
		var toks []text.Token
		for p, w := range strings.Fields(d.Content) {
			toks = append(toks, text.Token{Term: w, Pos: p})
		}
		if _, err := b.Add(uint64(i), toks); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	_, err := b.WriteTo(&buf)
	return buf.Bytes(), err
}

// inspectStore is a store with one flushed segment of nDocs rows (every
// 10th without a vector) and, with archive set, that segment archived to
// a cold Parquet file instead. It returns the file system and the store's
// files by base name.
type inspectStore struct {
	fs    vfs.FS
	files map[string][]byte
	rows  int
	vecs  int
}

func buildInspectStore(t testing.TB, nDocs int, archive bool) *inspectStore {
	mem := vfs.NewCrashableMem()
	o := testOptions(mem)
	o.LexicalSegments = bm25Lex{}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(7, 7))
	st := &inspectStore{fs: mem, files: map[string][]byte{}, rows: nDocs}
	for i := 0; i < nDocs; i += 50 {
		var b Batch
		for j := i; j < min(i+50, nDocs); j++ {
			var vec []float32
			if j%10 != 3 || archive {
				vec = make([]float32, testDim)
				for k := range vec {
					vec[k] = float32(rng.NormFloat64())
				}
				st.vecs++
			}
			b.Upsert(Document{ID: fmt.Sprintf("doc-%04d", j), Content: fmt.Sprintf("word%d common text %d", j%13, j),
				Vector: vec, Namespace: "t/", Trust: TrustDerived, UpdatedUnixNano: int64(j)})
		}
		if _, err := s.Apply(&b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if archive {
		if _, err := s.Archive(context.Background(), ArchiveOptions{Oldest: 1, Seed: 1, KMeansIters: 2}); err != nil {
			t.Fatal(err)
		}
	}
	names, err := mem.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		f, err := mem.Open(filepath.Join("/db", n))
		if err != nil {
			continue // a directory
		}
		var buf bytes.Buffer
		_, rerr := buf.ReadFrom(f)
		f.Close()
		if rerr == nil {
			st.files[n] = buf.Bytes()
		}
	}
	return st
}

func (st *inspectStore) file(t testing.TB, prefix string) (string, []byte) {
	for n, b := range st.files {
		if strings.HasPrefix(n, prefix) && !strings.HasSuffix(n, ".tmp") {
			return n, b
		}
	}
	t.Fatalf("no %s* file among %v", prefix, slices.Collect(func(yield func(string) bool) {
		for n := range st.files {
			if !yield(n) {
				return
			}
		}
	}))
	return "", nil
}

func tierField(t *testing.T, in *inspect.Info, name string) any {
	t.Helper()
	v, ok := in.Field(name)
	if !ok {
		t.Fatalf("no field %q in %+v", name, in.Header)
	}
	return v
}

func sectionNamed(t *testing.T, in *inspect.Info, name string) inspect.Section {
	t.Helper()
	for _, s := range in.Sections {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no section %q in %+v", name, in.Sections)
	return inspect.Section{}
}

func hasProblemAt(in *inspect.Info, off int64, substr string) bool {
	for _, p := range in.Problems {
		if p.Offset == off && strings.Contains(p.Reason, substr) {
			return true
		}
	}
	return false
}

func TestInspectSegment(t *testing.T) {
	st := buildInspectStore(t, 120, false)
	_, data := st.file(t, "seg-")
	in, err := Inspect(data)
	if err != nil {
		t.Fatal(err)
	}
	if !in.OK() || len(in.Warnings) != 0 || in.Format != "STRATSEG" || in.Version != segVersionCompact {
		t.Fatalf("fresh segment: problems %v warnings %v", in.Problems, in.Warnings)
	}
	for name, want := range map[string]any{"rows": uint64(120), "dim": uint64(testDim), "metric": "l2",
		"minEpoch": uint64(1), "maxEpoch": uint64(3), "sections": uint64(6)} {
		if got := tierField(t, in, name); got != want {
			t.Errorf("%s = %v (%T), want %v", name, got, got, want)
		}
	}
	// Every section's stored CRC is the CRC of its bytes, and they are
	// 64-byte aligned; 6 section checksums + the table's + the file's
	// (format version 3: meta, docs, hnsw, bm25, textIndex, text).
	for _, s := range in.Sections {
		if s.CRC == nil || *s.CRC != crc32.Checksum(data[s.Offset:s.Offset+s.Length], crcTable) || s.Offset%segAlign != 0 {
			t.Errorf("section %+v", s)
		}
	}
	if len(in.Checksums) != 8 {
		t.Fatalf("checksums %+v", in.Checksums)
	}
	// Children: the HNSW over the 108 vectors and the BM25 over all rows,
	// in file coordinates.
	if len(in.Children) != 2 {
		t.Fatalf("%d children", len(in.Children))
	}
	h, l := in.Children[0], in.Children[1]
	hs, ls := sectionNamed(t, in, "hnsw"), sectionNamed(t, in, "bm25")
	if h.Format != "STRHNSW" || h.Offset != hs.Offset || h.Size != hs.Length || tierField(t, h, "n") != int64(st.vecs) {
		t.Fatalf("hnsw child %+v", h)
	}
	if l.Format != "STRBM25" || l.Offset != ls.Offset || tierField(t, l, "numDocs") != uint64(120) {
		t.Fatalf("bm25 child %+v", l)
	}
	for _, s := range h.Sections {
		if s.Offset < hs.Offset || s.Offset+s.Length > hs.Offset+hs.Length {
			t.Fatalf("hnsw child section %+v outside its parent section %+v", s, hs)
		}
	}

	// A flipped byte in the doc store: its section CRC fails at the
	// section's offset, and the file CRC at the footer.
	docs := sectionNamed(t, in, "docs")
	bad := slices.Clone(data)
	bad[docs.Offset+docs.Length/2] ^= 4
	bin, _ := Inspect(bad)
	if bin.ChecksumsOK() || len(bin.Problems) != 2 || !hasProblemAt(bin, docs.Offset, "section docs CRC32C") ||
		!hasProblemAt(bin, int64(len(bad))-16, "file CRC32C") {
		t.Fatalf("docs byte: %v", bin.Problems)
	}
	// A flipped byte in the HNSW vectors: the section CRC, the file CRC,
	// and the child's own CRC at its absolute offset.
	bad = slices.Clone(data)
	bad[h.Sections[0].Offset+1] ^= 4
	bin, _ = Inspect(bad)
	if !hasProblemAt(bin, hs.Offset, "section hnsw") || bin.Children[0].OK() ||
		!hasProblemAt(bin.Children[0], hs.Offset+hs.Length-8, "file CRC32C") {
		t.Fatalf("hnsw byte: %v / child %v", bin.Problems, bin.Children[0].Problems)
	}
	// Truncations.
	for _, n := range []int{8, 12, 30, len(data) / 2, len(data) - 1} {
		tin, err := Inspect(data[:n])
		if err != nil || tin.OK() {
			t.Fatalf("truncated to %d: %v %+v", n, err, tin)
		}
	}
	if _, err := Inspect([]byte("STRHNSW\x00")); err == nil {
		t.Fatal("HNSW magic identified as a segment")
	}
	var sb strings.Builder
	inspect.WriteText(&sb, in)
	if !strings.Contains(sb.String(), "section hnsw") || !strings.Contains(sb.String(), "STRBM25") {
		t.Fatalf("text:\n%s", sb.String())
	}
}

func TestInspectManifest(t *testing.T) {
	st := buildInspectStore(t, 60, false)
	name, data := st.file(t, "MANIFEST-")
	m, err := OpenManifest(st.fs, "/db", ManifestOptions{Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	want := m.State()
	m.Close()
	in, err := InspectManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	if !in.OK() || in.Format != "MANIFEST" || in.Version != manifestFormatVersion {
		t.Fatalf("%s: %v", name, in.Problems)
	}
	if len(in.Records) < 2 || in.Records[0].Type != "manifestCheckpoint" || in.Records[1].Type != "manifestEdit" {
		t.Fatalf("records %+v", in.Records)
	}
	if tierField(t, in, "durableEpoch") != want.DurableEpoch || tierField(t, in, "segments") != len(want.Segments) ||
		tierField(t, in, "tombstones") != len(want.Tombstones) || tierField(t, in, "nextSegmentID") != want.NextSegmentID {
		t.Fatalf("header %+v, state %+v", in.Header, want)
	}
	sg := want.Segments[0]
	if v := tierField(t, in, fmt.Sprintf("segment %d", sg.ID)).(string); !strings.HasPrefix(v, sg.File) || !strings.Contains(v, "rows=60") {
		t.Fatalf("segment field %q", v)
	}
	_, cur := st.file(t, "CURRENT")
	if cin, _ := InspectCurrent(cur); !cin.OK() || tierField(t, cin, "manifest") != name {
		t.Fatalf("CURRENT %+v", cin)
	}
	if cin, _ := InspectCurrent([]byte("MANIFEST-x\n")); cin.OK() {
		t.Fatal("bad CURRENT accepted")
	}

	// The same manifest in a real directory: the listed segment must be
	// there with its size; an unlisted one is a warning.
	dir := t.TempDir()
	for n, b := range st.files {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fin, err := InspectManifestFiles(filepath.Join(dir, name))
	if err != nil || !fin.OK() || len(fin.Warnings) != 0 {
		t.Fatalf("files: %v %v %v", err, fin.Problems, fin.Warnings)
	}
	os.WriteFile(filepath.Join(dir, "seg-000077.sst"), []byte("x"), 0o644)
	os.Truncate(filepath.Join(dir, sg.File), 100)
	fin, _ = InspectManifestFiles(filepath.Join(dir, name))
	if len(fin.Problems) != 1 || !strings.Contains(fin.Problems[0].Reason, "has 100 bytes") ||
		len(fin.Warnings) != 1 || !strings.Contains(fin.Warnings[0].Reason, "seg-000077.sst") {
		t.Fatalf("files: %v %v", fin.Problems, fin.Warnings)
	}
	os.Remove(filepath.Join(dir, sg.File))
	if fin, _ = InspectManifestFiles(filepath.Join(dir, name)); len(fin.Problems) != 1 || !strings.Contains(fin.Problems[0].Reason, sg.File) {
		t.Fatalf("missing segment: %v", fin.Problems)
	}

	// A flipped byte in the checkpoint (followed by an intact edit):
	// corruption at offset 0.
	bad := slices.Clone(data)
	bad[20] ^= 1
	bin, _ := InspectManifest(bad)
	if bin.ChecksumsOK() || !hasProblemAt(bin, 0, "corrupt record") {
		t.Fatalf("flipped: %v", bin.Problems)
	}
	// The last edit torn: a warning; the state is the checkpoint's.
	last := in.Records[len(in.Records)-1]
	tin, _ := InspectManifest(data[:last.Offset+last.Length-1])
	if !tin.OK() || len(tin.Warnings) != 1 || tin.Warnings[0].Offset != last.Offset {
		t.Fatalf("torn: %v %v", tin.Problems, tin.Warnings)
	}
	// An edit that does not apply (removes an unknown segment).
	var e []byte
	e = append(e, data...)
	e = append(e, walRecordForTest(uint64(len(in.Records)+1), encodeEdit(Edit{Remove: []uint64{999}}))...)
	ein, _ := InspectManifest(e)
	if !hasProblemAt(ein, int64(len(data)), "unknown segment 999") {
		t.Fatalf("bad edit: %v", ein.Problems)
	}
}

func TestInspectArchive(t *testing.T) {
	st := buildInspectStore(t, 300, true)
	_, data := st.file(t, "cold-")
	in, err := InspectArchive(data)
	if err != nil {
		t.Fatal(err)
	}
	if !in.OK() || in.Format != "parquet" || in.Version != coldFormatVersion {
		t.Fatalf("archive: %v %+v", in.Problems, in.Header)
	}
	for name, want := range map[string]any{"numRows": int64(300), "rows": uint64(300), "dim": testDim,
		"kv " + kvFormat: "1", "exactVectors": true} {
		if got := tierField(t, in, name); got != want {
			t.Errorf("%s = %v (%T), want %v", name, got, got, want)
		}
	}
	// One column chunk per schema column in the row group(s), inside the
	// data region, and the codec as a child.
	cols := 0
	for _, s := range in.Sections {
		if strings.HasPrefix(s.Name, "rg0/") {
			cols++
		}
	}
	if cols < len(coldColumns) || len(in.Children) != 1 || in.Children[0].Format != "STRAIVPQ" || !in.Children[0].OK() {
		t.Fatalf("%d rg0 columns, children %+v", cols, in.Children)
	}
	if v := tierField(t, in.Children[0], "coldCodec"); v != true {
		t.Fatalf("codec child coldCodec = %v", v)
	}
	// A footer length beyond the file, and a truncated file.
	bad := slices.Clone(data)
	binary.LittleEndian.PutUint32(bad[len(bad)-8:], uint32(len(bad)))
	if bin, _ := InspectArchive(bad); bin.OK() || bin.Problems[0].Offset != int64(len(bad))-8 {
		t.Fatalf("footer length: %v", bin.Problems)
	}
	if tin, err := InspectArchive(data[:len(data)-3]); err != nil || tin.OK() {
		t.Fatalf("truncated: %v", err)
	}
	if _, err := InspectArchive([]byte("STRATSEG")); err == nil {
		t.Fatal("segment identified as Parquet")
	}
}

func walRecordForTest(seq uint64, payload []byte) []byte {
	return wal.AppendRecord(nil, wal.TypeManifestEdit, seq, payload)
}

// FuzzInspectSegment: Inspect never panics, identifies every input with
// the magic, and reports nothing wrong outside the lexical section for a
// file openSegment accepts.
func FuzzInspectSegment(f *testing.F) {
	st := buildInspectStore(f, 40, false)
	_, data := st.file(f, "seg-")
	f.Add(data, false)
	f.Add(data, true)
	f.Add(data[:len(data)/2], true)
	f.Add([]byte(segMagic), false)
	f.Add(ivfSegBytes(f, 40), false) // IVF-PQ section (segivf_test.go)
	f.Add(ivfSegBytes(f, 12), true)  // flat section
	f.Fuzz(func(t *testing.T, b []byte, fix bool) {
		b = slices.Clone(b)
		if fix && len(b) >= 16 {
			binary.LittleEndian.PutUint32(b[len(b)-16:], crc32.Checksum(b[:len(b)-16], crcTable))
		}
		in, err := Inspect(b)
		if err != nil {
			if bytes.HasPrefix(b, []byte(segMagic)) {
				t.Fatalf("magic present but not identified: %v", err)
			}
			return
		}
		if w, oerr := openSegment(b, "fuzz", testDim, L2); oerr == nil {
			w.free()
			for _, p := range in.Problems {
				if !strings.Contains(p.Reason, "bm25") {
					t.Fatalf("openSegment accepts, Inspect reports %v", in.Problems)
				}
			}
		}
	})
}

// FuzzInspectManifest and FuzzInspectArchive: never panic.
func FuzzInspectManifest(f *testing.F) {
	st := buildInspectStore(f, 20, false)
	_, data := st.file(f, "MANIFEST-")
	f.Add(data)
	f.Add(data[:len(data)-2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := InspectManifest(b); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzInspectArchive(f *testing.F) {
	st := buildInspectStore(f, 260, true)
	_, data := st.file(f, "cold-")
	f.Add(data)
	f.Add(data[:len(data)-10])
	f.Add([]byte("PAR1PAR1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := InspectArchive(b); err != nil && bytes.HasPrefix(b, []byte("PAR1")) {
			t.Fatal(err)
		}
	})
}

// BenchmarkInspectSegment compares Inspect (tables, CRCs, children's
// headers) with openSegment (which also decompresses and decodes the doc
// store and opens the HNSW) on one 2000-row segment.
func BenchmarkInspectSegment(b *testing.B) {
	st := buildInspectStore(b, 2000, false)
	_, data := st.file(b, "seg-")
	b.Run("op=inspect/rows=2000", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Inspect(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("op=open/rows=2000", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			w, err := openSegment(data, "bench", testDim, L2)
			if err != nil {
				b.Fatal(err)
			}
			w.index.Close()
		}
	})
}

// FuzzInspectCurrent: never panics; only "MANIFEST-<n>\n" with n ≥ 1 is
// accepted.
func FuzzInspectCurrent(f *testing.F) {
	f.Add([]byte("MANIFEST-000001\n"))
	f.Add([]byte("MANIFEST-0\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := InspectCurrent(b)
		if err != nil {
			t.Fatal(err)
		}
		n, ok := parseManifestName(strings.TrimSpace(string(b)))
		if in.OK() != (ok && n > 0 && string(b) == strings.TrimSpace(string(b))+"\n") {
			t.Fatalf("%q: OK %v", b, in.OK())
		}
	})
}
