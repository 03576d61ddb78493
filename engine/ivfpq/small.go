package ivfpq

import (
	"math"

	"github.com/stratasearch/strata/asm"
)

// smallDim is the largest dimension for which dotBatch uses the Go loops
// below instead of asm.DotBatch: for PQ sub-vectors (typically 2–16
// floats) the per-row setup of the SIMD kernel costs more than the
// arithmetic (measured 1.5 µs vs 0.47 µs for 256 rows of d = 8).
const smallDim = 16

// dotBatch computes out[i] = ⟨x, c[i·d:(i+1)·d]⟩ for i < len(out), d = len(x).
func dotBatch(x, c, out []float32) {
	d := len(x)
	if d > smallDim {
		asm.DotBatch(x, c, out)
		return
	}
	c = c[:len(out)*d]
	switch d {
	case 1:
		x0 := x[0]
		for i := range out {
			out[i] = x0 * c[i]
		}
	case 2:
		x0, x1 := x[0], x[1]
		for i := range out {
			r := c[2*i : 2*i+2 : 2*i+2]
			out[i] = x0*r[0] + x1*r[1]
		}
	case 4:
		x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
		for i := range out {
			r := c[4*i : 4*i+4 : 4*i+4]
			out[i] = (x0*r[0] + x1*r[1]) + (x2*r[2] + x3*r[3])
		}
	case 8:
		x0, x1, x2, x3, x4, x5, x6, x7 := x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
		for i := range out {
			r := c[8*i : 8*i+8 : 8*i+8]
			out[i] = ((x0*r[0] + x1*r[1]) + (x2*r[2] + x3*r[3])) + ((x4*r[4] + x5*r[5]) + (x6*r[6] + x7*r[7]))
		}
	default:
		for i := range out {
			r := c[i*d : (i+1)*d : (i+1)*d]
			var s0, s1 float32
			j := 0
			for ; j+2 <= d; j += 2 {
				s0 += x[j] * r[j]
				s1 += x[j+1] * r[j+1]
			}
			if j < d {
				s0 += x[j] * r[j]
			}
			out[i] = s0 + s1
		}
	}
}

// rowNorms returns ‖c_i‖² for the n = len(c)/d rows of c.
func rowNorms(c []float32, d int) []float32 {
	out := make([]float32, len(c)/d)
	for i := range out {
		r := c[i*d : (i+1)*d]
		var s float32
		for _, v := range r {
			s += v * v
		}
		out[i] = s
	}
	return out
}

// argminSmall returns the c < k minimising cnorm[c] − 2⟨x, cent_c⟩ (ties:
// lowest c) and that value, for d = len(x) ≤ smallDim. It fuses the dot
// products and the comparison so no intermediate row is written.
func argminSmall(x, cent, cnorm []float32, k int) (int32, float32) {
	d := len(x)
	cent = cent[:k*d]
	cnorm = cnorm[:k]
	best, bd := int32(0), float32(math.Inf(1))
	switch d {
	case 4:
		x0, x1, x2, x3 := 2*x[0], 2*x[1], 2*x[2], 2*x[3]
		for c := range cnorm {
			r := cent[4*c : 4*c+4 : 4*c+4]
			v := cnorm[c] - ((x0*r[0] + x1*r[1]) + (x2*r[2] + x3*r[3]))
			if v < bd {
				best, bd = int32(c), v
			}
		}
	case 8:
		x0, x1, x2, x3, x4, x5, x6, x7 := 2*x[0], 2*x[1], 2*x[2], 2*x[3], 2*x[4], 2*x[5], 2*x[6], 2*x[7]
		for c := range cnorm {
			r := cent[8*c : 8*c+8 : 8*c+8]
			v := cnorm[c] - (((x0*r[0] + x1*r[1]) + (x2*r[2] + x3*r[3])) + ((x4*r[4] + x5*r[5]) + (x6*r[6] + x7*r[7])))
			if v < bd {
				best, bd = int32(c), v
			}
		}
	default:
		for c := range cnorm {
			r := cent[c*d : (c+1)*d : (c+1)*d]
			var s float32
			for j, xv := range x {
				s += xv * r[j]
			}
			if v := cnorm[c] - 2*s; v < bd {
				best, bd = int32(c), v
			}
		}
	}
	return best, bd
}

// quantizeLUT4 implements asm.QuantizeLUT4's contract (same table layout:
// mpad×16 uint8 into q, Σ_j lut[j][c_j] ≈ bias + Σ_j q[j][c_j] / scale) in
// float32 without allocating (q is caller scratch); it is called once per
// query, or once per probed list for L2 by residual. asm.QuantizeLUT4
// (float64 passes, math.Round, two allocations per call) was 45% of the
// CPU of a 4-bit Vaswani search profile; LUT quantisation is still the
// largest single cost of a 4-bit search at small nprobe. The scale is chosen up
// front so no sum can exceed 65535: a = min(255 / max span,
// (65535 − m) / Σ spans), since Σ_j round(span_j·a) ≤ a·Σ spans + m/2.
// Each entry is off by at most 0.5/a (+ float32 rounding of (v−min)·a),
// so a distance is within m·0.5/a of the float sum. len(q) ≥ mpad·16.
func quantizeLUT4(lut []float32, m int, q []uint8) (scale, bias float32) {
	mpad := (m + 1) &^ 1
	q = q[:mpad*16]
	clear(q[m*16:])
	var maxSpan, sumSpan, sumMin float64
	var minsBuf [256]float32
	mins := minsBuf[:]
	if m > len(mins) {
		mins = make([]float32, m)
	}
	// Plain comparisons: the min/max builtins' NaN handling made this loop
	// 3× slower (LUTs are finite: queries and centroids are checked).
	for j := 0; j < m; j++ {
		t := lut[j*16 : j*16+16 : j*16+16]
		lo, hi := t[0], t[0]
		for _, v := range t[1:] {
			if v < lo {
				lo = v
			}
			if v > hi {
				hi = v
			}
		}
		sumMin += float64(lo)
		span := float64(hi) - float64(lo)
		if span > maxSpan {
			maxSpan = span
		}
		sumSpan += span
		mins[j] = lo
	}
	if maxSpan == 0 {
		clear(q)
		return 1, float32(sumMin)
	}
	a := min(255/maxSpan, (65535-float64(m))/sumSpan)
	af := float32(a)
	for j := 0; j < m; j++ {
		t := lut[j*16 : j*16+16 : j*16+16]
		dst := q[j*16 : j*16+16 : j*16+16]
		lo := mins[j]
		for c, v := range t {
			x := int32((v-lo)*af + 0.5)
			if x > 255 {
				x = 255
			}
			dst[c] = uint8(x)
		}
	}
	return af, float32(sumMin)
}
