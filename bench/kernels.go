package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/stratasearch/strata/asm"
)

// kernelsSuite times every asm kernel at every dispatch level the CPU
// supports against the pure-Go generic level, and reports throughput as
// a fraction of the measured single-thread read bandwidth (asm.Bandwidth).
// Streaming kernels use inputs of 128 MiB (quick: 64 MiB), beyond the
// last-level cache, so their ceiling is memory bandwidth;
// single-pair kernels run in cache and are compute-bound.
type kernelsSuite struct{}

func init() { Register(kernelsSuite{}) }

const kernelsSuiteName = "kernels"

func (kernelsSuite) Name() string { return kernelsSuiteName }

type kernelCase struct {
	name, shape string
	flops       float64 // floating-point (or integer multiply-add) ops per call
	codes       float64 // codes scanned per call
	bytes       float64 // input bytes streamed per call
	fn          func()
	// result runs the kernel once and returns its output (or a sample of
	// it); every level must match the generic level within
	// relTol·(|generic| + scale) per element (0: exactly).
	result func() []float64
	relTol float64
	scale  float64
}

// sampleF returns 64 evenly spaced elements of xs (all if fewer).
func sampleF(xs []float32) []float64 {
	step := max(1, len(xs)/64)
	var out []float64
	for i := 0; i < len(xs); i += step {
		out = append(out, float64(xs[i]))
	}
	return out
}

func sampleU16(xs []uint16) []float64 {
	step := max(1, len(xs)/64)
	var out []float64
	for i := 0; i < len(xs); i += step {
		out = append(out, float64(xs[i]))
	}
	return out
}

// checkKernel compares a level's result with the generic level's.
func checkKernel(c kernelCase, level string, got, want []float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("bench: kernels: %s %s at level %s: %d outputs, generic %d", c.name, c.shape, level, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); d > c.relTol*(math.Abs(want[i])+c.scale) || math.IsNaN(got[i]) != math.IsNaN(want[i]) {
			return fmt.Errorf("bench: kernels: %s %s at level %s differs from generic: output %d = %g, generic %g", c.name, c.shape, level, i, got[i], want[i])
		}
	}
	return nil
}

