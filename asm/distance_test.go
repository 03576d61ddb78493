package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// ktLevels runs f once per dispatch level this CPU/build supports, forcing
// the level with SetLevel and restoring it afterwards.
func ktLevels(t testing.TB, f func(l Level)) {
	t.Helper()
	for _, l := range SupportedLevels() {
		restore, err := SetLevel(l)
		if err != nil {
			t.Fatal(err)
		}
		f(l)
		restore()
	}
}

func TestLevelsLogged(t *testing.T) {
	// Logged so qemu runs show which paths really executed.
	t.Logf("supported levels: %v, current: %v", SupportedLevels(), CurrentLevel())
	var extra []string
	for _, v := range ktU8Variants() {
		extra = append(extra, v.name)
	}
	t.Logf("extra integer SQ8 variants tested: %v", extra)
	extra = extra[:0]
	for _, v := range ktADCVariants() {
		extra = append(extra, v.name)
	}
	t.Logf("extra ADC variants tested: %v", extra)
	if got := SupportedLevels(); got[0] != Generic {
		t.Fatalf("SupportedLevels()[0] = %v, want generic", got[0])
	}
	if _, err := SetLevel(Level(99)); err == nil {
		t.Fatal("SetLevel(99) succeeded")
	}
}

// ktRandF32 returns n random float32 in [-1, 1) starting at element off of
// a fresh backing array, so callers get unaligned slices.
func ktRandF32(r *rand.Rand, n, off int) []float32 {
	buf := make([]float32, n+off)
	for i := range buf {
		buf[i] = float32(r.Float64()*2 - 1)
	}
	return buf[off : off+n : off+n]
}

func ktRandU8(r *rand.Rand, n, off int) []uint8 {
	buf := make([]uint8, n+off)
	for i := range buf {
		buf[i] = uint8(r.Uint32())
	}
	return buf[off : off+n : off+n]
}

// refL2 returns the float64 squared distance and the tolerance
// (n+2)·6e-8·Σ(a-b)².
func refL2(a, b []float32) (float64, float64) {
	var s float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		s += d * d
	}
	return s, float64(len(a)+2) * 6e-8 * s
}

// refDot returns the float64 dot product and tolerance (n+2)·6e-8·Σ|aᵢbᵢ|.
func refDot(a, b []float32) (float64, float64) {
	var s, m float64
	for i := range a {
		p := float64(a[i]) * float64(b[i])
		s += p
		m += math.Abs(p)
	}
	return s, float64(len(a)+2) * 6e-8 * m
}

func ktClose(got float32, want, tol float64) bool {
	return math.Abs(float64(got)-want) <= tol
}

// guard band helpers: the output slice is carved out of a larger backing
// array whose other elements hold a sentinel bit pattern.
const ktGuard = 5

var ktSentinel = math.Float32frombits(0x7fc0dead)

func ktGuarded(n int) (out, all []float32) {
	all = make([]float32, n+2*ktGuard)
	for i := range all {
		all[i] = ktSentinel
	}
	return all[ktGuard : ktGuard+n], all
}

func ktCheckGuard(t testing.TB, all []float32, n int, what string) {
	t.Helper()
	for i := range all {
		if i >= ktGuard && i < ktGuard+n {
			continue
		}
		if math.Float32bits(all[i]) != 0x7fc0dead {
			t.Fatalf("%s: guard element %d (out len %d) overwritten with %v", what, i-ktGuard, n, all[i])
		}
	}
}

func ktMaxLen(t testing.TB) int {
	if testing.Short() {
		return 200
	}
	return 300
}

