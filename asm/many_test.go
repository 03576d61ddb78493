package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refNearestVal returns cnorm[c] − 2⟨x, c⟩ in float64 and its tolerance
// (d+2)·6e-8·(|cnorm[c]| + 2Σ|x_t c_t|), centroid c read from cT (d×k).
func refNearestVal(x, cT, cnorm []float32, c int) (float64, float64) {
	kc := len(cnorm)
	s, m := float64(cnorm[c]), math.Abs(float64(cnorm[c]))
	for t, xv := range x {
		p := 2 * float64(xv) * float64(cT[t*kc+c])
		s -= p
		m += math.Abs(p)
	}
	return s, float64(len(x)+2) * 6e-8 * m
}

// ktManyShapes are the centroid counts: below, at and past the 16- and
// 64-centroid chunks, and the PQ sizes 16 and 256.
var ktManyShapes = []int{1, 2, 15, 16, 17, 31, 48, 63, 64, 65, 80, 127, 129, 256, 257}

// TestNearestL2T checks NearestL2T at every level against a float64
// reference: the chosen centroid's value is within rounding of the true
// minimum, val[i] is that value, rows are read with stride ldx, and
// nothing past assign/val is written.
func TestNearestL2T(t *testing.T) {
	ds := []int{1, 2, 3, 4, 7, 8, 12, 14, 16, 17, 24, 32, 40}
	if testing.Short() {
		ds = []int{1, 2, 4, 7, 14, 16, 32}
	}
	ktLevels(t, func(l Level) {
		r := rand.New(rand.NewPCG(21, uint64(l)))
		for _, d := range ds {
			for _, kc := range ktManyShapes {
				n := 1 + r.IntN(9)
				ldx := d + r.IntN(3)
				x := ktRandF32(r, n*ldx, r.IntN(4))
				cent := ktRandF32(r, kc*d, 0)
				cT := make([]float32, kc*d)
				Transpose(cent, kc, d, cT)
				cnorm := make([]float32, kc)
				for c := range cnorm {
					if r.IntN(2) == 0 { // half the cases inner product (zero norms)
						v, _ := refDot(cent[c*d:(c+1)*d], cent[c*d:(c+1)*d])
						cnorm[c] = float32(v)
					}
				}
				assign := make([]int32, n+2)
				for i := range assign {
					assign[i] = -7
				}
				val, all := ktGuarded(n)
				NearestL2T(x, d, ldx, cT, cnorm, assign[:n], val)
				ktCheckGuard(t, all, n, "NearestL2T val")
				what := fmt.Sprintf("level %v d=%d k=%d n=%d ldx=%d", l, d, kc, n, ldx)
				if assign[n] != -7 || assign[n+1] != -7 {
					t.Fatalf("%s: wrote past assign", what)
				}
				for i := 0; i < n; i++ {
					xi := x[i*ldx : i*ldx+d]
					a := int(assign[i])
					if a < 0 || a >= kc {
						t.Fatalf("%s: assign[%d] = %d out of range", what, i, a)
					}
					got, tol := refNearestVal(xi, cT, cnorm, a)
					best := math.Inf(1)
					for c := 0; c < kc; c++ {
						v, tc := refNearestVal(xi, cT, cnorm, c)
						best = min(best, v)
						tol = max(tol, tc)
					}
					if got > best+2*tol {
						t.Fatalf("%s: row %d chose %d (%v), true minimum %v (tol %g)", what, i, a, got, best, tol)
					}
					if !ktClose(val[i], got, 2*tol) {
						t.Fatalf("%s: val[%d] = %v, want %v (tol %g)", what, i, val[i], got, tol)
					}
				}
				// val == nil is allowed and gives the same assignment.
				a2 := make([]int32, n)
				NearestL2T(x, d, ldx, cT, cnorm, a2, nil)
				for i := range a2 {
					if a2[i] != assign[i] {
						t.Fatalf("%s: assign with val=nil differs at %d: %d vs %d", what, i, a2[i], assign[i])
					}
				}
			}
		}
	})
}

