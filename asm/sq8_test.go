package asm

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

type ktU8Variant struct {
	name  string
	l2Sq  func(a, b []uint8) uint32
	dotU8 func(a, b []uint8) uint32
}

// ktSQ8Data returns a random query, codes, scale and offset of length n,
// each in its own backing array at element offset off.
func ktSQ8Data(r *rand.Rand, n, off int) (q []float32, code []uint8, scale, offset []float32) {
	q = ktRandF32(r, n, off)
	code = ktRandU8(r, n, (off+1)%4)
	scale = ktRandF32(r, n, (off+2)%4)
	offset = ktRandF32(r, n, (off+3)%4)
	for i := range scale {
		scale[i] /= 128
	}
	return
}

// refSQ8 returns float64 L2 and dot with tolerances (n+2)·6e-8·Σ|terms|,
// where the decoded value's magnitude bound |o|+|s·c| is used for x.
func refSQ8(q []float32, code []uint8, scale, offset []float32) (l2, l2tol, dot, dottol float64) {
	var ml2, mdot float64
	for j := range q {
		x := float64(offset[j]) + float64(scale[j])*float64(code[j])
		ax := math.Abs(float64(offset[j])) + math.Abs(float64(scale[j])*float64(code[j]))
		d := float64(q[j]) - x
		l2 += d * d
		dot += float64(q[j]) * x
		m := math.Abs(float64(q[j])) + ax
		ml2 += m * m
		mdot += math.Abs(float64(q[j])) * ax
	}
	n := float64(len(q) + 2)
	return l2, n * 6e-8 * ml2, dot, n * 6e-8 * mdot
}

func TestSQ8Float(t *testing.T) {
	ktLevels(t, func(l Level) {
		r := rand.New(rand.NewPCG(4, uint64(l)))
		for n := 0; n <= ktMaxLen(t); n++ {
			for off := 0; off < 4; off++ {
				q, c, s, o := ktSQ8Data(r, n, off)
				l2, l2tol, dot, dottol := refSQ8(q, c, s, o)
				if got := SQ8L2Sq(q, c, s, o); !ktClose(got, l2, l2tol) {
					t.Fatalf("level %v: SQ8L2Sq n=%d: got %v want %v (tol %g)", l, n, got, l2, l2tol)
				}
				if got := SQ8Dot(q, c, s, o); !ktClose(got, dot, dottol) {
					t.Fatalf("level %v: SQ8Dot n=%d: got %v want %v (tol %g)", l, n, got, dot, dottol)
				}
			}
		}
	})
}

// ktU8Check compares integer kernels with the reference exactly.
func ktU8Check(t testing.TB, name string, l2 func(a, b []uint8) uint32, dot func(a, b []uint8) uint32, a, b []uint8) {
	t.Helper()
	if got, want := l2(a, b), l2SqU8Ref(a, b[:len(a)]); got != want {
		t.Fatalf("%s: L2SqU8 n=%d: got %d want %d", name, len(a), got, want)
	}
	if got, want := dot(a, b), dotU8Ref(a, b[:len(a)]); got != want {
		t.Fatalf("%s: DotU8 n=%d: got %d want %d", name, len(a), got, want)
	}
}

func ktU8All(t testing.TB) []ktU8Variant {
	var vs []ktU8Variant
	ktLevels(t, func(l Level) {
		kt := k
		vs = append(vs, ktU8Variant{l.String(), kt.l2SqU8, kt.dotU8})
	})
	vs = append(vs, ktU8Variants()...)
	// Through the exported wrappers at the default level too.
	vs = append(vs, ktU8Variant{"exported", L2SqU8, DotU8})
	return vs
}

func TestSQ8Int(t *testing.T) {
	vs := ktU8All(t)
	r := rand.New(rand.NewPCG(5, 0))
	for n := 0; n <= ktMaxLen(t); n++ {
		for off := 0; off < 4; off++ {
			a := ktRandU8(r, n, off)
			b := ktRandU8(r, n+off, 3-off) // b may be longer than a
			ext := make([]uint8, n)        // extremes: 0 and 255 only
			for i := range ext {
				ext[i] = uint8(-(r.Uint32() & 1))
			}
			for _, v := range vs {
				ktU8Check(t, v.name, v.l2Sq, v.dotU8, a, b)
				ktU8Check(t, v.name, v.l2Sq, v.dotU8, a, ext)
				ktU8Check(t, v.name, v.l2Sq, v.dotU8, ext, ext)
			}
		}
	}
	// Sums beyond 2^32 wrap exactly like the reference.
	big := make([]uint8, 70001)
	zero := make([]uint8, len(big))
	for i := range big {
		big[i] = 255
	}
	for _, v := range vs {
		ktU8Check(t, v.name, v.l2Sq, v.dotU8, big, big)
		ktU8Check(t, v.name, v.l2Sq, v.dotU8, big, zero)
	}
}

