package asm

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// fs4Elem reads the code of vector v, sub-quantizer sq (sq < mpad) straight
// from the layout description (FAISS pq4_get_packed_element, re-derived):
// block v/32 of mpad·16 bytes; within it, group sq/2 (32 bytes), half sq%2
// (16 bytes); vector w = v%32 sits at byte 2w (w&15 < 8) or 2(w&15-8)+1,
// in the high nibble iff w ≥ 16.
func fs4Elem(packed []uint8, mpad, v, sq int) uint8 {
	w := v % 32
	pos := 2 * (w & 15)
	if w&15 >= 8 {
		pos = 2*(w&15-8) + 1
	}
	b := packed[v/32*mpad*16+sq/2*32+sq%2*16+pos]
	if w >= 16 {
		return b >> 4
	}
	return b & 15
}

// fs4Oracle is the obviously-correct fast-scan: for every vector, the uint16
// (wrapping) sum of one LUT entry per padded sub-quantizer.
func fs4Oracle(packed []uint8, nblocks, m int, lut []uint8) []uint16 {
	mpad := (m + 1) &^ 1
	out := make([]uint16, nblocks*32)
	for v := range out {
		var s uint16
		for j := 0; j < mpad; j++ {
			s += uint16(lut[j*16+int(fs4Elem(packed, mpad, v, j))])
		}
		out[v] = s
	}
	return out
}

func TestFastScan4PackGolden(t *testing.T) {
	// Expected bytes written out from the layout rule (byte j of the half for
	// sub-quantizer s = code(perm0[j], s) | code(perm0[j]+16, s)<<4), not
	// from PackCodes4. E.g. case 1, byte 0: code(0,0)=0, code(16,0)=5 → 0x50;
	// byte 1: code(8,0)=8, code(24,0)=13 → 0xd8; byte 16: code(0,1)=3,
	// code(16,1)=8 → 0x83.
	cases := []struct {
		n, m int
		code func(i, j int) uint8
		want []uint8
	}{
		{32, 2, func(i, j int) uint8 { return uint8(i+3*j+(i>>4)*5) & 15 }, []uint8{
			0x50, 0xd8, 0x61, 0xe9, 0x72, 0xfa, 0x83, 0x0b, 0x94, 0x1c, 0xa5, 0x2d, 0xb6, 0x3e, 0xc7, 0x4f,
			0x83, 0x0b, 0x94, 0x1c, 0xa5, 0x2d, 0xb6, 0x3e, 0xc7, 0x4f, 0xd8, 0x50, 0xe9, 0x61, 0xfa, 0x72,
		}},
		// n=40 pads to 2 blocks (vectors 40..63 are code 0); m=3 pads to 4
		// (sub-quantizer 3 is code 0).
		{40, 3, func(i, j int) uint8 { return uint8(7*i+5*j+1) & 15 }, []uint8{
			0x11, 0x99, 0x88, 0x00, 0xff, 0x77, 0x66, 0xee, 0xdd, 0x55, 0x44, 0xcc, 0xbb, 0x33, 0x22, 0xaa,
			0x66, 0xee, 0xdd, 0x55, 0x44, 0xcc, 0xbb, 0x33, 0x22, 0xaa, 0x99, 0x11, 0x00, 0x88, 0x77, 0xff,
			0xbb, 0x33, 0x22, 0xaa, 0x99, 0x11, 0x00, 0x88, 0x77, 0xff, 0xee, 0x66, 0x55, 0xdd, 0xcc, 0x44,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0x01, 0x00, 0x08, 0x00, 0x0f, 0x00, 0x06, 0x00, 0x0d, 0x00, 0x04, 0x00, 0x0b, 0x00, 0x02, 0x00,
			0x06, 0x00, 0x0d, 0x00, 0x04, 0x00, 0x0b, 0x00, 0x02, 0x00, 0x09, 0x00, 0x00, 0x00, 0x07, 0x00,
			0x0b, 0x00, 0x02, 0x00, 0x09, 0x00, 0x00, 0x00, 0x07, 0x00, 0x0e, 0x00, 0x05, 0x00, 0x0c, 0x00,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		}},
	}
	for _, c := range cases {
		codes := make([]uint8, c.n*c.m)
		for i := 0; i < c.n; i++ {
			for j := 0; j < c.m; j++ {
				codes[i*c.m+j] = c.code(i, j)
			}
		}
		got := PackCodes4(codes, c.n, c.m)
		if !bytes.Equal(got, c.want) {
			t.Errorf("n=%d m=%d:\n got %x\nwant %x", c.n, c.m, got, c.want)
		}
		if back := UnpackCodes4(got, c.n, c.m); !bytes.Equal(back, codes) {
			t.Errorf("n=%d m=%d: unpack mismatch", c.n, c.m)
		}
	}
}

