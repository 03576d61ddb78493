package asm

import (
	"fmt"
	"os"
	"sync"
)

// Level is a SIMD dispatch level.
type Level int

const (
	// Generic is the pure-Go path, available everywhere.
	Generic Level = iota
	// AVX2 requires AVX2 and FMA (amd64).
	AVX2
	// AVX512 requires AVX-512 F, BW, DQ and VL (amd64).
	AVX512
	// NEON is the arm64 Advanced SIMD path.
	NEON
)

func (l Level) String() string {
	switch l {
	case Generic:
		return "generic"
	case AVX2:
		return "avx2"
	case AVX512:
		return "avx512"
	case NEON:
		return "neon"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// kernels is the dispatch table. Every field is non-nil after setLevel,
// except the optional dotGatherChk / l2SqGatherChk.
// Shapes are documented on the exported wrappers in the per-kernel files.
type kernels struct {
	l2Sq       func(a, b []float32) float32
	dot        func(a, b []float32) float32
	l2SqBatch  func(q, x, out []float32)
	dotBatch   func(q, x, out []float32)
	l2SqMany   func(x, c []float32, d int, out []float32)
	dotMany    func(x, c []float32, d int, out []float32)
	adc8       func(codes []uint8, m int, lut []float32, out []float32)
	fastScan4  func(packed []uint8, nblocks, m int, luts [][]uint8, out [][]uint16)
	sq8L2Sq    func(q []float32, code []uint8, scale, offset []float32) float32
	sq8Dot     func(q []float32, code []uint8, scale, offset []float32) float32
	l2SqU8     func(a, b []uint8) uint32
	dotU8      func(a, b []uint8) uint32
	sumFloat32 func(x []float32) float32
	dotGather  func(q, x []float32, ids []uint32, out []float32)
	l2SqGather func(q, x []float32, ids []uint32, out []float32)
	// dotGatherChk / l2SqGatherChk, when non-nil (AVX-512 only), are
	// gather kernels that bound-check the ids themselves (no separate
	// pass, see DotGather); they are nil at the other levels.
	dotGatherChk  func(q, x []float32, ids []uint32, out []float32) int
	l2SqGatherChk func(q, x []float32, ids []uint32, out []float32) int
	nearestL2T    func(x []float32, d, ldx int, cT, cnorm []float32, assign []int32, val []float32)
	dotT          func(x, cT, base []float32, alpha float32, out []float32)
	addF32        func(dst, a, b []float32)
	argminAff     func(x []float32, base []float32, alpha float32, idx []int32, val []float32)
	indexAbove    func(x []float32, t float32) int
	indexBelowU16 func(x []uint16, t uint16) int
}

var (
	mu       sync.Mutex
	k        kernels
	current  Level
	detected []Level
)

func init() {
	detected = capLevels(detectLevels(), os.Getenv("STRATA_ASM_MAX_LEVEL"))
	setLevel(detected[len(detected)-1])
}

// capLevels drops the levels above max (a Level name: "generic", "avx2",
// "avx512", "neon"), as STRATA_ASM_MAX_LEVEL asks; "" or an unknown name
// keeps every detected level. It lets an AVX-512 host run exactly as an
// AVX2-only host dispatches (FAISS's FAISS_OPT_LEVEL and NumPy's
// NPY_DISABLE_CPU_FEATURES serve the same purpose).
func capLevels(ls []Level, max string) []Level {
	if max == "" {
		return ls
	}
	for i, l := range ls {
		if l.String() == max {
			return ls[:i+1]
		}
	}
	return ls
}

func setLevel(l Level) {
	var t kernels
	setGenericKernels(&t)
	// Called for Generic too: it also resets the amd64 single-pair level
	// (pairLevel) that Dot and L2Sq dispatch on.
	setDistanceKernels(&t, l)
	if l != Generic {
		setADCKernels(&t, l)
		setFastScanKernels(&t, l)
		setSQ8Kernels(&t, l)
		t.dotGather = gatherVia(t.dot)
		t.l2SqGather = gatherVia(t.l2Sq)
		setGatherKernels(&t, l)
		setManyKernels(&t, l)
	}
	k = t
	current = l
}

// CurrentLevel reports the dispatch level in use.
func CurrentLevel() Level { return current }

// SupportedLevels lists every level this CPU and build can run, lowest first.
// Generic is always first.
func SupportedLevels() []Level { return append([]Level(nil), detected...) }

// SetLevel forces a dispatch level, for tests and benchmarks, and returns a
// function that restores the previous level. It returns an error if the CPU
// or build cannot run l. It is not safe to call concurrently with kernels.
func SetLevel(l Level) (restore func(), err error) {
	ok := false
	for _, d := range detected {
		if d == l {
			ok = true
		}
	}
	if !ok {
		return func() {}, fmt.Errorf("asm: level %v not supported on this CPU/build (supported: %v)", l, detected)
	}
	mu.Lock()
	defer mu.Unlock()
	prev := current
	setLevel(l)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		setLevel(prev)
	}, nil
}

func setGenericKernels(t *kernels) {
	t.l2Sq = l2SqRef
	t.dot = dotRef
	t.l2SqBatch = l2SqBatchRef
	t.dotBatch = dotBatchRef
	t.l2SqMany = l2SqManyBatch
	t.dotMany = dotManyBatch
	t.adc8 = adc8Ref
	t.fastScan4 = fastScan4Ref
	t.sq8L2Sq = sq8L2SqRef
	t.sq8Dot = sq8DotRef
	t.l2SqU8 = l2SqU8Ref
	t.dotU8 = dotU8Ref
	t.sumFloat32 = sumFloat32Ref
	t.dotGather = dotGatherRef
	t.l2SqGather = l2SqGatherRef
	t.nearestL2T = nearestL2TRef
	t.dotT = dotTRef
	t.addF32 = addF32Ref
	t.argminAff = argminAffineRef
	t.indexAbove = indexAboveRef
	t.indexBelowU16 = indexBelowU16Ref
}
