//go:build arm64 && gc && !noasm && !purego

package asm

import (
	"math/rand/v2"
	"testing"
)

// The NEON argmin kernels keep one running minimum per lane (16 lanes)
// and reduce at the end, so ties must be checked for every pair of lane
// positions, not only random ones: these tests try every pair c1 < c2 of
// a k that has 16-blocks, 4-blocks and a scalar tail.

// TestNearestL2TTiesAllPairs: a duplicated centroid pair (c1, c2) at the
// query resolves to c1, for every pair, at every level.
func TestNearestL2TTiesAllPairs(t *testing.T) {
	ktLevels(t, func(l Level) {
		t.Logf("level %v", l)
		r := rand.New(rand.NewPCG(31, uint64(l)))
		const d = 3
		for _, kc := range []int{21, 39} {
			cent := ktRandF32(r, kc*d, 0)
			cT := make([]float32, kc*d)
			cnorm := make([]float32, kc)
			for c1 := 0; c1 < kc; c1++ {
				for c2 := c1 + 1; c2 < kc; c2++ {
					cc := append([]float32(nil), cent...)
					copy(cc[c2*d:(c2+1)*d], cc[c1*d:(c1+1)*d])
					Transpose(cc, kc, d, cT)
					for c := range cnorm {
						v, _ := refDot(cc[c*d:(c+1)*d], cc[c*d:(c+1)*d])
						cnorm[c] = float32(v)
					}
					x := cc[c1*d : (c1+1)*d]
					a := make([]int32, 1)
					NearestL2T(x, d, d, cT, cnorm, a, nil)
					if int(a[0]) != c1 {
						t.Fatalf("level %v k=%d: tie between %d and %d resolved to %d", l, kc, c1, c2, a[0])
					}
				}
			}
			// All centroids equal: index 0.
			cc := make([]float32, kc*d)
			for c := 0; c < kc; c++ {
				copy(cc[c*d:(c+1)*d], cent[:d])
			}
			Transpose(cc, kc, d, cT)
			clear(cnorm)
			a := make([]int32, 2)
			NearestL2T(append(append([]float32(nil), cent[:d]...), cent[d:2*d]...), d, d, cT, cnorm, a, nil)
			if a[0] != 0 || a[1] != 0 {
				t.Fatalf("level %v k=%d: all-equal centroids gave %v, want [0 0]", l, kc, a)
			}
		}
	})
}

// TestArgminAffineTiesAllPairs: two equal minima at (c1, c2) resolve to
// c1 in every row, for every pair, at every level.
func TestArgminAffineTiesAllPairs(t *testing.T) {
	ktLevels(t, func(l Level) {
		t.Logf("level %v", l)
		r := rand.New(rand.NewPCG(32, uint64(l)))
		for _, kc := range []int{21, 39} {
			for c1 := 0; c1 < kc; c1++ {
				for c2 := c1 + 1; c2 < kc; c2++ {
					const n = 2
					base := ktRandF32(r, kc, 0)
					x := ktRandF32(r, n*kc, 0)
					for c := range base {
						base[c] += 100
					}
					base[c1], base[c2] = 0, 0
					for i := 0; i < n; i++ {
						x[i*kc+c2] = x[i*kc+c1]
					}
					idx := make([]int32, n)
					val := make([]float32, n)
					ArgminAffine(x, base, -2, idx, val)
					for i := 0; i < n; i++ {
						if int(idx[i]) != c1 || val[i] != -2*x[i*kc+c1] {
							t.Fatalf("level %v k=%d row %d: tie between %d and %d gave (%d, %v), want (%d, %v)",
								l, kc, i, c1, c2, idx[i], val[i], c1, -2*x[i*kc+c1])
						}
					}
				}
			}
			// All values equal: index 0.
			base, x := make([]float32, kc), make([]float32, kc)
			idx, val := make([]int32, 1), make([]float32, 1)
			ArgminAffine(x, base, 1, idx, val)
			if idx[0] != 0 || val[0] != 0 {
				t.Fatalf("level %v k=%d: all-equal gave (%d, %v), want (0, 0)", l, kc, idx[0], val[0])
			}
		}
	})
}