func TestL2SqDot(t *testing.T) {
	ktLevels(t, func(l Level) {
		r := rand.New(rand.NewPCG(1, uint64(l)))
		for n := 0; n <= ktMaxLen(t); n++ {
			for off := 0; off < 4; off++ {
				a := ktRandF32(r, n, off)
				b := ktRandF32(r, n, (off+1)%4)
				if want, tol := refL2(a, b); !ktClose(L2Sq(a, b), want, tol) {
					t.Fatalf("level %v: L2Sq n=%d off=%d: got %v want %v (tol %g)", l, n, off, L2Sq(a, b), want, tol)
				}
				if want, tol := refDot(a, b); !ktClose(Dot(a, b), want, tol) {
					t.Fatalf("level %v: Dot n=%d off=%d: got %v want %v (tol %g)", l, n, off, Dot(a, b), want, tol)
				}
			}
		}
		// b longer than a: only len(a) is read.
		a := ktRandF32(r, 37, 1)
		b := ktRandF32(r, 50, 2)
		if want, tol := refDot(a, b[:37]); !ktClose(Dot(a, b), want, tol) {
			t.Fatalf("level %v: Dot with long b", l)
		}
	})
}

// TestL2SqDotLong covers lengths past TestL2SqDot's 300: several 128-float
// blocks (the block loop of the single-pair kernels), each remainder class
// (64-float block, 16- / 8-float steps, masked tail), unaligned slices,
// through both Dot / L2Sq and the dispatch-table kernels.
func TestL2SqDotLong(t *testing.T) {
	lens := []int{383, 384, 385, 447, 448, 449, 511, 512, 513, 640, 703, 768, 1000, 1536 + 77}
	ktLevels(t, func(l Level) {
		r := rand.New(rand.NewPCG(2, uint64(l)))
		for _, n := range lens {
			for off := 0; off < 3; off++ {
				a := ktRandF32(r, n, off)
				b := ktRandF32(r, n+5, (off+1)%4) // longer b: only len(a) is read
				want, tol := refL2(a, b[:n])
				if got := L2Sq(a, b); !ktClose(got, want, tol) {
					t.Fatalf("level %v: L2Sq n=%d off=%d: got %v want %v (tol %g)", l, n, off, got, want, tol)
				}
				if got := k.l2Sq(a, b); !ktClose(got, want, tol) {
					t.Fatalf("level %v: table l2Sq n=%d off=%d: got %v want %v (tol %g)", l, n, off, got, want, tol)
				}
				want, tol = refDot(a, b[:n])
				if got := Dot(a, b); !ktClose(got, want, tol) {
					t.Fatalf("level %v: Dot n=%d off=%d: got %v want %v (tol %g)", l, n, off, got, want, tol)
				}
				if got := k.dot(a, b); !ktClose(got, want, tol) {
					t.Fatalf("level %v: table dot n=%d off=%d: got %v want %v (tol %g)", l, n, off, got, want, tol)
				}
			}
		}
	})
}

// TestDirectDispatch: Dot and L2Sq call their kernel without the
// dispatch table (dotDirect / l2SqDirect), so check that they run exactly
// the kernel of the current level: bit-for-bit equal to the table entry
// at every level, in both directions of every level switch (a stale
// direct level after SetLevel would differ in rounding).
func TestDirectDispatch(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	levels := SupportedLevels()
	for _, n := range []int{1, 7, 100, 128, 131} {
		a := ktRandF32(r, n, 0)
		b := ktRandF32(r, n, 1)
		check := func(l Level) {
			if got, want := Dot(a, b), k.dot(a, b); math.Float32bits(got) != math.Float32bits(want) {
				t.Errorf("level %v n=%d: Dot = %v, table kernel = %v", l, n, got, want)
			}
			if got, want := L2Sq(a, b), k.l2Sq(a, b); math.Float32bits(got) != math.Float32bits(want) {
				t.Errorf("level %v n=%d: L2Sq = %v, table kernel = %v", l, n, got, want)
			}
		}
		for _, first := range levels {
			for _, second := range levels {
				r1, err := SetLevel(first)
				if err != nil {
					t.Fatal(err)
				}
				check(first)
				r2, err := SetLevel(second)
				if err != nil {
					t.Fatal(err)
				}
				check(second)
				r2()
				check(first)
				r1()
			}
		}
	}
}