func (kernelsSuite) Run(ctx context.Context, cfg Config, res *Results) error {
	r := rand.New(rand.NewPCG(7, 7))
	rf := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		return x
	}
	ru := func(n int, mask uint8) []uint8 {
		x := make([]uint8, n)
		for i := range x {
			x[i] = uint8(r.UintN(256)) & mask
		}
		return x
	}
	// Streaming inputs are 128 MiB (quick: 64 MiB), at least twice a large
	// last-level cache, so those kernels run from memory.
	big := 128 << 20
	minTime := 200 * time.Millisecond
	if cfg.Quick {
		big = 64 << 20
		minTime = 50 * time.Millisecond
	}
	if cfg.Emulated {
		// Correctness smoke under qemu: timings mean nothing, keep it short.
		big = 4 << 20
		minTime = 10 * time.Millisecond
	}
	if res.Machine.BandwidthGBs == 0 {
		res.Machine.BandwidthGBs = asm.Bandwidth(2 * big)
	}
	const d = 128
	n := big / (4 * d)
	x, q, out := rf(n*d), rf(d), make([]float32, n)
	a, b := rf(d), rf(d)
	xm, cm, outm := rf(256*d), rf(256*d), make([]float32, 256*256)
	scale, offset := make([]float32, d), rf(d)
	for i := range scale {
		scale[i] = 0.01
	}
	code, code2 := ru(d, 0xff), ru(d, 0xff)
	const m8 = 16
	n8 := big / m8
	codes8, lut8, out8 := ru(n8*m8, 0xff), rf(m8*256), make([]float32, n8)
	const m4 = 32
	n4 := big * 2 / m4 // 4-bit codes: m4/2 bytes per vector
	packed := asm.PackCodes4(ru(n4*m4, 0x0f), n4, m4)
	nb := asm.FastScan4Blocks(n4)
	lutf := rf(m4 * 16)
	var luts [][]uint8
	var outs [][]uint16
	for i := 0; i < 4; i++ {
		l, _, _ := asm.QuantizeLUT4(lutf, m4)
		luts = append(luts, l)
		outs = append(outs, make([]uint16, nb*asm.FastScanBlock))
	}
	sum := rf(big / 4)
	var sinkF float32
	var sinkU uint32
	cases := []kernelCase{
		{name: "L2Sq", shape: "d=128", flops: 3 * d, bytes: 8 * d, fn: func() { sinkF += asm.L2Sq(a, b) }},
		{name: "Dot", shape: "d=128", flops: 2 * d, bytes: 8 * d, fn: func() { sinkF += asm.Dot(a, b) }},
		{name: "L2SqBatch", shape: fmt.Sprintf("d=128 n=%d", n), flops: 3 * float64(n*d), bytes: 4 * float64(n*d), fn: func() { asm.L2SqBatch(q, x, out) }},
		{name: "DotBatch", shape: fmt.Sprintf("d=128 n=%d", n), flops: 2 * float64(n*d), bytes: 4 * float64(n*d), fn: func() { asm.DotBatch(q, x, out) }},
		{name: "L2SqMany", shape: "d=128 n=256 m=256", flops: 3 * 256 * 256 * d, bytes: 8 * 256 * d, fn: func() { asm.L2SqMany(xm, cm, d, outm) }},
		{name: "DotMany", shape: "d=128 n=256 m=256", flops: 2 * 256 * 256 * d, bytes: 8 * 256 * d, fn: func() { asm.DotMany(xm, cm, d, outm) }},
		{name: "SQ8L2Sq", shape: "d=128", flops: 4 * d, bytes: d, fn: func() { sinkF += asm.SQ8L2Sq(a, code, scale, offset) }},
		{name: "SQ8Dot", shape: "d=128", flops: 3 * d, bytes: d, fn: func() { sinkF += asm.SQ8Dot(a, code, scale, offset) }},
		{name: "L2SqU8", shape: "d=128", flops: 3 * d, bytes: 2 * d, fn: func() { sinkU += asm.L2SqU8(code, code2) }},
		{name: "DotU8", shape: "d=128", flops: 2 * d, bytes: 2 * d, fn: func() { sinkU += asm.DotU8(code, code2) }},
		{name: "ADCScan8", shape: fmt.Sprintf("m=%d n=%d", m8, n8), codes: float64(n8), bytes: float64(n8 * m8), fn: func() { asm.ADCScan8(codes8, m8, lut8, out8) }},
		{name: "FastScan4", shape: fmt.Sprintf("m=%d n=%d queries=1", m4, n4), codes: float64(n4), bytes: float64(len(packed)), fn: func() { asm.FastScan4(packed, nb, m4, luts[:1], outs[:1]) }},
		{name: "FastScan4", shape: fmt.Sprintf("m=%d n=%d queries=4", m4, n4), codes: 4 * float64(n4), bytes: float64(len(packed)), fn: func() { asm.FastScan4(packed, nb, m4, luts, outs) }},
		{name: "SumFloat32", shape: fmt.Sprintf("n=%d", len(sum)), flops: float64(len(sum)), bytes: 4 * float64(len(sum)), fn: func() { sinkF += asm.SumFloat32(sum) }},
	}
	one := func(x float32) []float64 { return []float64{float64(x)} }
	oneU := func(x uint32) []float64 { return []float64{float64(x)} }
	sumAbs := 0.0
	for _, v := range sum {
		sumAbs += math.Abs(float64(v))
	}
	results := map[string]func() []float64{
		"L2Sq":       func() []float64 { return one(asm.L2Sq(a, b)) },
		"Dot":        func() []float64 { return one(asm.Dot(a, b)) },
		"L2SqBatch":  func() []float64 { asm.L2SqBatch(q, x, out); return sampleF(out) },
		"DotBatch":   func() []float64 { asm.DotBatch(q, x, out); return sampleF(out) },
		"L2SqMany":   func() []float64 { asm.L2SqMany(xm, cm, d, outm); return sampleF(outm) },
		"DotMany":    func() []float64 { asm.DotMany(xm, cm, d, outm); return sampleF(outm) },
		"SQ8L2Sq":    func() []float64 { return one(asm.SQ8L2Sq(a, code, scale, offset)) },
		"SQ8Dot":     func() []float64 { return one(asm.SQ8Dot(a, code, scale, offset)) },
		"L2SqU8":     func() []float64 { return oneU(asm.L2SqU8(code, code2)) },
		"DotU8":      func() []float64 { return oneU(asm.DotU8(code, code2)) },
		"ADCScan8":   func() []float64 { asm.ADCScan8(codes8, m8, lut8, out8); return sampleF(out8) },
		"FastScan4":  func() []float64 { asm.FastScan4(packed, nb, m4, luts, outs); return sampleU16(outs[len(outs)-1]) },
		"SumFloat32": func() []float64 { return one(asm.SumFloat32(sum)) },
	}
	for i := range cases {
		c := &cases[i]
		c.result = results[c.name]
		c.relTol, c.scale = 1e-3, 1
		switch c.name {
		case "L2SqU8", "DotU8", "FastScan4":
			c.relTol = 0 // integer kernels: exact
		case "SumFloat32":
			// Summation order differs between levels: allow 1e-5 of Σ|x|.
			c.scale = 1e-2 * sumAbs
		}
	}
	for _, c := range cases {
		generic := 0.0
		var want []float64
		for _, l := range asm.SupportedLevels() {
			if err := ctx.Err(); err != nil {
				return err
			}
			restore, err := asm.SetLevel(l)
			if err != nil {
				return err
			}
			got := c.result()
			ns := timeKernel(c.fn, minTime)
			restore()
			if l == asm.Generic {
				want = got
			} else if want != nil {
				if err := checkKernel(c, l.String(), got, want); err != nil {
					return err
				}
			}
			if l == asm.Generic {
				generic = ns
			}
			p := KernelPoint{Kernel: c.name, Shape: c.shape, Level: l.String(), NsOp: ns}
			sec := ns * 1e-9
			p.GBs = c.bytes / sec / 1e9
			if c.flops > 0 {
				p.GFLOPs = c.flops / sec / 1e9
			}
			if c.codes > 0 {
				p.CodesS = c.codes / sec
			}
			if res.Machine.BandwidthGBs > 0 {
				p.BandwidthFraction = p.GBs / res.Machine.BandwidthGBs
			}
			if generic > 0 {
				p.SpeedupVsGeneric = generic / ns
			}
			cfg.logf("  %-10s %-28s %-8s %12.1f ns/op  %7.2f GB/s  ×%.2f vs generic", c.name, c.shape, p.Level, ns, p.GBs, p.SpeedupVsGeneric)
			res.Kernels = append(res.Kernels, p)
		}
	}
	kernelSink = sinkF + float32(sinkU)
	return nil
}

var kernelSink float32

// timeKernel returns the best ns per call over five runs of at least
// minTime/5 each.
func timeKernel(fn func(), minTime time.Duration) float64 {
	t0 := time.Now()
	fn() // warm up: page in, fill caches
	// Calls per clock read: about 1 ms worth.
	batch := int(time.Millisecond / max(time.Since(t0), time.Nanosecond))
	batch = max(1, min(batch, 1<<16))
	best := 0.0
	for round := 0; round < 5; round++ {
		calls := 0
		t0 := time.Now()
		for time.Since(t0) < minTime/5 {
			for i := 0; i < batch; i++ {
				fn()
			}
			calls += batch
		}
		ns := float64(time.Since(t0).Nanoseconds()) / float64(calls)
		if best == 0 || ns < best {
			best = ns
		}
	}
	return best
}
