package ivfpq

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// inspectIndexBytes builds and serialises a small index: 300 vectors of
// dim 8 in 4 lists, ids 5 and 17 removed.
func inspectIndexBytes(t testing.TB, nbits int) []byte {
	const d = 8
	rng := rand.New(rand.NewPCG(5, 5))
	x := make([]float32, 300*d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	ix, err := New(Options{Dim: d, Nlist: 4, M: 4, Nbits: nbits, KMeansIters: 3, Seed: 9, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Train(x); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Add(nil, x); err != nil {
		t.Fatal(err)
	}
	ix.Remove([]uint32{5, 17})
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func fixIVFCRC(b []byte) {
	if n := len(b); n >= 16 {
		binary.LittleEndian.PutUint32(b[n-16:], crc32c(b[:n-16]))
	}
}

func TestInspect(t *testing.T) {
	for _, nbits := range []int{8, 4} {
		data := inspectIndexBytes(t, nbits)
		in, err := Inspect(data)
		if err != nil {
			t.Fatal(err)
		}
		if !in.OK() || in.Format != "STRAIVPQ" || in.Version != 1 || in.Size != int64(len(data)) {
			t.Fatalf("nbits %d: %+v problems %v", nbits, in, in.Problems)
		}
		for name, want := range map[string]any{"dim": uint32(8), "nlist": uint32(4), "M": uint32(4), "nbits": uint32(nbits),
			"ntotal": uint64(300), "nextID": uint64(300), "metric": "l2", "tombstones": uint64(2), "coldCodec": false} {
			if got, _ := in.Field(name); got != want {
				t.Errorf("nbits %d: %s = %v (%T), want %v", nbits, name, got, got, want)
			}
		}
		codesLen := int64(300 * 4)
		if nbits == 4 {
			codesLen = -1 // padded blocks: checked through the directory
		}
		wantLen := map[string]int64{"coarse": 4 * 8 * 4, "codebooks": 8 * (1 << nbits) * 4, "directory": 64, "ids": 1200, "codes": codesLen}
		prev := int64(headerSize)
		for i, s := range in.Sections {
			if s.Name != sectionNames[i] || s.Offset < prev || s.Offset%8 != 0 {
				t.Errorf("section %d %+v", i, s)
			}
			if w := wantLen[s.Name]; w > 0 && s.Length != w {
				t.Errorf("section %s length %d, want %d", s.Name, s.Length, w)
			}
			prev = s.Offset + s.Length
		}
		// The ids section holds every id 0..199 once.
		ids := in.Sections[secIDs]
		seen := map[uint32]bool{}
		for i := int64(0); i < ids.Length; i += 4 {
			seen[binary.LittleEndian.Uint32(data[ids.Offset+i:])] = true
		}
		if len(seen) != 300 {
			t.Fatalf("%d distinct ids", len(seen))
		}

		// Flip a code byte: CRC problem at size-16.
		bad := slices.Clone(data)
		bad[in.Sections[secCodes].Offset+3] ^= 0x80
		bin, _ := Inspect(bad)
		if bin.ChecksumsOK() || len(bin.Problems) != 1 || bin.Problems[0].Offset != int64(len(bad))-16 {
			t.Fatalf("flipped byte: %v", bin.Problems)
		}
		// A directory count off by one (CRC fixed): reported at the directory.
		bad = slices.Clone(data)
		dir := in.Sections[secDirectory].Offset
		binary.LittleEndian.PutUint64(bad[dir:], binary.LittleEndian.Uint64(bad[dir:])+1)
		fixIVFCRC(bad)
		bin, _ = Inspect(bad)
		// (8-bit: list 0's code length is wrong, at dir+8; 4-bit: the padded
		// length may still fit, and the totals disagree, at dir.)
		if !bin.ChecksumsOK() || len(bin.Problems) == 0 || (bin.Problems[0].Offset != dir+8 && !(nbits == 4 && bin.Problems[0].Offset == dir)) {
			t.Fatalf("directory: %v", bin.Problems)
		}
		// Newer version.
		bad = slices.Clone(data)
		binary.LittleEndian.PutUint32(bad[8:], formatVersion+1)
		if bin, _ = Inspect(bad); len(bin.Problems) != 1 || bin.Problems[0].Offset != 8 {
			t.Fatalf("version: %v", bin.Problems)
		}
		for _, n := range []int{8, 30, headerSize + 5, len(data) / 2, len(data) - 1} {
			if tin, err := Inspect(data[:n]); err != nil || tin.OK() {
				t.Fatalf("truncated to %d: %v", n, err)
			}
		}
	}
	if _, err := Inspect([]byte("STRATSEG........")); err == nil {
		t.Fatal("segment identified as IVF-PQ")
	}
}

func TestInspectColdCodec(t *testing.T) {
	const d = 32
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 400*d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	c, err := TrainColdCodec(x, Options{Dim: d, Nlist: 8, KMeansIters: 2, Seed: 1, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	in, err := Inspect(buf.Bytes())
	if err != nil || !in.OK() {
		t.Fatalf("%v %v", err, in.Problems)
	}
	if v, _ := in.Field("coldCodec"); v != true {
		t.Fatalf("coldCodec = %v", v)
	}
}

// FuzzInspect: Inspect never panics, identifies every input with the
// magic, and reports no problem for a file Open accepts.
func FuzzInspect(f *testing.F) {
	data := inspectIndexBytes(f, 8)
	f.Add(data, false)
	f.Add(data[:len(data)/2], true)
	f.Add(inspectIndexBytes(f, 4), true)
	opq, _ := smallOPQIndex(f, 8, IP)
	f.Add(serialise(f, opq), false)
	f.Add([]byte(fileMagic), false)
	f.Fuzz(func(t *testing.T, b []byte, fix bool) {
		b = slices.Clone(b)
		if fix {
			fixIVFCRC(b)
		}
		in, err := Inspect(b)
		if err != nil {
			if bytes.HasPrefix(b, []byte(fileMagic)) {
				t.Fatalf("magic present but not identified: %v", err)
			}
			return
		}
		if _, oerr := Open(b); oerr == nil && !in.OK() {
			t.Fatalf("Open accepts, Inspect reports %v", in.Problems)
		}
	})
}
