package base

import (
	"fmt"
	"math"
	"strings"
)

// Metric names the vector distance an index ranks by.
//
// The numeric values are persisted: engine/hnsw and engine/ivfpq write
// them as a uint32 in their file headers and engine/tier as one byte in a
// warm segment's meta section. They must never change.
type Metric uint32

const (
	// L2 is squared Euclidean distance Σ (a[i]−b[i])².
	L2 Metric = 1
	// IP is inner product ⟨a,b⟩ (larger is closer; each index states the
	// distance it reports for it).
	IP Metric = 2
	// Cosine is inner product of the vectors normalised to unit length
	// (UnitVector), i.e. cos(a,b).
	Cosine Metric = 3
)

// String returns "l2", "ip" or "cosine" (the spelling ParseMetric reads).
func (m Metric) String() string {
	switch m {
	case L2:
		return "l2"
	case IP:
		return "ip"
	case Cosine:
		return "cosine"
	}
	return fmt.Sprintf("Metric(%d)", uint32(m))
}

// Valid reports whether m is L2, IP or Cosine.
func (m Metric) Valid() bool { return m >= L2 && m <= Cosine }

// ParseMetric maps "l2", "ip" and "cosine" (any case) to their Metric.
func ParseMetric(s string) (Metric, error) {
	switch strings.ToLower(s) {
	case "l2":
		return L2, nil
	case "ip":
		return IP, nil
	case "cosine":
		return Cosine, nil
	}
	return 0, fmt.Errorf("unknown metric %q (want l2, ip or cosine)", s)
}

// UnitVector writes v/‖v‖ into dst and returns dst[:len(v)]; a zero
// vector gives zeros. The norm is accumulated in float64 and each
// component scaled in float64 before rounding, so the result does not
// depend on the CPU's SIMD level. dst must have len(dst) ≥ len(v) and may
// be v itself (in place). A nil dst allocates.
func UnitVector(dst, v []float32) []float32 {
	if dst == nil {
		dst = make([]float32, len(v))
	}
	dst = dst[:len(v)]
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		clear(dst)
		return dst
	}
	inv := 1 / math.Sqrt(s)
	for i, x := range v {
		dst[i] = float32(float64(x) * inv)
	}
	return dst
}
