package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotPanels compares DotPanels over PackPanels with a float64 dot
// product, at every level this CPU runs, over shapes that cover the
// kernel's 4-coordinate loop, its d mod 4 steps, x rows past a multiple of
// 4, padded c groups and several cache tiles.
func TestDotPanels(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 7))
	shapes := []struct{ n, m, d int }{
		{1, 1, 1}, {4, 24, 4}, {5, 25, 3}, {7, 50, 100}, {8, 48, 101}, {3, 23, 7},
		{9, 2100, 100}, // 192 KiB tiles of 480 rows
		{4, 70, 784}, {6, 97, 512},
	}
	for it := 0; it < 20; it++ {
		shapes = append(shapes, struct{ n, m, d int }{1 + r.IntN(13), 1 + r.IntN(200), 1 + r.IntN(300)})
	}
	for _, l := range SupportedLevels() {
		restore, err := SetLevel(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range shapes {
			x := ktRandF32(r, s.n*s.d, 0)
			c := ktRandF32(r, s.m*s.d, 0)
			p := PackPanels(nil, c, s.d)
			mp := len(p) / s.d
			if mp%PanelRows != 0 || mp < s.m || mp >= s.m+PanelRows {
				t.Fatalf("%v: packed %d rows for %d", s, mp, s.m)
			}
			ldo := mp + 3
			out := make([]float32, s.n*ldo)
			for i := range out {
				out[i] = float32(math.NaN())
			}
			DotPanels(x, p, s.d, out, ldo)
			for i := 0; i < s.n; i++ {
				for j := 0; j < mp; j++ {
					want := 0.0
					if j < s.m {
						for t := 0; t < s.d; t++ {
							want += float64(x[i*s.d+t]) * float64(c[j*s.d+t])
						}
					}
					got := float64(out[i*ldo+j])
					if math.Abs(got-want) > 1e-4*(1+math.Sqrt(float64(s.d))) {
						t.Fatalf("level %v shape %+v: out[%d][%d] = %v, want %v", l, s, i, j, got, want)
					}
				}
				for j := mp; j < ldo; j++ {
					if !math.IsNaN(float64(out[i*ldo+j])) {
						t.Fatalf("level %v shape %+v: out[%d][%d] past the packed rows was written", l, s, i, j)
					}
				}
			}
		}
		restore()
	}
}

// BenchmarkDotPanels compares DotPanels (packing excluded) with DotMany on
// the flat search's 64 × 1,024 block, at each supported level.
func BenchmarkDotPanels(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 9))
	for _, d := range []int{100, 512, 784} {
		const n, m = 64, 1032 // 43 groups of 24
		x := ktRandF32(r, n*d, 0)
		c := ktRandF32(r, m*d, 0)
		p := PackPanels(nil, c, d)
		out := make([]float32, n*m)
		for _, l := range SupportedLevels() {
			if l == Generic {
				continue
			}
			for _, mode := range []string{"panels", "dotmany"} {
				b.Run(fmt.Sprintf("level=%v/dim=%d/mode=%s", l, d, mode), func(b *testing.B) {
					restore, err := SetLevel(l)
					if err != nil {
						b.Skip(err)
					}
					defer restore()
					for i := 0; i < b.N; i++ {
						if mode == "panels" {
							DotPanels(x, p, d, out, m)
						} else {
							DotMany(x, c, d, out)
						}
					}
					reportRate(b, 2*float64(n*m*d), float64(4*m*d))
				})
			}
		}
	}
}
