package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refADC returns the float64 ADC sum for row i and tolerance
// (m+2)·6e-8·Σ|terms|.
func refADC(codes []uint8, m int, lut []float32, i int) (float64, float64) {
	var s, a float64
	for j := 0; j < m; j++ {
		v := float64(lut[j*256+int(codes[i*m+j])])
		s += v
		a += math.Abs(v)
	}
	return s, float64(m+2) * 6e-8 * a
}

// ktADCVariant is an ADC kernel that dispatch does not pick on this CPU but
// that still must match the reference (see ktADCVariants).
type ktADCVariant struct {
	name string
	f    func(codes []uint8, m int, lut []float32, out []float32)
}

func ktCheckADC(t testing.TB, l Level, codes []uint8, m int, lut []float32, n int) {
	t.Helper()
	ktCheckADCFunc(t, l.String(), ADCScan8, codes, m, lut, n)
	if l == CurrentLevel() && l == SupportedLevels()[len(SupportedLevels())-1] {
		for _, v := range ktADCVariants() {
			f := func(codes []uint8, m int, lut []float32, out []float32) {
				if len(out) == 0 || m == 0 { // the exported wrapper's job
					clear(out)
					return
				}
				v.f(codes[:len(out)*m], m, lut[:m*256], out)
			}
			ktCheckADCFunc(t, v.name, f, codes, m, lut, n)
		}
	}
}

func ktCheckADCFunc(t testing.TB, name string, f func([]uint8, int, []float32, []float32), codes []uint8, m int, lut []float32, n int) {
	t.Helper()
	out, all := ktGuarded(n)
	f(codes, m, lut, out)
	ktCheckGuard(t, all, n, fmt.Sprintf("%s ADCScan8 m=%d n=%d", name, m, n))
	for i := range out {
		if want, tol := refADC(codes, m, lut, i); !ktClose(out[i], want, tol) {
			t.Fatalf("%s: ADCScan8 m=%d n=%d row %d: got %v want %v", name, m, n, i, out[i], want)
		}
	}
}

func TestADCScan8(t *testing.T) {
	ms := []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 31, 32, 64}
	ktLevels(t, func(l Level) {
		r := rand.New(rand.NewPCG(7, uint64(l)))
		for _, m := range ms {
			lut := ktRandF32(r, m*256, m%4)
			maxN := ktMaxLen(t)
			for n := 0; n <= maxN; n++ {
				if testing.Short() && n > 40 && n%7 != 0 {
					continue
				}
				codes := ktRandU8(r, n*m, n%4)
				ktCheckADC(t, l, codes, m, lut, n)
			}
		}
	})
}

func FuzzADCScan8(f *testing.F) {
	f.Add([]byte{}, uint8(4))
	f.Add([]byte{0, 255, 1, 2, 3, 4, 5, 6, 7, 8}, uint8(1))
	f.Add(make([]byte, 200), uint8(8))
	f.Add([]byte("the quick brown fox jumps over the lazy dog, twice over"), uint8(5))
	f.Fuzz(func(t *testing.T, codes []byte, mm uint8) {
		m := int(mm%33) + 1
		n := len(codes) / m
		r := rand.New(rand.NewPCG(8, uint64(m)))
		lut := ktRandF32(r, m*256, 0)
		ktLevels(t, func(l Level) {
			ktCheckADC(t, l, codes, m, lut, n)
		})
	})
}
