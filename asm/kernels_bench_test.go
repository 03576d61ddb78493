package asm

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
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

func BenchmarkL2Sq(b *testing.B)      { benchPair(b, false, 3) }
func BenchmarkDot(b *testing.B)       { benchPair(b, true, 2) }
func BenchmarkL2SqBatch(b *testing.B) { benchBatch(b, L2SqBatch, 3) }
func BenchmarkDotBatch(b *testing.B)  { benchBatch(b, DotBatch, 2) }

// benchPair times Dot or L2Sq called the way the indexes call them:
// directly, so the wrapper inlines into the loop, with each result stored
// to a small array. (Passing the kernel as a func value adds an indirect
// call and a non-inlined frame per pair, and summing the results into one
// variable adds a loop-carried store→load→add chain through memory; both
// are harness costs that cap the measured speed-up of a 3–5 ns kernel.
// BenchmarkPairSpeedup/.../call=indirect keeps that harness for
// comparison.)
func benchPair(b *testing.B, dot bool, flopsPerDim float64) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, d := range []int{128, 768} {
		x := ktRandF32(r, d, 0)
		y := ktRandF32(r, d, 0)
		benchLevels(b, fmt.Sprintf("dim=%d", d), func(b *testing.B) {
			b.SetBytes(int64(8 * d))
			b.ReportAllocs()
			var out [64]float32
			if dot {
				for i := 0; i < b.N; i++ {
					out[i&63] = Dot(x, y)
				}
			} else {
				for i := 0; i < b.N; i++ {
					out[i&63] = L2Sq(x, y)
				}
			}
			benchSinkF += out[0]
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

// BenchmarkPairSpeedup measures the single-pair speed-up over generic
// robustly on a shared machine, like BenchmarkFastScan4Speedup: every
// iteration times a run of 1024 calls at each level back to back on the
// same input, and the metrics are the per-level minimum ns per call
// ("ns-avx512") and their ratios to generic ("x-avx512" = min generic
// time / min avx512 time). ns/op covers all levels together.
// call=direct calls Dot / L2Sq as the indexes do (inlined wrapper, results
// stored); call=indirect calls them through a func value and sums the
// results, the harness BenchmarkDot / BenchmarkL2Sq used before.
func BenchmarkPairSpeedup(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 8))
	for _, kn := range []string{"dot", "l2sq"} {
		for _, d := range []int{128, 768} {
			x := ktRandF32(r, d, 0)
			y := ktRandF32(r, d, 0)
			for _, call := range []string{"direct", "indirect"} {
				b.Run(fmt.Sprintf("%s/dim=%d/call=%s", kn, d, call), func(b *testing.B) {
					run := pairRunner(kn, call)
					levels := SupportedLevels()
					best := make([]time.Duration, len(levels))
					for i := range best {
						best[i] = time.Hour
					}
					for b.Loop() {
						for i, l := range levels {
							restore, err := SetLevel(l)
							if err != nil {
								b.Fatal(err)
							}
							best[i] = min(best[i], run(x, y))
							restore()
						}
					}
					for i, l := range levels {
						ns := float64(best[i].Nanoseconds()) / pairCalls
						b.ReportMetric(ns, "ns-"+l.String())
						if i > 0 {
							b.ReportMetric(float64(best[0])/float64(best[i]), "x-"+l.String())
						}
					}
				})
			}
		}
	}
}

const pairCalls = 1024

// pairRunner returns a function that times pairCalls calls of kernel kn
// ("dot" or "l2sq") in the given call style.
func pairRunner(kn, call string) func(x, y []float32) time.Duration {
	f := Dot
	if kn == "l2sq" {
		f = L2Sq
	}
	switch {
	case call == "indirect":
		return func(x, y []float32) time.Duration {
			var s float32
			t0 := time.Now()
			for j := 0; j < pairCalls; j++ {
				s += f(x, y)
			}
			d := time.Since(t0)
			benchSinkF += s
			return d
		}
	case kn == "dot":
		return pairDirectDot
	default:
		return pairDirectL2Sq
	}
}

// pairDirectDot and pairDirectL2Sq are top-level functions (not closures)
// so that the Dot / L2Sq wrappers inline into their loops.
func pairDirectDot(x, y []float32) time.Duration {
	var out [64]float32
	t0 := time.Now()
	for j := 0; j < pairCalls; j++ {
		out[j&63] = Dot(x, y)
	}
	d := time.Since(t0)
	benchSinkF += out[0]
	return d
}

func pairDirectL2Sq(x, y []float32) time.Duration {
	var out [64]float32
	t0 := time.Now()
	for j := 0; j < pairCalls; j++ {
		out[j&63] = L2Sq(x, y)
	}
	d := time.Since(t0)
	benchSinkF += out[0]
	return d
}

// BenchmarkManyAVX2 compares, at the AVX2 level, DotMany / L2SqMany (the
// register-blocked AVX2 tiles) with their one-batch-call-per-x-row form
// (manyBatch over dotBatch / l2SqBatch), on a 64-query block against a
// 1,024-row block as the flat search runs them, for the ANN sets' d.
func BenchmarkManyAVX2(b *testing.B) {
	restore, err := SetLevel(AVX2)
	if err != nil {
		b.Skip(err)
	}
	defer restore()
	r := rand.New(rand.NewPCG(1, 9))
	for _, d := range []int{100, 512, 784} {
		const n, m = 64, 1024
		x := ktRandF32(r, n*d, 0)
		c := ktRandF32(r, m*d, 0)
		out := make([]float32, n*m)
		for _, kn := range []string{"dot", "l2sq"} {
			for _, mode := range []string{"tiles", "batch"} {
				f := DotMany
				switch {
				case kn == "dot" && mode == "batch":
					f = dotManyBatch
				case kn == "l2sq" && mode == "tiles":
					f = L2SqMany
				case kn == "l2sq":
					f = l2SqManyBatch
				}
				b.Run(fmt.Sprintf("kernel=%s/dim=%d/mode=%s", kn, d, mode), func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						f(x, c, d, out)
					}
					reportRate(b, 2*float64(n*m*d), float64(4*m*d))
				})
			}
		}
	}
}