// TestNearestL2TTies: duplicated centroids resolve to the lowest index,
// in every chunk position (main 64-blocks, 16-blocks, masked tail).
func TestNearestL2TTies(t *testing.T) {
	ktLevels(t, func(l Level) {
		r := rand.New(rand.NewPCG(22, uint64(l)))
		for _, kc := range []int{2, 17, 70, 100, 256} {
			d := 6
			cent := ktRandF32(r, kc*d, 0)
			for trial := 0; trial < 10; trial++ {
				c1 := r.IntN(kc - 1)
				c2 := c1 + 1 + r.IntN(kc-c1-1)
				cc := append([]float32(nil), cent...)
				copy(cc[c2*d:(c2+1)*d], cc[c1*d:(c1+1)*d])
				cT := make([]float32, kc*d)
				Transpose(cc, kc, d, cT)
				cnorm := make([]float32, kc)
				for c := range cnorm {
					v, _ := refDot(cc[c*d:(c+1)*d], cc[c*d:(c+1)*d])
					cnorm[c] = float32(v)
				}
				x := append([]float32(nil), cc[c1*d:(c1+1)*d]...)
				a := make([]int32, 1)
				NearestL2T(x, d, d, cT, cnorm, a, nil)
				if int(a[0]) != c1 {
					t.Fatalf("level %v k=%d: tie between %d and %d resolved to %d", l, kc, c1, c2, a[0])
				}
			}
		}
	})
}

// TestDotT checks DotT at every level against float64, with and without
// base, several alphas, every k shape and a guard band around out.
func TestDotT(t *testing.T) {
	ktLevels(t, func(l Level) {
		r := rand.New(rand.NewPCG(23, uint64(l)))
		for _, d := range []int{0, 1, 2, 3, 8, 14, 16, 25, 32} {
			for _, kc := range append([]int{0}, ktManyShapes...) {
				for _, alpha := range []float32{1, -1, -2, 0.75} {
					x := ktRandF32(r, d, r.IntN(4))
					cT := ktRandF32(r, d*kc, r.IntN(4))
					var base []float32
					if r.IntN(2) == 0 {
						base = ktRandF32(r, kc, r.IntN(4))
					}
					out, all := ktGuarded(kc)
					DotT(x, cT, base, alpha, out)
					what := fmt.Sprintf("level %v d=%d k=%d alpha=%v base=%v", l, d, kc, alpha, base != nil)
					ktCheckGuard(t, all, kc, what)
					for c := 0; c < kc; c++ {
						var s, m float64
						if base != nil {
							s, m = float64(base[c]), math.Abs(float64(base[c]))
						}
						for t := 0; t < d; t++ {
							p := float64(alpha*x[t]) * float64(cT[t*kc+c])
							s += p
							m += math.Abs(p)
						}
						if !ktClose(out[c], s, float64(d+2)*6e-8*m) {
							t.Fatalf("%s: out[%d] = %v, want %v", what, c, out[c], s)
						}
					}
				}
			}
		}
	})
}

func TestTranspose(t *testing.T) {
	a := []float32{1, 2, 3, 4, 5, 6} // 2×3
	got := make([]float32, 6)
	Transpose(a, 2, 3, got)
	want := []float32{1, 4, 2, 5, 3, 6}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Transpose = %v, want %v", got, want)
		}
	}
}

// BenchmarkNearestL2T: one PQ sub-quantizer assignment pass (n points of
// d floats against k centroids), the k-means inner loop.
func BenchmarkNearestL2T(b *testing.B) {
	for _, sh := range []struct{ d, k int }{{2, 256}, {8, 256}, {14, 256}, {16, 256}, {32, 256}, {14, 16}} {
		for _, l := range SupportedLevels() {
			b.Run(fmt.Sprintf("d=%d/k=%d/level=%v", sh.d, sh.k, l), func(b *testing.B) {
				restore, err := SetLevel(l)
				if err != nil {
					b.Fatal(err)
				}
				defer restore()
				r := rand.New(rand.NewPCG(1, 2))
				const n = 1024
				x := ktRandF32(r, n*sh.d, 0)
				cT := ktRandF32(r, sh.d*sh.k, 0)
				cnorm := ktRandF32(r, sh.k, 0)
				assign := make([]int32, n)
				val := make([]float32, n)
				b.SetBytes(int64(n * sh.d * 4))
				b.ReportAllocs()
				for b.Loop() {
					NearestL2T(x, sh.d, sh.d, cT, cnorm, assign, val)
				}
			})
		}
	}
}

// BenchmarkDotT: one PQ lookup-table row set (k entries of a d-float
// sub-quantizer).
func BenchmarkDotT(b *testing.B) {
	for _, sh := range []struct{ d, k int }{{14, 256}, {2, 256}, {14, 16}} {
		for _, l := range SupportedLevels() {
			b.Run(fmt.Sprintf("d=%d/k=%d/level=%v", sh.d, sh.k, l), func(b *testing.B) {
				restore, err := SetLevel(l)
				if err != nil {
					b.Fatal(err)
				}
				defer restore()
				r := rand.New(rand.NewPCG(1, 2))
				x := ktRandF32(r, sh.d, 0)
				cT := ktRandF32(r, sh.d*sh.k, 0)
				base := ktRandF32(r, sh.k, 0)
				out := make([]float32, sh.k)
				b.SetBytes(int64(sh.d * sh.k * 4))
				b.ReportAllocs()
				for b.Loop() {
					DotT(x, cT, base, -2, out)
				}
			})
		}
	}
}