func FuzzSQ8(f *testing.F) {
	f.Add([]byte{}, []byte{})
	f.Add([]byte{1, 2, 3}, []byte{255, 0, 128})
	f.Add(make([]byte, 77), []byte{255, 254, 1, 0, 0x80, 0x7f})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		n := min(len(a), len(b))
		a, b = a[:n], b[:n]
		for _, v := range ktU8All(t) {
			ktU8Check(t, v.name, v.l2Sq, v.dotU8, a, b)
		}
		// Float kernels: q from a, codes b, fixed scale/offset pattern.
		q := make([]float32, n)
		s := make([]float32, n)
		o := make([]float32, n)
		for i := range q {
			q[i] = float32(a[i]) / 7
			s[i] = float32(i%5+1) / 64
			o[i] = float32(int(a[i])-int(b[i])) / 16
		}
		l2, l2tol, dot, dottol := refSQ8(q, b, s, o)
		ktLevels(t, func(l Level) {
			if got := SQ8L2Sq(q, b, s, o); !ktClose(got, l2, l2tol) {
				t.Fatalf("level %v: SQ8L2Sq n=%d: got %v want %v", l, n, got, l2)
			}
			if got := SQ8Dot(q, b, s, o); !ktClose(got, dot, dottol) {
				t.Fatalf("level %v: SQ8Dot n=%d: got %v want %v", l, n, got, dot)
			}
		})
	})
}

func TestTrainEncodeSQ8(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 0))
	const n, d = 200, 13
	x := make([]float32, n*d)
	for i := range x {
		j := i % d
		x[i] = float32(r.NormFloat64())*float32(j+1) + float32(j)
	}
	for i := 0; i < n; i++ { // column 3 is constant
		x[i*d+3] = 2.5
	}
	scale, offset, err := TrainSQ8(x, d)
	if err != nil {
		t.Fatal(err)
	}
	if scale[3] != 0 || offset[3] != 2.5 {
		t.Fatalf("constant column: scale %v offset %v", scale[3], offset[3])
	}
	codes := make([]uint8, len(x))
	if err := EncodeSQ8(codes, x, scale, offset); err != nil {
		t.Fatal(err)
	}
	dec := make([]float32, len(x))
	if err := DecodeSQ8(dec, codes, scale, offset); err != nil {
		t.Fatal(err)
	}
	saw0, saw255 := false, false
	for i := range x {
		j := i % d
		// Round-to-nearest: error at most half a step (plus float slack).
		if e := math.Abs(float64(dec[i] - x[i])); e > float64(scale[j])*0.5001+1e-5 {
			t.Fatalf("x[%d]=%v decodes to %v (scale %v)", i, x[i], dec[i], scale[j])
		}
		saw0 = saw0 || codes[i] == 0
		saw255 = saw255 || codes[i] == 255
	}
	if !saw0 || !saw255 {
		t.Fatal("training range not used: codes 0 and 255 must both occur")
	}
	// Values outside the trained range clamp.
	if err := EncodeSQ8(codes[:d], append([]float32{-1e9, 1e9, float32(math.NaN())}, x[3:d]...), scale, offset); err != nil {
		t.Fatal(err)
	}
	if codes[0] != 0 || codes[1] != 255 || codes[2] != 0 {
		t.Fatalf("clamping: got %v", codes[:3])
	}
	// SQ8L2Sq against decoded vectors equals L2Sq on the decoded floats.
	q := x[:d]
	want, tol := refL2(q, dec[d:2*d])
	if got := SQ8L2Sq(q, codes[d:2*d], scale, offset); !ktClose(got, want, tol+1e-4) {
		t.Fatalf("SQ8L2Sq vs decoded: got %v want %v", got, want)
	}
	// Errors, not panics.
	if _, _, err := TrainSQ8(x, 0); err == nil {
		t.Fatal("TrainSQ8 d=0: no error")
	}
	if _, _, err := TrainSQ8(x[:d+1], d); err == nil {
		t.Fatal("TrainSQ8 ragged: no error")
	}
	if err := EncodeSQ8(codes[:2], x[:d], scale, offset); !errors.Is(err, errSQ8Shape) {
		t.Fatalf("EncodeSQ8 short dst: %v", err)
	}
	if err := DecodeSQ8(dec, codes[:d], scale, offset[:1]); !errors.Is(err, errSQ8Shape) {
		t.Fatalf("DecodeSQ8 bad offset: %v", err)
	}
}