func TestFastScan4PackRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, m := range []int{0, 1, 2, 3, 4, 7, 8, 16, 17, 32, 64, 65} {
		for _, n := range []int{0, 1, 31, 32, 33, 64, 100} {
			codes := make([]uint8, n*m)
			for i := range codes {
				codes[i] = uint8(r.IntN(16))
			}
			p := PackCodes4(codes, n, m)
			mpad := (m + 1) &^ 1
			if want := FastScan4Blocks(n) * mpad * 16; len(p) != want {
				t.Fatalf("n=%d m=%d: len %d, want %d", n, m, len(p), want)
			}
			for v := 0; v < FastScan4Blocks(n)*32; v++ {
				for j := 0; j < mpad; j++ {
					want := uint8(0)
					if v < n && j < m {
						want = codes[v*m+j]
					}
					if got := fs4Elem(p, mpad, v, j); got != want {
						t.Fatalf("n=%d m=%d v=%d j=%d: %d, want %d", n, m, v, j, got, want)
					}
				}
			}
			if back := UnpackCodes4(p, n, m); !bytes.Equal(back, codes) {
				t.Fatalf("n=%d m=%d: unpack mismatch", n, m)
			}
		}
	}
}

func TestQuantizeLUT4(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, m := range []int{1, 2, 3, 8, 16, 17, 64, 65, 300, 600} {
		for trial := 0; trial < 5; trial++ {
			lut := make([]float32, m*16)
			for i := range lut {
				switch trial {
				case 0: // equal spans: with m > 257 the Σ-span bound binds
					lut[i] = float32(i % 16)
				case 1: // one dominant table
					lut[i] = float32(r.NormFloat64())
					if i < 16 {
						lut[i] *= 1000
					}
				default:
					lut[i] = float32(r.NormFloat64()*10 + 5)
				}
			}
			q, scale, bias := QuantizeLUT4(lut, m)
			mpad := (m + 1) &^ 1
			if len(q) != mpad*16 {
				t.Fatalf("m=%d: len(q)=%d", m, len(q))
			}
			var mins []float64
			var maxSpan, sumSpan float64
			worst := 0
			for j := 0; j < m; j++ {
				lo, hi := math.Inf(1), math.Inf(-1)
				qlo, qhi := 255, 0
				for c := 0; c < 16; c++ {
					lo = math.Min(lo, float64(lut[j*16+c]))
					hi = math.Max(hi, float64(lut[j*16+c]))
					qlo = min(qlo, int(q[j*16+c]))
					qhi = max(qhi, int(q[j*16+c]))
				}
				mins = append(mins, lo)
				maxSpan = math.Max(maxSpan, hi-lo)
				sumSpan += hi - lo
				if qlo != 0 {
					t.Fatalf("m=%d table %d: min code %d, want 0", m, j, qlo)
				}
				worst += qhi
			}
			for _, v := range q[m*16:] {
				if v != 0 {
					t.Fatalf("m=%d: padding table not zero", m)
				}
			}
			if worst > 65535 {
				t.Fatalf("m=%d: worst-case sum %d overflows uint16", m, worst)
			}
			a := math.Min(255/maxSpan, 65535/sumSpan)
			if float64(scale) > a*(1+1e-6) || float64(scale) < a*(1-(float64(m)/2+2)/65535) {
				t.Fatalf("m=%d trial %d: scale %g, formula %g", m, trial, scale, a)
			}
			// Error bound: |bias + Σq/scale − Σlut| ≤ m·0.5/scale (+ float noise).
			for s := 0; s < 50; s++ {
				var exact float64
				var acc uint16
				for j := 0; j < m; j++ {
					c := r.IntN(16)
					exact += float64(lut[j*16+c])
					acc += uint16(q[j*16+c])
				}
				var got [1]float32
				FastScan4Distances(got[:], []uint16{acc}, scale, bias)
				bound := float64(m)*0.5/float64(scale) + 1e-5*(math.Abs(exact)+float64(m)*(maxSpan+math.Abs(mins[0])))
				if d := math.Abs(float64(got[0]) - exact); d > bound {
					t.Fatalf("m=%d trial %d: error %g > bound %g", m, trial, d, bound)
				}
			}
		}
	}
	// All spans zero: scale 1, q zero, bias Σ minima.
	lut := make([]float32, 3*16)
	for i := range lut {
		lut[i] = float32(i / 16)
	}
	q, scale, bias := QuantizeLUT4(lut, 3)
	if scale != 1 || bias != 3 || !bytes.Equal(q, make([]uint8, 64)) {
		t.Fatalf("flat LUT: scale %g bias %g q %v", scale, bias, q)
	}
}

