package hnsw

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stratasearch/strata/internal/inspect"
)

func fieldOf(t *testing.T, in *inspect.Info, name string) any {
	t.Helper()
	v, ok := in.Field(name)
	if !ok {
		t.Fatalf("no header field %q in %+v", name, in.Header)
	}
	return v
}

func TestInspect(t *testing.T) {
	ix, _ := smallIndex(t, 40, 7) // ids 0, 7, ..., 35 deleted: 6
	data := serialize(t, ix)
	in, err := Inspect(data)
	if err != nil {
		t.Fatal(err)
	}
	if !in.OK() {
		t.Fatalf("problems on a fresh file: %v", in.Problems)
	}
	if in.Format != "STRHNSW" || in.Version != fileVersion || in.Size != int64(len(data)) {
		t.Fatalf("format %s version %d size %d", in.Format, in.Version, in.Size)
	}
	for name, want := range map[string]any{"dim": 12, "M": 6, "efConstruction": 40, "n": int64(40),
		"metric": "cosine", "storage": "float32", "seed": uint64(4), "present": 40, "deleted": 6, "live": 34} {
		if got := fieldOf(t, in, name); got != want {
			t.Errorf("%s = %v (%T), want %v (%T)", name, got, got, want, want)
		}
	}
	// level0, upper and levels are packed (pack.go); labels 1000+i take
	// 2 bytes, then one byte per delta of 1.
	wantLen := map[string]int64{"vectors": 40 * 12 * 4, "levels": int64(len(appendLevels(nil, ix.levels[:40]))), "upperOff": 0,
		"labels": 41, "present": 8, "deleted": 8, "codes": 0, "sq8": 0}
	if len(in.Sections) != numSections {
		t.Fatalf("%d sections", len(in.Sections))
	}
	prevEnd := int64(headerSize)
	for i, s := range in.Sections {
		if s.Name != sectionNames[i] || s.Offset%sectionAlign != 0 || s.Offset < prevEnd {
			t.Errorf("section %d = %+v", i, s)
		}
		if w, ok := wantLen[s.Name]; ok && s.Length != w {
			t.Errorf("section %s length %d, want %d", s.Name, s.Length, w)
		}
		if s.Name == "level0" && (s.Length <= 40 || s.Length >= 40*(1+2*6)*4) {
			t.Errorf("packed level0 length %d, want within (40, %d)", s.Length, 40*(1+2*6)*4)
		}
		prevEnd = s.Offset + s.Length
	}
	// The labels section holds what was written: label 1000+i at row i.
	lab := in.Sections[secLabels-1]
	labels := make([]uint64, 40)
	if at := readLabels(labels, data[lab.Offset:lab.Offset+lab.Length]); at >= 0 {
		t.Fatalf("labels section does not decode (at %d)", at)
	}
	for i, got := range labels {
		if got != 1000+uint64(i) {
			t.Fatalf("label %d = %d", i, got)
		}
	}
	if len(in.Checksums) != 1 || !in.Checksums[0].OK || in.Checksums[0].Offset != int64(len(data))-8 {
		t.Fatalf("checksums %+v", in.Checksums)
	}
	var sb strings.Builder
	if err := inspect.WriteText(&sb, in); err != nil || !strings.Contains(sb.String(), "level0") {
		t.Fatalf("text %q, %v", sb.String(), err)
	}

	// One flipped byte inside the vectors section: the file CRC fails,
	// reported at the stored CRC's offset.
	bad := slices.Clone(data)
	bad[in.Sections[0].Offset+5] ^= 0x10
	bin, err := Inspect(bad)
	if err != nil {
		t.Fatal(err)
	}
	if bin.OK() || bin.ChecksumsOK() || len(bin.Problems) != 1 || bin.Problems[0].Offset != int64(len(bad))-8 ||
		!strings.Contains(bin.Problems[0].Reason, "CRC32C mismatch") {
		t.Fatalf("flipped byte: problems %v checksums %+v", bin.Problems, bin.Checksums)
	}

	// A section length that disagrees with the header (CRC fixed up).
	bad = slices.Clone(data)
	tableOff := int64(binary.LittleEndian.Uint64(bad[len(bad)-16:]))
	at := tableOff + 4 + int64(secPresent-1)*24 + 16
	binary.LittleEndian.PutUint64(bad[at:], 4)
	fixCRC(bad)
	bin, _ = Inspect(bad)
	if len(bin.Problems) != 1 || bin.Problems[0].Offset != at || !bin.ChecksumsOK() {
		t.Fatalf("bad length: %v", bin.Problems)
	}

	// A newer version is a problem at byte 8.
	bad = slices.Clone(data)
	binary.LittleEndian.PutUint32(bad[8:], fileVersion+1)
	bin, _ = Inspect(bad)
	if len(bin.Problems) != 1 || bin.Problems[0].Offset != 8 {
		t.Fatalf("newer version: %v", bin.Problems)
	}
}

