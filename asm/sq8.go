package asm

import (
	"errors"
	"fmt"
	"math"
)

// SQ8 vectors store each dimension j of a float32 vector as a byte c[j], with
// the decoded value x[j] ≈ offset[j] + scale[j]·c[j].

// SQ8L2Sq returns Σ (q[j] - (offset[j] + scale[j]·code[j]))².
// q, code, scale and offset all have length d.
func SQ8L2Sq(q []float32, code []uint8, scale, offset []float32) float32 {
	d := len(q)
	return k.sq8L2Sq(q, code[:d], scale[:d], offset[:d])
}

// SQ8Dot returns Σ q[j]·(offset[j] + scale[j]·code[j]).
func SQ8Dot(q []float32, code []uint8, scale, offset []float32) float32 {
	d := len(q)
	return k.sq8Dot(q, code[:d], scale[:d], offset[:d])
}

// L2SqU8 returns Σ (a[j]-b[j])² over uint8 codes (a pre-quantised query
// against stored codes with a shared, uniform scale). len(b) ≥ len(a).
func L2SqU8(a, b []uint8) uint32 { return k.l2SqU8(a, b[:len(a)]) }

// DotU8 returns Σ a[j]·b[j] over uint8 codes. len(b) ≥ len(a).
func DotU8(a, b []uint8) uint32 { return k.dotU8(a, b[:len(a)]) }

// TrainSQ8 trains a per-dimension SQ8 quantiser on x, n×d float32 row-major
// (n = len(x)/d ≥ 1). For each dimension j it returns offset[j] = min over
// the column and scale[j] = (max-min)/255, so codes 0 and 255 decode to the
// column's minimum and maximum (the "QT_8bit" min/max training of FAISS's
// ScalarQuantizer). A constant column gets scale 0. Non-finite values are
// ignored; a column with no finite value gets offset 0, scale 0.
// Errors: d ≤ 0, or len(x) not a positive multiple of d.
func TrainSQ8(x []float32, d int) (scale, offset []float32, err error) {
	if d <= 0 || len(x) == 0 || len(x)%d != 0 {
		return nil, nil, fmt.Errorf("asm: TrainSQ8: len(x)=%d is not a positive multiple of d=%d", len(x), d)
	}
	lo := make([]float32, d)
	hi := make([]float32, d)
	for j := range lo {
		lo[j] = float32(math.Inf(1))
		hi[j] = float32(math.Inf(-1))
	}
	for i := 0; i+d <= len(x); i += d {
		row := x[i : i+d]
		for j, v := range row {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				continue
			}
			lo[j] = min(lo[j], v)
			hi[j] = max(hi[j], v)
		}
	}
	scale = make([]float32, d)
	offset = make([]float32, d)
	for j := range lo {
		if lo[j] > hi[j] { // no finite value
			continue
		}
		offset[j] = lo[j]
		scale[j] = float32((float64(hi[j]) - float64(lo[j])) / 255)
	}
	return scale, offset, nil
}

// errSQ8Shape reports inconsistent SQ8 slice lengths.
var errSQ8Shape = errors.New("asm: SQ8 shape mismatch")

// EncodeSQ8 quantises x, n×d float32 row-major with d = len(scale), into
// dst (n×d bytes): dst[i*d+j] = clamp(round((x[i*d+j]-offset[j])/scale[j]),
// 0, 255); a dimension with scale 0 and NaN inputs encode as 0.
// Errors: len(scale) ≠ len(offset), d = 0, len(x) not a multiple of d, or
// len(dst) < len(x).
func EncodeSQ8(dst []uint8, x []float32, scale, offset []float32) error {
	d := len(scale)
	if d == 0 || len(offset) != d || len(x)%d != 0 || len(dst) < len(x) {
		return fmt.Errorf("%w: len(scale)=%d len(offset)=%d len(x)=%d len(dst)=%d", errSQ8Shape, len(scale), len(offset), len(x), len(dst))
	}
	for i := 0; i+d <= len(x); i += d {
		row, out := x[i:i+d], dst[i:i+d]
		for j, v := range row {
			var c float64
			if scale[j] != 0 {
				c = math.Round((float64(v) - float64(offset[j])) / float64(scale[j]))
			}
			switch {
			case c > 255:
				out[j] = 255
			case c >= 0: // false for NaN
				out[j] = uint8(c)
			default:
				out[j] = 0
			}
		}
	}
	return nil
}

// DecodeSQ8 writes dst[i*d+j] = offset[j] + scale[j]·code[i*d+j] for the
// n×d codes in code (d = len(scale)). Errors as for EncodeSQ8, with
// len(dst) ≥ len(code) required.
func DecodeSQ8(dst []float32, code []uint8, scale, offset []float32) error {
	d := len(scale)
	if d == 0 || len(offset) != d || len(code)%d != 0 || len(dst) < len(code) {
		return fmt.Errorf("%w: len(scale)=%d len(offset)=%d len(code)=%d len(dst)=%d", errSQ8Shape, len(scale), len(offset), len(code), len(dst))
	}
	for i, c := range code {
		j := i % d
		dst[i] = offset[j] + scale[j]*float32(c)
	}
	return nil
}

func sq8L2SqRef(q []float32, code []uint8, scale, offset []float32) float32 {
	var s float32
	for j := range q {
		d := q[j] - (offset[j] + scale[j]*float32(code[j]))
		s += d * d
	}
	return s
}

func sq8DotRef(q []float32, code []uint8, scale, offset []float32) float32 {
	var s float32
	for j := range q {
		s += q[j] * (offset[j] + scale[j]*float32(code[j]))
	}
	return s
}

func l2SqU8Ref(a, b []uint8) uint32 {
	var s uint32
	for j := range a {
		d := int32(a[j]) - int32(b[j])
		s += uint32(d * d)
	}
	return s
}

func dotU8Ref(a, b []uint8) uint32 {
	var s uint32
	for j := range a {
		s += uint32(a[j]) * uint32(b[j])
	}
	return s
}