func TestFastScan4Distances(t *testing.T) {
	acc := []uint16{0, 1, 100, 65535}
	out := make([]float32, 5)
	out[4] = -7
	FastScan4Distances(out, acc, 4, 1.5)
	want := []float32{1.5, 1.75, 26.5, 1.5 + 65535.0/4, -7}
	for i := range want {
		if out[i] != want[i] {
			t.Fatalf("out[%d]=%g, want %g", i, out[i], want[i])
		}
	}
}

const fs4Guard = 16

// fs4Check runs FastScan4 on packed/luts with guarded outputs at the current
// level and compares every query with the oracle.
func fs4Check(t testing.TB, packed []uint8, nblocks, m int, luts [][]uint8, tag string) {
	t.Helper()
	bufs := make([][]uint16, len(luts))
	outs := make([][]uint16, len(luts))
	for i := range luts {
		bufs[i] = make([]uint16, nblocks*32+2*fs4Guard+i) // +i: vary alignment
		for j := range bufs[i] {
			bufs[i][j] = 0xdead
		}
		outs[i] = bufs[i][fs4Guard+i : fs4Guard+i+nblocks*32]
	}
	FastScan4(packed, nblocks, m, luts, outs)
	for i := range luts {
		want := fs4Oracle(packed, nblocks, m, luts[i])
		for j, g := range bufs[i] {
			if j < fs4Guard+i || j >= fs4Guard+i+nblocks*32 {
				if g != 0xdead {
					t.Fatalf("%s q%d: guard %d overwritten (%#x)", tag, i, j, g)
				}
			}
		}
		for v := range want {
			if outs[i][v] != want[v] {
				t.Fatalf("%s q%d: out[%d]=%d, want %d", tag, i, v, outs[i][v], want[v])
			}
		}
	}
}

