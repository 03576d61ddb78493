package datasets

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rawVecs builds a TEXMEX file by hand (the reference encoder).
func rawVecs(dims []int32, elemBytes int, fill byte) []byte {
	var b []byte
	for _, d := range dims {
		b = binary.LittleEndian.AppendUint32(b, uint32(d))
		if d > 0 {
			b = append(b, bytes.Repeat([]byte{fill}, int(d)*elemBytes)...)
		}
	}
	return b
}

func TestFvecsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	m := Matrix[float32]{N: 37, D: 5, Data: make([]float32, 37*5)}
	for i := range m.Data {
		m.Data[i] = float32(r.NormFloat64())
	}
	m.Data[3] = float32(math.Inf(-1))
	path := filepath.Join(t.TempDir(), "x.fvecs")
	if err := WriteFvecs(path, m); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if len(raw) != 37*(4+5*4) || binary.LittleEndian.Uint32(raw) != 5 ||
		math.Float32frombits(binary.LittleEndian.Uint32(raw[4:])) != m.Data[0] {
		t.Fatalf("unexpected layout (%d bytes)", len(raw))
	}
	got, err := ReadFvecs(path)
	if err != nil || got.N != 37 || got.D != 5 || !slices.Equal(got.Data, m.Data) {
		t.Fatalf("ReadFvecs: %v, %d×%d", err, got.N, got.D)
	}
	mp, err := OpenFvecs(path)
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Close()
	if mp.Len() != 37 || mp.Dim() != 5 {
		t.Fatalf("mapped %d×%d", mp.Len(), mp.Dim())
	}
	for i := 0; i < 37; i++ {
		if !slices.Equal(mp.Row(i), m.Row(i)) {
			t.Fatalf("row %d differs", i)
		}
	}
	if !slices.Equal(mp.Matrix().Data, m.Data) {
		t.Fatal("Matrix() differs")
	}
	if err := mp.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestIvecsBvecsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	im := Matrix[int32]{N: 4, D: 3, Data: []int32{1, -2, 3, 4, 5, 6, 7, 8, 9, math.MaxInt32, math.MinInt32, 0}}
	if err := WriteIvecs(filepath.Join(dir, "a.ivecs"), im); err != nil {
		t.Fatal(err)
	}
	got, err := ReadIvecs(filepath.Join(dir, "a.ivecs"))
	if err != nil || !slices.Equal(got.Data, im.Data) || got.D != 3 {
		t.Fatalf("ivecs %v %v", got, err)
	}
	mi, err := OpenIvecs(filepath.Join(dir, "a.ivecs"))
	if err != nil || !slices.Equal(mi.Row(3), im.Row(3)) {
		t.Fatalf("OpenIvecs %v", err)
	}
	mi.Close()
	bm := Matrix[uint8]{N: 3, D: 5, Data: []uint8{0, 1, 2, 3, 255, 9, 8, 7, 6, 5, 1, 1, 1, 1, 1}}
	if err := WriteBvecs(filepath.Join(dir, "a.bvecs"), bm); err != nil {
		t.Fatal(err)
	}
	// bvecs rows are 9 bytes: unaligned row starts must still work.
	mb, err := OpenBvecs(filepath.Join(dir, "a.bvecs"))
	if err != nil || mb.Len() != 3 || !slices.Equal(mb.Row(1), bm.Row(1)) || !slices.Equal(mb.Row(2), bm.Row(2)) {
		t.Fatalf("OpenBvecs %v", err)
	}
	mb.Close()
	gb, err := ReadBvecs(filepath.Join(dir, "a.bvecs"))
	if err != nil || !slices.Equal(gb.Data, bm.Data) {
		t.Fatalf("ReadBvecs %v", err)
	}
	// Empty file: zero vectors, no error.
	os.WriteFile(filepath.Join(dir, "e.fvecs"), nil, 0o644)
	me, err := OpenFvecs(filepath.Join(dir, "e.fvecs"))
	if err != nil || me.Len() != 0 {
		t.Fatalf("empty: %v", err)
	}
	me.Close()
}

