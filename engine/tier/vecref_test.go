package tier

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// vecRefRows are seeded rows whose vectors stress the by-reference
// rebuild: Gaussian, scaled by 1e-30 and 1e30, with -0 and denormal
// components, one-hot, all-zero, and rows without a vector.
func vecRefRows(seed uint64, n int) []segRow {
	rng := rand.New(rand.NewPCG(seed, 3))
	rows := make([]segRow, n)
	for i := range rows {
		d := &Document{ID: fmt.Sprintf("r%04d", i), Content: fmt.Sprintf("row %d", i), Metadata: map[string]string{"k": fmt.Sprint(i % 3)}}
		if i%7 != 3 {
			v := make([]float32, testDim)
			scale := []float64{1, 1e-30, 1e30, 3.7}[i%4]
			for k := range v {
				v[k] = float32(rng.NormFloat64() * scale)
			}
			switch i % 11 {
			case 1:
				v[0] = float32(math.Copysign(0, -1))
			case 2:
				v[1] = math.Float32frombits(1) // smallest denormal
			case 5:
				clear(v)
				v[i%testDim] = 1
			case 8:
				clear(v)
			}
			d.Vector = v
		}
		rows[i] = segRow{doc: d, birth: uint64(1 + i/50)}
	}
	return rows
}

// TestVectorsByReference: an HNSW segment (format versions 4 and 5)
// stores each vector once, in the hnsw section: its doc store holds no
// vector floats, and the opened rows' vectors equal the written ones bit
// for bit, for every metric, including vectors whose rebuild needs
// exceptions.
func TestVectorsByReference(t *testing.T) {
	for _, compact := range []bool{false, true} {
		t.Run(fmt.Sprintf("compact=%v", compact), func(t *testing.T) {
			defer func(old bool) { segWriteCompact = old }(segWriteCompact)
			segWriteCompact = compact
			testVectorsByReference(t, compact)
		})
	}
}