// fs4Input makes nblocks random packed blocks (every byte pattern is a valid
// packing) and nq random uint8 LUTs, at odd offsets inside larger buffers.
func fs4Input(r *rand.Rand, nblocks, m, nq int, maxLUT int) ([]uint8, [][]uint8) {
	mpad := (m + 1) &^ 1
	off := r.IntN(7)
	buf := make([]uint8, off+nblocks*mpad*16+off)
	for i := range buf {
		buf[i] = uint8(r.Uint32())
	}
	packed := buf[off : off+nblocks*mpad*16]
	luts := make([][]uint8, nq)
	for i := range luts {
		lo := r.IntN(5)
		l := make([]uint8, lo+mpad*16+3)
		for j := range l {
			l[j] = uint8(r.IntN(maxLUT + 1))
		}
		luts[i] = l[lo : lo+mpad*16]
	}
	return packed, luts
}

// fs4Each runs f once per supported level and kernel variant: at each SIMD
// level with the GFNI variants enabled (where the CPU has GFNI) and
// disabled, and at the AVX-512 level also with the transposed VBMI/VNNI
// kernels (where the CPU has them). tag names the path.
func fs4Each(t testing.TB, f func(tag string)) {
	t.Helper()
	type variant struct{ gfni, vbmi bool }
	for _, l := range SupportedLevels() {
		restore, err := SetLevel(l)
		if err != nil {
			t.Fatal(err)
		}
		vs := []variant{{}}
		if fs4HasGFNI && l != Generic {
			vs = append(vs, variant{gfni: true})
		}
		if fs4HasVBMI && l == AVX512 {
			vs = append(vs, variant{gfni: fs4HasGFNI, vbmi: true})
		}
		for _, v := range vs {
			prevG, prevV := fs4UseGFNI, fs4UseVBMI
			fs4UseGFNI, fs4UseVBMI = v.gfni, v.vbmi
			tag := "level=" + l.String()
			if v.vbmi {
				tag += "+vbmi"
			} else if v.gfni {
				tag += "+gfni"
			}
			f(tag)
			fs4UseGFNI, fs4UseVBMI = prevG, prevV
		}
		restore()
	}
}

func TestFastScan4Levels(t *testing.T) {
	ms := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 32, 64, 65}
	maxBlocks := 5
	if testing.Short() {
		maxBlocks = 3
	}
	t.Logf("fast-scan levels: %v (current %v, GFNI %v, VBMI+VNNI %v)", SupportedLevels(), CurrentLevel(), fs4HasGFNI, fs4HasVBMI)
	fs4Each(t, func(tag string) {
		r := rand.New(rand.NewPCG(5, 5))
		for _, m := range ms {
			for nb := 0; nb <= maxBlocks; nb++ {
				for nq := 1; nq <= 4; nq++ {
					packed, luts := fs4Input(r, nb, m, nq, 255)
					fs4Check(t, packed, nb, m, luts, fmt.Sprintf("%s m=%d nblocks=%d nq=%d", tag, m, nb, nq))
				}
			}
		}
	})
}

// TestFastScan4Wrap uses adversarial LUTs (all 255, or random bytes with a
// huge m) so that the uint16 sums wrap: every level must wrap exactly like
// the reference.
func TestFastScan4Wrap(t *testing.T) {
	fs4Each(t, func(tag string) {
		r := rand.New(rand.NewPCG(6, 6))
		for _, m := range []int{258, 300, 513, 1030} {
			for nq := 1; nq <= 4; nq++ {
				packed, luts := fs4Input(r, 2, m, nq, 255)
				for j := range luts[0] {
					luts[0][j] = 255
				}
				fs4Check(t, packed, 2, m, luts, fmt.Sprintf("wrap %s m=%d nq=%d", tag, m, nq))
			}
		}
	})
}