func TestBatch(t *testing.T) {
	rowsSet := []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 13}
	ktLevels(t, func(l Level) {
		r := rand.New(rand.NewPCG(2, uint64(l)))
		step := 1
		if testing.Short() {
			step = 3
		}
		for d := 0; d <= ktMaxLen(t); d += step {
			for _, n := range rowsSet {
				off := (d + n) % 4
				q := ktRandF32(r, d, off)
				x := ktRandF32(r, n*d+3, (off+2)%4) // 3 spare floats: must be ignored
				out, all := ktGuarded(n)
				L2SqBatch(q, x, out)
				ktCheckGuard(t, all, n, fmt.Sprintf("level %v L2SqBatch d=%d n=%d", l, d, n))
				for i := 0; i < n; i++ {
					if want, tol := refL2(q, x[i*d:i*d+d]); !ktClose(out[i], want, tol) {
						t.Fatalf("level %v: L2SqBatch d=%d n=%d row %d: got %v want %v", l, d, n, i, out[i], want)
					}
				}
				out, all = ktGuarded(n)
				DotBatch(q, x, out)
				ktCheckGuard(t, all, n, fmt.Sprintf("level %v DotBatch d=%d n=%d", l, d, n))
				for i := 0; i < n; i++ {
					if want, tol := refDot(q, x[i*d:i*d+d]); !ktClose(out[i], want, tol) {
						t.Fatalf("level %v: DotBatch d=%d n=%d row %d: got %v want %v", l, d, n, i, out[i], want)
					}
				}
			}
		}
	})
}

func TestSumFloat32(t *testing.T) {
	ktLevels(t, func(l Level) {
		r := rand.New(rand.NewPCG(3, uint64(l)))
		for _, n := range append(ktRange(0, 300), 1000, 4099, 65536+13) {
			for off := 0; off < 4; off++ {
				x := ktRandF32(r, n, off)
				var s, m float64
				for _, v := range x {
					s += float64(v)
					m += math.Abs(float64(v))
				}
				tol := float64(n+2) * 6e-8 * m
				if got := SumFloat32(x); !ktClose(got, s, tol) {
					t.Fatalf("level %v: SumFloat32 n=%d: got %v want %v", l, n, got, s)
				}
			}
		}
	})
}

func ktRange(lo, hi int) []int {
	var s []int
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}

// ktFloatsFromBytes maps fuzz bytes to float32 values in a bounded range
// (no NaN/Inf), two bytes per value.
func ktFloatsFromBytes(b []byte) []float32 {
	f := make([]float32, len(b)/2)
	for i := range f {
		v := int16(uint16(b[2*i]) | uint16(b[2*i+1])<<8)
		f[i] = float32(v) / 1024
	}
	return f
}

