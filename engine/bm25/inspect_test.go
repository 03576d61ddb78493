package bm25

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func inspectSegBytes(t testing.TB, positions bool) []byte {
	r := rand.New(rand.NewPCG(3, 9))
	docs := synthCorpus(r, 60, 25)
	var buf bytes.Buffer
	b := NewBuilder(Options{OmitPositions: !positions})
	for _, d := range docs {
		if _, err := b.Add(d.ext, d.toks); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func fixSegCRC(b []byte) {
	if len(b) < footerBytes {
		return
	}
	fo := len(b) - footerBytes
	binary.LittleEndian.PutUint32(b[fo+56:], crcOf(b[:fo+56]))
}

func TestInspect(t *testing.T) {
	for _, pos := range []bool{true, false} {
		data := inspectSegBytes(t, pos)
		seg, err := Open(data, "x")
		if err != nil {
			t.Fatal(err)
		}
		want := seg.Info()
		in, err := Inspect(data)
		if err != nil {
			t.Fatal(err)
		}
		if !in.OK() || in.Format != "STRBM25" || in.Version != int(want.Version) || in.Size != want.Size {
			t.Fatalf("info %+v problems %v", in, in.Problems)
		}
		// Sections agree with the opened segment's own description.
		if len(in.Sections) != len(want.Sections) {
			t.Fatalf("sections %+v, want %+v", in.Sections, want.Sections)
		}
		for i, s := range want.Sections {
			g := in.Sections[i]
			if g.Name != s.Name || g.Offset != s.Offset || g.Length != s.Length {
				t.Errorf("section %d = %+v, want %+v", i, g, s)
			}
		}
		for name, v := range map[string]any{"numDocs": uint64(want.NumDocs), "numTerms": uint64(want.NumTerms), "sumDocLen": want.SumDocLen} {
			if g, _ := in.Field(name); g != v {
				t.Errorf("%s = %v, want %v", name, g, v)
			}
		}
		if f, _ := in.Field("flags"); !strings.Contains(f.(string), "positions="+map[bool]string{true: "true", false: "false"}[pos]) {
			t.Errorf("flags %v", f)
		}
		if len(in.Checksums) != 1 || in.Checksums[0].Stored != want.CRC32C || !in.Checksums[0].OK {
			t.Fatalf("checksums %+v, stored %08x", in.Checksums, want.CRC32C)
		}

		// A flipped byte inside the postings: the CRC at footer+56 fails.
		bad := slices.Clone(data)
		post := want.Sections[4]
		bad[post.Offset+post.Length/2] ^= 1
		bin, _ := Inspect(bad)
		fo := int64(len(bad) - footerBytes)
		if bin.ChecksumsOK() || len(bin.Problems) != 1 || bin.Problems[0].Offset != fo+56 {
			t.Fatalf("flipped byte: %v", bin.Problems)
		}
		// A document length changed (CRC fixed up): ΣDL no longer matches.
		bad = slices.Clone(data)
		first := want.Sections[1].Offset
		if binary.LittleEndian.Uint32(data[12:])&flagPacked != 0 {
			first += packedHeaderBytes // the first value's low bits
		}
		bad[first] ^= 1
		fixSegCRC(bad)
		bin, _ = Inspect(bad)
		if !bin.ChecksumsOK() || len(bin.Problems) != 1 || bin.Problems[0].Offset != fo+32 {
			t.Fatalf("doc length: %v", bin.Problems)
		}
		// Truncations are reported, never an error or a panic.
		for _, n := range []int{8, 20, len(data) / 2, len(data) - 1} {
			tin, err := Inspect(data[:n])
			if err != nil || tin.OK() {
				t.Fatalf("%d bytes: err %v, problems %v", n, err, tin.Problems)
			}
		}
	}
	if _, err := Inspect([]byte("STRHNSW\x00xxxxxxxx")); err == nil {
		t.Fatal("HNSW bytes identified as BM25")
	}
}

// FuzzInspect: Inspect never panics, identifies every input with the
// magic, and reports no problem for a segment Open accepts.
func FuzzInspect(f *testing.F) {
	data := inspectSegBytes(f, true)
	f.Add(data, false)
	f.Add(data[:len(data)/2], true)
	f.Add(inspectSegBytes(f, false), true)
	f.Add([]byte(segMagic), false)
	f.Fuzz(func(t *testing.T, b []byte, fix bool) {
		b = slices.Clone(b)
		if fix {
			fixSegCRC(b)
		}
		in, err := Inspect(b)
		if err != nil {
			if bytes.HasPrefix(b, []byte(segMagic)) {
				t.Fatalf("magic present but not identified: %v", err)
			}
			return
		}
		if _, oerr := Open(b, "fuzz"); oerr == nil && !in.OK() {
			t.Fatalf("Open accepts, Inspect reports %v", in.Problems)
		}
	})
}