// TestFastScan4EndToEnd: pack real codes, quantise a float LUT, scan, map
// back; the result must be within the quantisation bound of the exact ADC
// sum, at every level.
func TestFastScan4EndToEnd(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	n, m := 1000, 17
	codes := make([]uint8, n*m)
	for i := range codes {
		codes[i] = uint8(r.IntN(16))
	}
	packed := PackCodes4(codes, n, m)
	nb := FastScan4Blocks(n)
	lut := make([]float32, m*16)
	for i := range lut {
		lut[i] = float32(r.ExpFloat64())
	}
	q, scale, bias := QuantizeLUT4(lut, m)
	fs4Each(t, func(tag string) {
		acc := make([]uint16, nb*32)
		FastScan4(packed, nb, m, [][]uint8{q}, [][]uint16{acc})
		d := make([]float32, n)
		FastScan4Distances(d, acc[:n], scale, bias)
		for i := 0; i < n; i++ {
			var exact float64
			for j := 0; j < m; j++ {
				exact += float64(lut[j*16+int(codes[i*m+j])])
			}
			if e := math.Abs(float64(d[i]) - exact); e > float64(m)*0.5/float64(scale)+1e-4 {
				t.Fatalf("%s vector %d: %g vs exact %g", tag, i, d[i], exact)
			}
		}
	})
}

func TestFastScan4Shapes(t *testing.T) {
	// m = 0 zeroes the outputs; nblocks = 0 or no queries are no-ops.
	out := []uint16{9, 9, 9, 9}
	o32 := make([]uint16, 32)
	for i := range o32 {
		o32[i] = 7
	}
	FastScan4(nil, 1, 0, [][]uint8{nil}, [][]uint16{o32})
	for _, v := range o32 {
		if v != 0 {
			t.Fatal("m=0: output not zeroed")
		}
	}
	FastScan4(nil, 0, 4, [][]uint8{nil}, [][]uint16{out})
	FastScan4(nil, 3, 4, nil, nil)
	if out[0] != 9 {
		t.Fatal("nblocks=0 wrote output")
	}
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		f()
	}
	l := make([]uint8, 64)
	p := make([]uint8, 64)
	mustPanic("5 queries", func() {
		FastScan4(p, 1, 4, [][]uint8{l, l, l, l, l}, [][]uint16{o32, o32, o32, o32, o32})
	})
	mustPanic("short packed", func() { FastScan4(p, 2, 4, [][]uint8{l}, [][]uint16{make([]uint16, 64)}) })
	mustPanic("short lut", func() { FastScan4(p, 1, 4, [][]uint8{l[:63]}, [][]uint16{o32}) })
	mustPanic("short out", func() { FastScan4(p, 1, 4, [][]uint8{l}, [][]uint16{o32[:31]}) })
	mustPanic("out/luts mismatch", func() { FastScan4(p, 1, 4, [][]uint8{l}, nil) })
}

func FuzzFastScan4(f *testing.F) {
	f.Add([]byte("fast-scan seed"), uint8(3), uint8(1), uint8(2))
	f.Add(bytes.Repeat([]byte{0xff}, 700), uint8(64), uint8(2), uint8(4))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(17), uint8(3), uint8(1))
	f.Add([]byte{}, uint8(1), uint8(0), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, m8, nb8, nq8 uint8) {
		m := int(m8)%80 + 1
		nb := int(nb8) % 6
		nq := int(nq8)%4 + 1
		mpad := (m + 1) &^ 1
		// Expand data deterministically into codes and LUTs.
		src := rand.New(rand.NewPCG(uint64(len(data)), 9))
		byteAt := func(i int) uint8 {
			if i < len(data) {
				return data[i]
			}
			return uint8(src.Uint32())
		}
		packed := make([]uint8, nb*mpad*16)
		for i := range packed {
			packed[i] = byteAt(i)
		}
		luts := make([][]uint8, nq)
		for q := range luts {
			luts[q] = make([]uint8, mpad*16)
			for j := range luts[q] {
				luts[q][j] = byteAt(len(packed) + q*mpad*16 + j)
			}
		}
		fs4Each(t, func(tag string) {
			fs4Check(t, packed, nb, m, luts, fmt.Sprintf("fuzz %s m=%d nb=%d nq=%d", tag, m, nb, nq))
		})
	})
}