func FuzzL2SqDot(f *testing.F) {
	f.Add([]byte{}, uint8(0))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, uint8(1))
	f.Add(make([]byte, 130), uint8(3))
	seed := make([]byte, 600)
	for i := range seed {
		seed[i] = byte(i * 7)
	}
	f.Add(seed, uint8(2))
	long := make([]byte, 2*2200) // 2200 floats, one row: d = 1100, several 128-float blocks
	for i := range long {
		long[i] = byte(i*13 + i>>5)
	}
	f.Add(long, uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, rows uint8) {
		v := ktFloatsFromBytes(data)
		n := int(rows%8) + 1
		d := len(v) / (n + 1)
		q, x := v[:d], v[d:d+n*d]
		ktLevels(t, func(l Level) {
			if want, tol := refL2(q, x[:d]); !ktClose(L2Sq(q, x[:d]), want, tol) {
				t.Fatalf("level %v: L2Sq d=%d: got %v want %v", l, d, L2Sq(q, x[:d]), want)
			}
			if want, tol := refDot(q, x[:d]); !ktClose(Dot(q, x[:d]), want, tol) {
				t.Fatalf("level %v: Dot d=%d: got %v want %v", l, d, Dot(q, x[:d]), want)
			}
			out, all := ktGuarded(n)
			L2SqBatch(q, x, out)
			ktCheckGuard(t, all, n, "L2SqBatch")
			for i := range out {
				if want, tol := refL2(q, x[i*d:i*d+d]); !ktClose(out[i], want, tol) {
					t.Fatalf("level %v: L2SqBatch d=%d row %d: got %v want %v", l, d, i, out[i], want)
				}
			}
			DotBatch(q, x, out)
			ktCheckGuard(t, all, n, "DotBatch")
			for i := range out {
				if want, tol := refDot(q, x[i*d:i*d+d]); !ktClose(out[i], want, tol) {
					t.Fatalf("level %v: DotBatch d=%d row %d: got %v want %v", l, d, i, out[i], want)
				}
			}
			if d > 0 {
				all := make([]float32, n*n+2*ktGuard)
				for i := range all {
					all[i] = ktSentinel
				}
				many := all[ktGuard : ktGuard+n*n]
				L2SqMany(x, x, d, many)
				ktCheckGuard(t, all, n*n, "L2SqMany")
				for i := 0; i < n*n; i++ {
					xi, xj := x[(i/n)*d:(i/n+1)*d], x[(i%n)*d:(i%n+1)*d]
					if want, tol := refL2(xi, xj); !ktClose(many[i], want, tol) {
						t.Fatalf("level %v: L2SqMany d=%d n=%d (%d): got %v want %v", l, d, n, i, many[i], want)
					}
				}
				DotMany(x, x, d, many)
				for i := 0; i < n*n; i++ {
					xi, xj := x[(i/n)*d:(i/n+1)*d], x[(i%n)*d:(i%n+1)*d]
					if want, tol := refDot(xi, xj); !ktClose(many[i], want, tol) {
						t.Fatalf("level %v: DotMany d=%d n=%d (%d): got %v want %v", l, d, n, i, many[i], want)
					}
				}
			}
			var s, m float64
			for _, e := range v {
				s += float64(e)
				m += math.Abs(float64(e))
			}
			if got := SumFloat32(v); !ktClose(got, s, float64(len(v)+2)*6e-8*m) {
				t.Fatalf("level %v: SumFloat32 n=%d: got %v want %v", l, len(v), got, s)
			}
		})
	})
}

func TestMany(t *testing.T) {
	ktLevels(t, func(l Level) {
		r := rand.New(rand.NewPCG(9, uint64(l)))
		for _, s := range [][3]int{{1, 1, 1}, {3, 5, 7}, {9, 4, 16}, {2, 600, 100}, {5, 17, 300}, {6, 400, 300}, {7, 203, 257}, {8, 8, 1}, {4, 4, 33},
			{7, 44, 100}, {5, 12, 4}, {3, 8, 8}, {11, 9, 784}} { // d % 4 == 0 with 3+ rows: the AVX2 tiles
			n, m, d := s[0], s[1], s[2]
			x := ktRandF32(r, n*d+min(1, d-1), 1) // a trailing partial row is ignored
			c := ktRandF32(r, m*d, 2)
			out, all := ktGuarded(n * m)
			L2SqMany(x, c, d, out)
			ktCheckGuard(t, all, n*m, "L2SqMany")
			for i := 0; i < n; i++ {
				for j := 0; j < m; j++ {
					if want, tol := refL2(x[i*d:i*d+d], c[j*d:j*d+d]); !ktClose(out[i*m+j], want, tol) {
						t.Fatalf("level %v: L2SqMany n=%d m=%d d=%d (%d,%d): got %v want %v", l, n, m, d, i, j, out[i*m+j], want)
					}
				}
			}
			DotMany(x, c, d, out)
			ktCheckGuard(t, all, n*m, "DotMany")
			for i := 0; i < n; i++ {
				for j := 0; j < m; j++ {
					if want, tol := refDot(x[i*d:i*d+d], c[j*d:j*d+d]); !ktClose(out[i*m+j], want, tol) {
						t.Fatalf("level %v: DotMany (%d,%d): got %v want %v", l, i, j, out[i*m+j], want)
					}
				}
			}
		}
	})
}
