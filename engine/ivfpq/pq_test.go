package ivfpq

import (
	"errors"
	"math"
	"testing"

	"github.com/stratasearch/strata/asm"
)

func TestPQShapeErrors(t *testing.T) {
	x := randVecs(1, 300, 10, false)
	if _, err := TrainPQ(x, 10, 3, 8, KMeans{}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("d=10, M=3: err = %v, want ErrInvalidArgument", err)
	}
	if _, err := TrainPQ(x, 10, 5, 6, KMeans{}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nbits=6: err = %v, want ErrInvalidArgument", err)
	}
	if _, err := TrainPQ(x[:100], 10, 5, 8, KMeans{}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("10 points for 256 centroids: err = %v", err)
	}
	o := Options{Dim: 10, M: 3, Nbits: 5, Nlist: -1}.EnsureDefaults()
	err := o.Validate()
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("Validate: %v", err)
	}
	for _, want := range []string{"divisible by M", "Nbits", "Nlist"} {
		if !contains(err.Error(), want) {
			t.Errorf("Validate error %q does not report %q", err, want)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestPQEncodeDecode: encoding picks the nearest centroid per sub-space
// (checked exhaustively against a float64 scan), decode returns those
// centroids, and the reconstruction error falls with more bits.
func TestPQEncodeDecode(t *testing.T) {
	const d = 16
	n := 2000
	if testing.Short() {
		n = 600
	}
	x := randVecs(3, n, d, false)
	var mse [2]float64
	for bi, nbits := range []int{4, 8} {
		pq, err := TrainPQ(x, d, 4, nbits, KMeans{Iters: 10, Seed: 1, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		codes := make([]uint8, n*pq.M)
		pq.Encode(x, codes)
		rec := make([]float32, n*d)
		pq.Decode(codes, rec)
		for i := 0; i < n; i++ {
			for j := 0; j < pq.M; j++ {
				sub := x[i*d+j*pq.Dsub : i*d+(j+1)*pq.Dsub]
				best, bd := 0, math.Inf(1)
				for c := 0; c < pq.Ksub; c++ {
					if v := exactDist(sub, pq.codebook(j)[c*pq.Dsub:(c+1)*pq.Dsub], L2); v < bd {
						best, bd = c, v
					}
				}
				got := exactDist(sub, rec[i*d+j*pq.Dsub:i*d+(j+1)*pq.Dsub], L2)
				if int(codes[i*pq.M+j]) >= pq.Ksub || got > bd*(1+1e-5)+1e-9 {
					t.Fatalf("nbits=%d vec %d sub %d: code %d dist %g, nearest %d dist %g", nbits, i, j, codes[i*pq.M+j], got, best, bd)
				}
			}
		}
		mse[bi] = 0
		for i := 0; i < n; i++ {
			mse[bi] += exactDist(x[i*d:(i+1)*d], rec[i*d:(i+1)*d], L2)
		}
		mse[bi] /= float64(n)
	}
	if !(mse[1] < mse[0] && mse[0] < float64(d)) {
		t.Errorf("reconstruction MSE 4-bit %g, 8-bit %g (data variance %d): want 8-bit < 4-bit < variance", mse[0], mse[1], d)
	}
}

// TestADC8MatchesFloat64 is the 8-bit exactness test: the ADC sums of
// asm.ADCScan8 over the PQ LUT equal the float64 distance from the query to
// each reconstructed vector, within float32 rounding scaled by the inputs
// ((2·d + M + 2)·2^-24·Σ|terms|).
func TestADC8MatchesFloat64(t *testing.T) {
	const d, m = 32, 8
	x := randVecs(4, 600, d, false)
	pq, err := TrainPQ(x, d, m, 8, KMeans{Iters: 5, Seed: 2, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	n := len(x) / d
	codes := make([]uint8, n*m)
	pq.Encode(x, codes)
	rec := make([]float32, n*d)
	pq.Decode(codes, rec)
	qs := randVecs(5, 5, d, false)
	lut := make([]float32, m*256)
	out := make([]float32, n)
	for _, metric := range []Metric{L2, IP} {
		for qi := 0; qi < 5; qi++ {
			q := qs[qi*d : (qi+1)*d]
			pq.LUT(q, metric, lut)
			asm.ADCScan8(codes, m, lut, out)
			for i := 0; i < n; i++ {
				var ref, mag float64
				for j := 0; j < d; j++ {
					a, b := float64(q[j]), float64(rec[i*d+j])
					if metric == IP {
						ref -= a * b
						mag += math.Abs(a * b)
					} else {
						ref += (a - b) * (a - b)
						mag += (a - b) * (a - b)
					}
				}
				tol := float64(2*d+m+2) * 0x1p-24 * mag
				if math.Abs(float64(out[i])-ref) > tol {
					t.Fatalf("%v q%d v%d: ADC %g, float64 %g, |diff| %g > tol %g", metric, qi, i, out[i], ref, math.Abs(float64(out[i])-ref), tol)
				}
			}
		}
	}
}

// TestFastScan4ExactAndBound is the 4-bit exactness test: the fast-scan
// uint16 sums equal the integer sums of the quantised LUT entries exactly,
// and the mapped-back distances stay within the documented bound
// M·0.5/scale (+ float32 rounding) of the float LUT sums.
func TestFastScan4ExactAndBound(t *testing.T) {
	const d, m = 32, 16
	x := randVecs(6, 700, d, false)
	pq, err := TrainPQ(x, d, m, 4, KMeans{Iters: 5, Seed: 3, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	n := len(x) / d
	codes := make([]uint8, n*m)
	pq.Encode(x, codes)
	packed := asm.PackCodes4(codes, n, m)
	nb := asm.FastScan4Blocks(n)
	qs := randVecs(7, 4, d, false)
	lut := make([]float32, m*16)
	acc := make([]uint16, nb*32)
	dist := make([]float32, n)
	for _, metric := range []Metric{L2, IP} {
		for qi := 0; qi < 4; qi++ { // even qi: asm.QuantizeLUT4; odd: quantizeLUT4
			pq.LUT(qs[qi*d:(qi+1)*d], metric, lut)
			q4, scale, bias := asm.QuantizeLUT4(lut, m)
			if qi%2 == 1 { // the private quantizer used by Search
				q4 = make([]uint8, asm.FastScan4BlockBytes(m))
				scale, bias = quantizeLUT4(lut, m, q4)
			}
			asm.FastScan4(packed, nb, m, [][]uint8{q4}, [][]uint16{acc})
			asm.FastScan4Distances(dist, acc[:n], scale, bias)
			bound := float64(m) * 0.5 / float64(scale)
			for i := 0; i < n; i++ {
				var isum int
				var fsum, mag float64
				for j := 0; j < m; j++ {
					c := int(codes[i*m+j])
					isum += int(q4[j*16+c])
					fsum += float64(lut[j*16+c])
					mag += math.Abs(float64(lut[j*16+c]))
				}
				if int(acc[i]) != isum {
					t.Fatalf("%v q%d v%d: fast-scan sum %d, integer reference %d", metric, qi, i, acc[i], isum)
				}
				tol := bound*(1+1e-4) + float64(m+4)*0x1p-24*(mag+math.Abs(float64(bias)))
				if e := math.Abs(float64(dist[i]) - fsum); e > tol {
					t.Fatalf("%v q%d v%d: distance %g, float sum %g, error %g > bound %g", metric, qi, i, dist[i], fsum, e, tol)
				}
			}
		}
	}
}

// TestPut4MatchesPackCodes4: the in-place nibble writer used by Add builds
// exactly asm.PackCodes4's layout (odd M, partial last block).
func TestPut4MatchesPackCodes4(t *testing.T) {
	for _, m := range []int{1, 5, 16} {
		n := 77
		codes := make([]uint8, n*m)
		for i := range codes {
			codes[i] = uint8((i*7 + i/3) & 15)
		}
		want := asm.PackCodes4(codes, n, m)
		got := make([]uint8, len(want))
		for v := 0; v < n; v++ {
			for j := 0; j < m; j++ {
				put4(got, m, v, j, codes[v*m+j])
			}
		}
		if string(got) != string(want) {
			t.Fatalf("m=%d: put4 layout differs from PackCodes4", m)
		}
	}
}

// TestQuantizeLUT4Contract: the private quantizer keeps every sum ≤ 65535
// (so uint16 never wraps), zero padding tables, and per-entry error ≤ 0.5
// steps, on random and adversarial (all-equal spans, huge m) tables.
func TestQuantizeLUT4Contract(t *testing.T) {
	for _, m := range []int{1, 2, 7, 64, 300} {
		for trial := 0; trial < 3; trial++ {
			lut := randVecs(uint64(m*10+trial), m, 16, false)
			if trial == 1 { // every table spans exactly [0, 1]
				for j := 0; j < m; j++ {
					for c := 0; c < 16; c++ {
						lut[j*16+c] = float32(c) / 15
					}
				}
			}
			if trial == 2 { // constant tables
				for i := range lut {
					lut[i] = 3
				}
			}
			q := make([]uint8, asm.FastScan4BlockBytes(m))
			for i := range q {
				q[i] = 0xAA // must be overwritten, including padding
			}
			scale, bias := quantizeLUT4(lut, m, q)
			worst := 0
			var sumMin float64
			for j := 0; j < m; j++ {
				lo := math.Inf(1)
				top := 0
				for c := 0; c < 16; c++ {
					lo = math.Min(lo, float64(lut[j*16+c]))
					top = max(top, int(q[j*16+c]))
				}
				sumMin += lo
				worst += top
				for c := 0; c < 16; c++ {
					rec := lo + float64(q[j*16+c])/float64(scale)
					if e := math.Abs(rec - float64(lut[j*16+c])); e > (0.5+1e-3)/float64(scale)+1e-6 {
						t.Fatalf("m=%d trial %d: entry error %g > 0.5/scale = %g", m, trial, e, 0.5/float64(scale))
					}
				}
			}
			if worst > 65535 {
				t.Fatalf("m=%d trial %d: worst-case sum %d overflows uint16", m, trial, worst)
			}
			for _, b := range q[m*16:] {
				if b != 0 {
					t.Fatalf("m=%d: padding table not zero", m)
				}
			}
			if math.Abs(float64(bias)-sumMin) > 1e-5*(1+math.Abs(sumMin)) {
				t.Fatalf("m=%d: bias %g, Σ minima %g", m, bias, sumMin)
			}
		}
	}
}