func TestVecsCorruption(t *testing.T) {
	for _, tc := range []struct {
		name   string
		data   []byte
		rec    int64 // 0-based; CorruptError.Record is rec+1
		offset int64
		msg    string
	}{
		{"truncated header", append(rawVecs([]int32{2}, 4, 0), 2, 0), 1, 12, "truncated dimension header"},
		{"truncated body", rawVecs([]int32{2, 2}, 4, 0)[:20], 1, 12, "truncated record body"},
		{"zero dim", rawVecs([]int32{2, 0}, 4, 0), 1, 12, "out of range"},
		{"negative dim", rawVecs([]int32{-1}, 4, 0), 0, 0, "out of range"},
		{"absurd dim", rawVecs([]int32{MaxDim + 1}, 0, 0), 0, 0, "out of range"},
		{"inconsistent dim", rawVecs([]int32{2, 2, 3}, 4, 0), 2, 24, "differs"},
	} {
		path := filepath.Join(t.TempDir(), "bad.fvecs")
		os.WriteFile(path, tc.data, 0o644)
		_, err1 := ReadFvecs(path)
		mp, err2 := OpenFvecs(path)
		if mp != nil {
			mp.Close()
		}
		for which, err := range []error{err1, err2} {
			var ce *CorruptError
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) {
				t.Fatalf("%s (%d): error %v is not corrupt", tc.name, which, err)
			}
			if ce.Record != tc.rec+1 || ce.Offset != tc.offset || ce.Path != path || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%s (%d): got record %d offset %d: %v", tc.name, which, ce.Record, ce.Offset, err)
			}
		}
	}
}

func TestVecsWriterErrors(t *testing.T) {
	if _, err := NewFvecsWriter(&bytes.Buffer{}, 0); err == nil {
		t.Error("dim 0 accepted")
	}
	w, _ := NewFvecsWriter(&bytes.Buffer{}, 3)
	if err := w.Write([]float32{1, 2}); err == nil {
		t.Error("short row accepted")
	}
	if err := WriteFvecs(filepath.Join(t.TempDir(), "x"), Matrix[float32]{N: 2, D: 2, Data: []float32{1}}); err == nil {
		t.Error("inconsistent matrix accepted")
	}
}

func fuzzVecs[T Elem](t *testing.T, data []byte) {
	es := elemSize[T]()
	r := newVecsReader[T](bytes.NewReader(data), "fuzz")
	m, err := r.ReadAll()
	mp, err2 := newMapped[T]("fuzz", data)
	if (err == nil) != (err2 == nil) {
		t.Fatalf("stream err %v, mapped err %v", err, err2)
	}
	if err != nil {
		if !errors.Is(err, ErrCorrupt) || !errors.Is(err2, ErrCorrupt) {
			t.Fatalf("non-corrupt error: %v / %v", err, err2)
		}
		return
	}
	if len(data) != m.N*(4+m.D*es) || mp.Len() != m.N || mp.Dim() != m.D {
		t.Fatalf("%d bytes decoded as %d×%d (mapped %d×%d)", len(data), m.N, m.D, mp.Len(), mp.Dim())
	}
	for i := 0; i < m.N; i++ {
		a, b := make([]byte, m.D*es), make([]byte, m.D*es)
		encodeElems(a, mp.Row(i)) // compare bits: NaN != NaN
		encodeElems(b, m.Row(i))
		if !bytes.Equal(a, b) {
			t.Fatalf("row %d differs", i)
		}
	}
	// Re-encoding reproduces the input byte for byte.
	var buf bytes.Buffer
	if m.N > 0 {
		w, _ := newVecsWriter[T](&buf, m.D)
		for i := 0; i < m.N; i++ {
			w.Write(m.Row(i))
		}
		w.Flush()
	}
	if !bytes.Equal(buf.Bytes(), data) {
		t.Fatal("re-encoding differs")
	}
}

func vecsSeeds(f *testing.F) {
	f.Add([]byte{})
	f.Add(rawVecs([]int32{3, 3}, 4, 1))
	f.Add(rawVecs([]int32{3, 3}, 1, 7))
	f.Add(rawVecs([]int32{2, 3}, 4, 0))
	f.Add(rawVecs([]int32{1}, 4, 0)[:6])
	f.Add(rawVecs([]int32{-5}, 0, 0))
	f.Add(rawVecs([]int32{1 << 30}, 0, 0))
}

func FuzzFvecs(f *testing.F) { vecsSeeds(f); f.Fuzz(fuzzVecs[float32]) }
func FuzzIvecs(f *testing.F) { vecsSeeds(f); f.Fuzz(fuzzVecs[int32]) }
func FuzzBvecs(f *testing.F) { vecsSeeds(f); f.Fuzz(fuzzVecs[uint8]) }