func TestInspectTruncated(t *testing.T) {
	ix, _ := smallIndex(t, 30, 0)
	data := serialize(t, ix)
	for _, n := range []int{8, 40, headerSize, headerSize + 10, len(data) / 2, len(data) - 1} {
		in, err := Inspect(data[:n])
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if in.OK() || len(in.Problems) == 0 {
			t.Fatalf("%d bytes: no problem reported", n)
		}
		if p := in.Problems[0]; p.Offset > int64(n) {
			t.Fatalf("%d bytes: problem %v beyond the end", n, p)
		}
	}
	for _, b := range [][]byte{nil, []byte("STRHNS"), []byte("STRBM25\x00 more")} {
		if _, err := Inspect(b); err == nil {
			t.Fatalf("%q identified as HNSW", b)
		}
	}
}

func TestInspectEmptyAndSQ8(t *testing.T) {
	empty, _ := New(Options{Dim: 3})
	in, err := Inspect(serialize(t, empty))
	if err != nil || !in.OK() || fieldOf(t, in, "entry") != "none (empty)" {
		t.Fatalf("empty: %v %+v", err, in)
	}
	ix, err := New(Options{Dim: 8, M: 4, Storage: SQ8})
	if err != nil {
		t.Fatal(err)
	}
	vecs := make([]float32, 8*20)
	for i := range vecs {
		vecs[i] = float32(i%7) - 3
	}
	labels := make([]uint64, 20)
	for i := range labels {
		labels[i] = uint64(i)
	}
	if _, err := ix.AddBatch(labels, vecs, 1); err != nil {
		t.Fatal(err)
	}
	in, err = Inspect(serialize(t, ix))
	if err != nil || !in.OK() {
		t.Fatalf("sq8: %v %v", err, in.Problems)
	}
	if in.Sections[secCodes-1].Length != 20*8 || in.Sections[secSQ8-1].Length != 64 || fieldOf(t, in, "storage") != "sq8" {
		t.Fatalf("sq8 sections %+v", in.Sections)
	}
}

// FuzzInspect: Inspect never panics, identifies every input carrying the
// magic, and finds no problem in any input Open accepts.
func FuzzInspect(f *testing.F) {
	ix, _ := smallIndex(f, 20, 5)
	data := serialize(f, ix)
	f.Add(data, false)
	f.Add(data, true)
	f.Add(data[:len(data)/2], true)
	empty, _ := New(Options{Dim: 2})
	f.Add(serialize(f, empty), true)
	f.Add([]byte("STRHNSW\x00"), false)
	f.Fuzz(func(t *testing.T, b []byte, fix bool) {
		b = slices.Clone(b)
		if fix {
			fixCRC(b)
		}
		in, err := Inspect(b)
		if err != nil {
			if strings.HasPrefix(string(b), fileMagic) {
				t.Fatalf("magic present but not identified: %v", err)
			}
			return
		}
		if x, oerr := Open(b); oerr == nil {
			x.Close()
			if !in.OK() {
				t.Fatalf("Open accepts, Inspect reports %v", in.Problems)
			}
		}
	})
}

// BenchmarkInspect compares Inspect (header, table, CRC) with Open (which
// also validates every link) on the same file.
func BenchmarkInspect(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, d = 5000, 64
	ix := build(b, Options{Dim: d, M: 16, EfConstruction: 64}, randVecs(rng, n, d))
	data := serialize(b, ix)
	b.Run(fmt.Sprintf("op=inspect/n=%d/dim=%d", n, d), func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Inspect(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(fmt.Sprintf("op=open/n=%d/dim=%d", n, d), func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			x, err := Open(data)
			if err != nil {
				b.Fatal(err)
			}
			x.Close()
		}
	})
}