func testVectorsByReference(t *testing.T, compact bool) {
	const n = 300
	wantVersion := segVersionTextRef
	if compact {
		wantVersion = segVersionCompact
	}
	for _, m := range []Metric{Cosine, L2, IP} {
		rows := vecRefRows(uint64(m)+1, n)
		data, err := buildSegment(rows, segBuildOptions{dim: testDim, metric: m, m: 8, efConstruction: 32, threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		sg, err := openSegment(data, "vecref.sst", testDim, m)
		if err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		nvec := 0
		for i, r := range rows {
			got := sg.docs[i].Vector
			if (got == nil) != (r.doc.Vector == nil) || len(got) != len(r.doc.Vector) {
				t.Fatalf("%v row %d: vector %v, wrote %v", m, i, got, r.doc.Vector)
			}
			for k := range got {
				if math.Float32bits(got[k]) != math.Float32bits(r.doc.Vector[k]) {
					t.Fatalf("%v row %d component %d: %v (%#x), wrote %v (%#x)", m, i, k, got[k], math.Float32bits(got[k]), r.doc.Vector[k], math.Float32bits(r.doc.Vector[k]))
				}
			}
			if got != nil {
				nvec++
			}
		}
		// The raw doc store is far smaller than the vectors alone.
		in, err := Inspect(data)
		if err != nil || !in.OK() || in.Version != wantVersion {
			t.Fatalf("%v: inspect: %v %v version %d", m, err, in.Problems, in.Version)
		}
		// The raw doc store is the version 1 one minus the vectors, plus
		// per vector its dimension and exception count (and norm, cosine)
		// and few exceptions.
		var inline []byte
		inline = binary.AppendUvarint(inline, uint64(len(rows)))
		for _, r := range rows {
			inline = binary.AppendUvarint(inline, r.birth)
			inline = putStr(inline, r.doc.ID)
			inline = appendDocBody(inline, r.doc, r.doc.UpdatedUnixNano)
		}
		perVec := 2
		if m == Cosine {
			perVec += 8
		}
		raw := mustAtoi(t, fmt.Sprint(tierField(t, in, "docStoreRawBytes")))
		if want := len(inline) - 4*testDim*nvec + (perVec+(1+4)*2)*nvec; raw > want {
			t.Fatalf("%v: doc store %d raw bytes for %d vectors of %d floats, want ≤ %d (inline: %d)", m, raw, nvec, testDim, want, len(inline))
		}
		// Searches see the same vectors (IP: a row need not be its own
		// nearest).
		if h, err := sg.search(context.Background(), rows[0].doc.Vector, 1, 64, 1<<62, nil); m != IP && (err != nil || len(h) != 1 || h[0].Doc.ID != rows[0].doc.ID) {
			t.Fatalf("%v: nearest of row 0's vector: %v %v", m, h, err)
		}
		sg.free()
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

// TestVectorsByReferenceCorrupt: damaged vector references (wrong
// dimension, exception out of range, bad norm) in a version 3 doc store
// fail with ErrCorrupt.
func TestVectorsByReferenceCorrupt(t *testing.T) {
	var exc []refExc
	for name, b := range map[string][]byte{
		"dimension":       {byte(testDim + 1)},
		"norm NaN":        append([]byte{testDim}, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f, 0),
		"norm negative":   append([]byte{testDim}, 0, 0, 0, 0, 0, 0, 0xf0, 0xbf, 0),
		"too many":        append([]byte{testDim}, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, testDim+1),
		"component range": append([]byte{testDim}, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 1, testDim, 0, 0, 0, 0),
		"component order": append([]byte{testDim}, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 2, 3, 0, 0, 0, 0, 3, 0, 0, 0, 0),
		"truncated":       append([]byte{testDim}, 0, 0, 0),
	} {
		d := &decoder{b: b}
		d.vectorRef(testDim, Cosine, false, &exc)
		if d.err == nil || !errors.Is(d.err, errBatch) {
			t.Errorf("%s: %v", name, d.err)
		}
	}
	d := &decoder{b: append([]byte{testDim}, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 1, 3, 0, 0, 0x80, 0x3f)}
	ref, ok := d.vectorRef(testDim, Cosine, false, &exc)
	if d.err != nil || !ok || ref.norm != 1 || ref.to-ref.from != 1 || exc[ref.from] != (refExc{3, 0x3f800000}) {
		t.Fatalf("valid reference: %+v %v %v %v", ref, ok, d.err, exc)
	}
	// Format version 5: a norm code, then as many bytes as it says.
	for name, b := range map[string][]byte{
		"norm code":        {testDim, 3, 0},
		"norm32 truncated": {testDim, norm32, 0, 0},
		"norm32 NaN":       {testDim, norm32, 0, 0, 0xc0, 0x7f, 0},
		"norm64 truncated": {testDim, norm64, 0, 0, 0, 0},
		"no norm code":     {testDim},
	} {
		d := &decoder{b: b}
		d.vectorRef(testDim, Cosine, true, &exc)
		if d.err == nil || !errors.Is(d.err, errBatch) {
			t.Errorf("compact %s: %v", name, d.err)
		}
	}
	for _, c := range []struct {
		b    []byte
		norm float64
	}{
		{[]byte{testDim, normOne, 0}, 1},
		{[]byte{testDim, norm32, 0, 0, 0x40, 0x40, 0}, 3},
		{[]byte{testDim, norm64, 0, 0, 0, 0, 0, 0, 0x14, 0x40, 0}, 5},
	} {
		d := &decoder{b: c.b}
		ref, ok := d.vectorRef(testDim, Cosine, true, &exc)
		if d.err != nil || !ok || ref.norm != c.norm || ref.to != ref.from || len(d.b) != 0 {
			t.Errorf("compact %x: %+v %v %v", c.b, ref, ok, d.err)
		}
	}
}

// FuzzOpenSegmentCosine: openSegment on mutated version 3 cosine
// segments (CRCs repaired) returns a segment or ErrCorrupt, never a
// panic.
func FuzzOpenSegmentCosine(f *testing.F) {
	good, err := buildSegment(vecRefRows(9, 40), segBuildOptions{dim: testDim, metric: Cosine, m: 4, efConstruction: 8, threads: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	for _, at := range []int{100, 300, len(good) / 2} {
		bad := append([]byte(nil), good...)
		bad[at] ^= 0x5a
		f.Add(bad)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sg, err := openSegment(fixCRCs(data), "fuzz.sst", testDim, Cosine)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("non-corruption error %v", err)
			}
			return
		}
		sg.search(context.Background(), make([]float32, testDim), 3, 8, 1<<62, nil)
		sg.free()
	})
}

// FuzzVectorRef: the vector-reference decoder on arbitrary bytes either
// fails its decoder or returns a reference whose rebuild stays in range.
func FuzzVectorRef(f *testing.F) {
	f.Add([]byte{testDim, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 1, 3, 0, 0, 0x80, 0x3f})
	f.Add([]byte{0})
	f.Add([]byte{testDim, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range []Metric{Cosine, L2} {
			for _, compact := range []bool{false, true} {
				var exc []refExc
				d := &decoder{b: b}
				ref, ok := d.vectorRef(testDim, m, compact, &exc)
				if d.err != nil || !ok {
					continue
				}
				v := make([]float32, testDim)
				ref.rebuild(v, make([]float32, testDim), m, exc)
			}
		}
	})
}
