package ivfpq

import "math"

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
	// Min and max on order-preserving integer keys of the floats (finite:
	// queries and centroids are checked): integer min/max compile to
	// conditional moves, where float comparisons branch unpredictably on
	// random LUT entries and the float min/max builtins pay for NaN rules.
	for j := 0; j < m; j++ {
		t := lut[j*16 : j*16+16 : j*16+16]
		klo := floatKey(t[0])
		khi := klo
		for _, v := range t[1:] {
			kv := floatKey(v)
			klo, khi = min(klo, kv), max(khi, kv)
		}
		lo, hi := keyFloat(klo), keyFloat(khi)
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

// floatKey maps a finite float32 to an int32 with the same order (−0
// below +0); keyFloat is its inverse.
func floatKey(v float32) int32 {
	i := int32(math.Float32bits(v))
	return i ^ int32(uint32(i>>31)>>1)
}

func keyFloat(k int32) float32 { return math.Float32frombits(uint32(k ^ int32(uint32(k>>31)>>1))) }
