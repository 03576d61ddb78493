package asm

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// Benchmarks for the float32, SQ8 and ADC kernels at every supported level.
// Names group under benchstat as Benchmark<Kernel>/<shape>/level=<level>.
// Extra metrics: GFLOP/s (one multiply-add = 2 flops, L2 counts the
// subtraction as a third), codes/s for ADC, and bw_frac = input bytes/s
// divided by Bandwidth() measured once per process.

var (
	bwOnce sync.Once
	bwGBps float64
)

func benchBandwidth() float64 {
	bwOnce.Do(func() { bwGBps = Bandwidth(BandwidthDefaultBytes) })
	return bwGBps
}

func benchLevels(b *testing.B, name string, f func(b *testing.B)) {
	benchBandwidth() // measured once, outside any timed region
	for _, l := range SupportedLevels() {
		b.Run(fmt.Sprintf("%s/level=%v", name, l), func(b *testing.B) {
			restore, err := SetLevel(l)
			if err != nil {
				b.Fatal(err)
			}
			defer restore()
			f(b)
		})
	}
}

// reportRate adds GFLOP/s (flops per op) and the fraction of memory
// bandwidth reached by bytesPerOp.
func reportRate(b *testing.B, flopsPerOp, bytesPerOp float64) {
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	if ns <= 0 {
		return
	}
	if flopsPerOp > 0 {
		b.ReportMetric(flopsPerOp/ns, "GFLOP/s")
	}
	b.ReportMetric(bytesPerOp/ns/benchBandwidth(), "bw_frac")
}

var benchSinkF float32
var benchSinkU uint32

func BenchmarkBandwidth(b *testing.B) {
	for i := 0; i < b.N; i++ {
		bwGBps = Bandwidth(BandwidthDefaultBytes)
	}
	b.ReportMetric(bwGBps, "GB/s")
}

func BenchmarkSumFloat32(b *testing.B) {
	// Same size as the bandwidth probe: smaller buffers can sit in a large L3.
	x := ktRandF32(rand.New(rand.NewPCG(1, 1)), BandwidthDefaultBytes/4, 0)
	benchLevels(b, "bytes=256MiB", func(b *testing.B) {
		b.SetBytes(int64(len(x) * 4))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			benchSinkF += SumFloat32(x)
		}
		reportRate(b, float64(len(x)), float64(len(x)*4))
	})
}

func BenchmarkL2Sq(b *testing.B)      { benchPair(b, L2Sq, 3) }
func BenchmarkDot(b *testing.B)       { benchPair(b, Dot, 2) }
func BenchmarkL2SqBatch(b *testing.B) { benchBatch(b, L2SqBatch, 3) }
func BenchmarkDotBatch(b *testing.B)  { benchBatch(b, DotBatch, 2) }

func benchPair(b *testing.B, f func(a, b []float32) float32, flopsPerDim float64) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, d := range []int{128, 768} {
		x := ktRandF32(r, d, 0)
		y := ktRandF32(r, d, 0)
		benchLevels(b, fmt.Sprintf("dim=%d", d), func(b *testing.B) {
			b.SetBytes(int64(8 * d))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				benchSinkF += f(x, y)
			}
			reportRate(b, flopsPerDim*float64(d), float64(8*d))
		})
	}
}

func benchBatch(b *testing.B, f func(q, x, out []float32), flopsPerDim float64) {
	r := rand.New(rand.NewPCG(1, 3))
	const n = 1024
	for _, d := range []int{128, 768} {
		q := ktRandF32(r, d, 0)
		x := ktRandF32(r, n*d, 0)
		out := make([]float32, n)
		benchLevels(b, fmt.Sprintf("dim=%d/n=%d", d, n), func(b *testing.B) {
			b.SetBytes(int64(4 * n * d))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				f(q, x, out)
			}
			reportRate(b, flopsPerDim*float64(n*d), float64(4*n*d))
		})
	}
}

func BenchmarkSQ8L2Sq(b *testing.B) { benchSQ8(b, SQ8L2Sq) }
func BenchmarkSQ8Dot(b *testing.B)  { benchSQ8(b, SQ8Dot) }

func benchSQ8(b *testing.B, f func(q []float32, c []uint8, s, o []float32) float32) {
	r := rand.New(rand.NewPCG(1, 4))
	const d = 128
	q, c, s, o := ktSQ8Data(r, d, 0)
	benchLevels(b, fmt.Sprintf("dim=%d", d), func(b *testing.B) {
		b.SetBytes(int64(d)) // code bytes per call
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			benchSinkF += f(q, c, s, o)
		}
		reportRate(b, 0, float64(d))
	})
}

func BenchmarkL2SqU8(b *testing.B) {
	benchU8(b, func(v ktU8Variant) func(a, b []uint8) uint32 { return v.l2Sq })
}
func BenchmarkDotU8(b *testing.B) {
	benchU8(b, func(v ktU8Variant) func(a, b []uint8) uint32 { return v.dotU8 })
}

func benchU8(b *testing.B, pick func(ktU8Variant) func(a, b []uint8) uint32) {
	r := rand.New(rand.NewPCG(1, 5))
	for _, d := range []int{128, 768} {
		x := ktRandU8(r, d, 0)
		y := ktRandU8(r, d, 0)
		vs := ktU8All(b)
		vs = vs[:len(vs)-1] // drop "exported" (same as the top level)
		for _, v := range vs {
			f := pick(v)
			b.Run(fmt.Sprintf("dim=%d/level=%s", d, v.name), func(b *testing.B) {
				b.SetBytes(int64(2 * d))
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					benchSinkU += f(x, y)
				}
				reportRate(b, 0, float64(2*d))
			})
		}
	}
}

func BenchmarkADC8(b *testing.B) {
	var vs []ktADCVariant
	for _, l := range SupportedLevels() {
		restore, err := SetLevel(l)
		if err != nil {
			b.Fatal(err)
		}
		vs = append(vs, ktADCVariant{l.String(), k.adc8})
		restore()
	}
	benchADC(b, vs)
}

func benchADC(b *testing.B, vs []ktADCVariant) {
	benchBandwidth()
	r := rand.New(rand.NewPCG(1, 6))
	const n = 4096
	for _, m := range []int{16, 64} {
		lut := ktRandF32(r, m*256, 0)
		codes := ktRandU8(r, n*m, 0)
		out := make([]float32, n)
		for _, v := range vs {
			b.Run(fmt.Sprintf("m=%d/n=%d/level=%s", m, n, v.name), func(b *testing.B) {
				b.SetBytes(int64(n * m)) // code bytes
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					v.f(codes, m, lut, out)
				}
				ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				b.ReportMetric(float64(n)/ns*1e3, "Mcodes/s")
				reportRate(b, 0, float64(n*m))
			})
		}
	}
}

// BenchmarkL2SqMany is the k-means assignment shape: n points against m
// centroids. GFLOP/s counts 3 flops per dimension per pair.
func BenchmarkL2SqMany(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 7))
	const n, m, d = 4096, 256, 128
	x := ktRandF32(r, n*d, 0)
	c := ktRandF32(r, m*d, 0)
	out := make([]float32, n*m)
	benchLevels(b, fmt.Sprintf("n=%d/m=%d/dim=%d", n, m, d), func(b *testing.B) {
		b.SetBytes(int64(4 * n * d))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			L2SqMany(x, c, d, out)
		}
		reportRate(b, 3*float64(n*m*d), float64(4*n*d))
	})
}
