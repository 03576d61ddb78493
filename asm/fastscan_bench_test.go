package asm

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// fs4Bandwidth is the machine's single-thread streaming bandwidth in GB/s
// (Bandwidth, measured once per process at the best level).
var fs4Bandwidth = sync.OnceValue(func() float64 { return Bandwidth(0) })

// fs4GenericNs remembers the generic ns/op of each configuration so the
// SIMD sub-benchmarks (run after it, lowest level first) can report their
// speed-up as the "x-generic" metric.
var fs4GenericNs = map[string]float64{}

// BenchmarkFastScan4 scans n = 32768 packed vectors with 1, 2 or 4 queries.
// SetBytes is the packed code bytes scanned per call; codes/s counts
// vector×query distances per second; bw_frac is the code bytes per second
// as a fraction of the measured streaming bandwidth (Bandwidth). At
// n = 32768 the codes (256 KiB to 1 MiB) stay in L2/L3, so bw_frac can
// exceed 1.
func BenchmarkFastScan4(b *testing.B) {
	const n = 32768
	nb := FastScan4Blocks(n)
	r := rand.New(rand.NewPCG(11, 12))
	for _, m := range []int{16, 32, 64} {
		mpad := (m + 1) &^ 1
		packed := make([]uint8, nb*mpad*16)
		for i := range packed {
			packed[i] = uint8(r.Uint32())
		}
		for _, nq := range []int{1, 2, 4} {
			luts := make([][]uint8, nq)
			outs := make([][]uint16, nq)
			for i := range luts {
				luts[i] = make([]uint8, mpad*16)
				for j := range luts[i] {
					luts[i][j] = uint8(r.IntN(256))
				}
				outs[i] = make([]uint16, nb*32)
			}
			cfg := fmt.Sprintf("m=%d/q=%d", m, nq)
			bw := fs4Bandwidth()
			for _, l := range SupportedLevels() {
				b.Run(fmt.Sprintf("%s/level=%v", cfg, l), func(b *testing.B) {
					restore, err := SetLevel(l)
					if err != nil {
						b.Fatal(err)
					}
					defer restore()
					b.SetBytes(int64(len(packed)))
					b.ReportAllocs()
					for b.Loop() {
						FastScan4(packed, nb, m, luts, outs)
					}
					ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
					b.ReportMetric(float64(n*nq)/ns*1e9, "codes/s")
					b.ReportMetric(float64(len(packed))/ns/bw, "bw_frac")
					if l == Generic {
						fs4GenericNs[cfg] = ns
					} else if g, ok := fs4GenericNs[cfg]; ok {
						b.ReportMetric(g/ns, "x-generic")
					}
				})
			}
		}
	}
}

// BenchmarkFastScan4Speedup measures the speed-up over generic robustly on a
// shared machine: every iteration runs each level once, back to back, on
// the same input (n = 32768), and the metrics are ratios of the per-level
// minimum times ("x-avx512" = min generic time / min avx512 time) and the
// minimum times themselves ("ns-avx512"). ns/op covers all levels together.
// On CPUs with AVX512_VBMI and VNNI, "avx512" is the transposed VPERMB /
// VPDPBUSD kernel and "avx512pshufb" the PSHUFB kernel of the same level.
func BenchmarkFastScan4Speedup(b *testing.B) {
	const n = 32768
	nb := FastScan4Blocks(n)
	r := rand.New(rand.NewPCG(13, 14))
	for _, m := range []int{16, 64} {
		mpad := (m + 1) &^ 1
		packed := make([]uint8, nb*mpad*16)
		for i := range packed {
			packed[i] = uint8(r.Uint32())
		}
		for _, nq := range []int{1, 4} {
			luts := make([][]uint8, nq)
			outs := make([][]uint16, nq)
			for i := range luts {
				luts[i] = make([]uint8, mpad*16)
				for j := range luts[i] {
					luts[i][j] = uint8(r.IntN(256))
				}
				outs[i] = make([]uint16, nb*32)
			}
			b.Run(fmt.Sprintf("m=%d/q=%d", m, nq), func(b *testing.B) {
				// Paths: every level, plus the AVX-512 PSHUFB kernels
				// ("avx512pshufb") where the VBMI/VNNI ones are the default.
				type path struct {
					name string
					l    Level
					vbmi bool
				}
				var paths []path
				for _, l := range SupportedLevels() {
					paths = append(paths, path{l.String(), l, fs4UseVBMI})
					if l == AVX512 && fs4UseVBMI {
						paths = append(paths, path{"avx512pshufb", l, false})
					}
				}
				best := make([]time.Duration, len(paths))
				for i := range best {
					best[i] = time.Hour
				}
				prevV := fs4UseVBMI
				for b.Loop() {
					for i, p := range paths {
						restore, err := SetLevel(p.l)
						if err != nil {
							b.Fatal(err)
						}
						fs4UseVBMI = p.vbmi
						t0 := time.Now()
						FastScan4(packed, nb, m, luts, outs)
						best[i] = min(best[i], time.Since(t0))
						fs4UseVBMI = prevV
						restore()
					}
				}
				// The baseline form (a 4-way unrolled loop,
				// fastScan4Loop4), timed the same way.
				loop4 := time.Hour
				for range 5 {
					t0 := time.Now()
					fastScan4Loop4(packed, nb, m, luts, outs)
					loop4 = min(loop4, time.Since(t0))
				}
				b.ReportMetric(float64(loop4.Nanoseconds()), "ns-loop4")
				for i, p := range paths {
					b.ReportMetric(float64(best[i].Nanoseconds()), "ns-"+p.name)
					if i > 0 {
						b.ReportMetric(float64(best[0])/float64(best[i]), "x-"+p.name)
						b.ReportMetric(float64(loop4)/float64(best[i]), "x-"+p.name+"-vs-loop4")
					}
				}
			})
		}
	}
}