// TestAddF32 checks AddF32 at every level (exact: one rounding either
// way) for every length up to 200 with a guard band.
func TestAddF32(t *testing.T) {
	ktLevels(t, func(l Level) {
		r := rand.New(rand.NewPCG(24, uint64(l)))
		for n := 0; n <= 200; n++ {
			a := ktRandF32(r, n, r.IntN(4))
			b := ktRandF32(r, n, r.IntN(4))
			out, all := ktGuarded(n)
			AddF32(out, a, b)
			ktCheckGuard(t, all, n, fmt.Sprintf("level %v AddF32 n=%d", l, n))
			for i := range out {
				if out[i] != a[i]+b[i] {
					t.Fatalf("level %v n=%d: out[%d] = %v, want %v", l, n, i, out[i], a[i]+b[i])
				}
			}
		}
	})
}

func BenchmarkAddF32(b *testing.B) {
	const n = 56 * 256 // one IVF-PQ lookup table (M = 56, 8-bit)
	for _, l := range SupportedLevels() {
		b.Run(fmt.Sprintf("n=%d/level=%v", n, l), func(b *testing.B) {
			restore, err := SetLevel(l)
			if err != nil {
				b.Fatal(err)
			}
			defer restore()
			r := rand.New(rand.NewPCG(1, 2))
			x, y, out := ktRandF32(r, n, 0), ktRandF32(r, n, 0), make([]float32, n)
			b.SetBytes(n * 4 * 3)
			b.ReportAllocs()
			for b.Loop() {
				AddF32(out, x, y)
			}
		})
	}
}

// TestArgminAffine checks ArgminAffine at every level against float64 for
// every row length up to 100 and 566 (a coarse quantizer), including ties
// (a duplicated minimum resolves to the lower index).
func TestArgminAffine(t *testing.T) {
	ktLevels(t, func(l Level) {
		r := rand.New(rand.NewPCG(25, uint64(l)))
		for _, kc := range append(ktRange(1, 100), 566) {
			n := 1 + r.IntN(5)
			x := ktRandF32(r, n*kc, r.IntN(4))
			base := ktRandF32(r, kc, r.IntN(4))
			alpha := float32(-2)
			if kc%3 == 0 {
				alpha = 1.5
			}
			if kc > 1 && kc%2 == 0 { // a tie in row 0
				c1 := r.IntN(kc - 1)
				c2 := c1 + 1 + r.IntN(kc-c1-1)
				base[c2], x[c2] = base[c1], x[c1]
				for c := range base {
					if c != c1 && c != c2 {
						base[c] += 100 // c1, c2 are the minimum
					}
				}
			}
			idx := make([]int32, n)
			val, all := ktGuarded(n)
			ArgminAffine(x, base, alpha, idx, val)
			what := fmt.Sprintf("level %v k=%d n=%d", l, kc, n)
			ktCheckGuard(t, all, n, what)
			for i := 0; i < n; i++ {
				f := func(c int) (float64, float64) {
					v := float64(alpha) * float64(x[i*kc+c])
					return float64(base[c]) + v, 4 * 6e-8 * (math.Abs(float64(base[c])) + math.Abs(v))
				}
				got, tol := f(int(idx[i]))
				for c := 0; c < kc; c++ {
					if v, tc := f(c); v < got-2*max(tol, tc) {
						t.Fatalf("%s row %d: chose %d (%v), but %d has %v", what, i, idx[i], got, c, v)
					}
				}
				if !ktClose(val[i], got, tol) {
					t.Fatalf("%s row %d: val %v, want %v", what, i, val[i], got)
				}
				if i == 0 && kc > 1 && kc%2 == 0 {
					// the tie: the lower of the two equal minima
					lo := int32(kc)
					for c := 0; c < kc; c++ {
						if v, _ := f(c); v == got && int32(c) < lo {
							lo = int32(c)
						}
					}
					if idx[0] != lo {
						t.Fatalf("%s: tie resolved to %d, want %d", what, idx[0], lo)
					}
				}
			}
		}
	})
}
