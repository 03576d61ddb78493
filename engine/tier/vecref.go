package tier

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/stratasearch/strata/engine/hnsw"
)

// Vectors by reference (segment format versions 4 and 5). An HNSW
// segment holds every vector in its hnsw section already (normalised for
// Cosine), so its doc store does not repeat them: each row's upsert body
// is written with no vector (vector count 0), followed by the vector
// reference
//
//	uvarint n (0: no vector, else the dimension) and, when n > 0:
//	  Cosine only: version 4: norm float64 bits u64 (√Σ x_i², summed in
//	    float64); version 5: a norm code u8, then nothing (0: the norm
//	    is taken as 1), float32 bits u32 (1) or float64 bits u64 (2)
//	  uvarint e | e × { uvarint component i (ascending) | float32 bits u32 }
//
// A version 5 writer picks the code whose bytes, exceptions included,
// are fewest (unit vectors such as the normalised GloVe set need no
// norm and no exception; USE-Lite vectors, whose norms are only near 1,
// keep the float64 bits).
//
// The vector of the r-th row that has one is rebuilt from the HNSW
// section's vector u of id r: x_i = float32(float64(u_i) · norm) for
// Cosine, x_i = u_i otherwise, and then the e exceptions (components
// where that differs from the written bits) set bit for bit. The
// rebuilt vectors are therefore exactly the ones written; on USE-Lite
// 512-d vectors 1 component in 5.85 million is an exception.

// vecRefEncoder writes version 4 doc-store rows against ix, whose id r is
// the r-th row with a vector.
type vecRefEncoder struct {
	ix     *hnsw.Index
	metric Metric
	next   uint32    // HNSW id of the next row with a vector
	u      []float32 // scratch: the HNSW copy
}

// appendRow appends d's upsert body without its vector, then its vector
// reference (format version 4).
func (e *vecRefEncoder) appendRow(dst []byte, d *Document) ([]byte, error) {
	body := *d
	body.Vector = nil
	dst = appendDocBody(dst, &body, d.UpdatedUnixNano)
	return e.appendRef(dst, d.Vector, false)
}

// Norm codes of a format version 5 vector reference (Cosine).
const (
	normOne = 0 // the norm is 1: nothing follows
	norm32  = 1 // float32 bits u32 follow
	norm64  = 2 // float64 bits u64 follow
)

// appendRef appends the vector reference of vec (nil: no vector). With
// compact (format version 5) a Cosine norm is written as the shortest of
// 1, its float32 rounding and its float64 bits that costs no more bytes
// with its exceptions than the float64 bits do.
func (e *vecRefEncoder) appendRef(dst []byte, vec []float32, compact bool) ([]byte, error) {
	if vec == nil {
		return binary.AppendUvarint(dst, 0), nil
	}
	u, err := e.ix.Vector(e.u[:0], e.next)
	if err != nil || len(u) != len(vec) {
		return nil, fmt.Errorf("tier: segment hnsw: vector %d: %v (%d of %d values)", e.next, err, len(u), len(vec))
	}
	e.next++
	dst = binary.AppendUvarint(dst, uint64(len(vec)))
	norm := 1.0
	if e.metric == Cosine {
		var s float64
		for _, x := range vec {
			s += float64(x) * float64(x)
		}
		norm = math.Sqrt(s)
		if !compact {
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(norm))
		} else {
			// An exception costs at most 5 bytes more than none: a
			// component index (≤ 2 bytes at the dimensions used) and the
			// float32 bits.
			code, best := norm64, 8+5*refExceptions(vec, u, norm, e.metric)
			if c := 4 + 5*refExceptions(vec, u, float64(float32(norm)), e.metric); c <= best {
				code, best = norm32, c
			}
			if c := 5 * refExceptions(vec, u, 1, e.metric); c <= best {
				code = normOne
			}
			dst = append(dst, byte(code))
			switch code {
			case normOne:
				norm = 1
			case norm32:
				norm = float64(float32(norm))
				dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(norm)))
			default:
				dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(norm))
			}
		}
	}
	dst = binary.AppendUvarint(dst, uint64(refExceptions(vec, u, norm, e.metric)))
	for i, x := range vec {
		if math.Float32bits(x) != math.Float32bits(vecRefValue(u[i], norm, e.metric)) {
			dst = binary.AppendUvarint(dst, uint64(i))
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
		}
	}
	return dst, nil
}

// refExceptions counts the components of vec that u and norm do not
// rebuild bit for bit.
func refExceptions(vec, u []float32, norm float64, m Metric) int {
	n := 0
	for i, x := range vec {
		if math.Float32bits(x) != math.Float32bits(vecRefValue(u[i], norm, m)) {
			n++
		}
	}
	return n
}

// vecRefValue is component u of the HNSW copy mapped back (before
// exceptions).
func vecRefValue(u float32, norm float64, m Metric) float32 {
	if m == Cosine {
		return float32(float64(u) * norm)
	}
	return u
}

// vecRef is one decoded vector reference: the norm and the exceptions
// exc[from:to] of refExc.
type vecRef struct {
	norm     float64
	from, to int
}

// refExc is one exception: component i has bits.
type refExc struct {
	i    uint32
	bits uint32
}

// vectorRef reads a vector reference (dim: the store's dimension); ok is
// false for a row without a vector. Exceptions are appended to *exc.
// Malformed input (another dimension, a component out of range or out of
// order, more exceptions than components, a norm that is negative or not
// finite) fails d.
func (d *decoder) vectorRef(dim int, m Metric, compact bool, exc *[]refExc) (ref vecRef, ok bool) {
	n := d.uvarint("vector reference")
	if d.err != nil || n == 0 {
		return ref, false
	}
	if n != uint64(dim) {
		d.fail(fmt.Sprintf("vector reference of %d dimensions, want %d", n, dim))
		return ref, false
	}
	ref.norm = 1
	if m == Cosine {
		code := byte(norm64)
		if compact {
			code = d.byte1("vector norm code")
		}
		switch code {
		case normOne:
		case norm32:
			if b := d.bytes(4, "vector norm"); b != nil {
				ref.norm = float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
			}
		case norm64:
			if b := d.bytes(8, "vector norm"); b != nil {
				ref.norm = math.Float64frombits(binary.LittleEndian.Uint64(b))
			}
		default:
			d.fail(fmt.Sprintf("vector norm code %d", code))
		}
		if d.err != nil {
			return ref, false
		}
		if !(ref.norm >= 0) || math.IsInf(ref.norm, 0) {
			d.fail("vector norm is negative or not finite")
			return ref, false
		}
	}
	ne := d.uvarint("vector exceptions")
	if d.err != nil {
		return ref, false
	}
	if ne > n {
		d.fail("more vector exceptions than components")
		return ref, false
	}
	ref.from = len(*exc)
	prev := -1
	for range ne {
		i := d.uvarint("exception component")
		b := d.bytes(4, "exception value")
		if d.err != nil {
			return ref, false
		}
		if i >= n || int(i) <= prev {
			d.fail("vector exception component out of range or order")
			return ref, false
		}
		prev = int(i)
		*exc = append(*exc, refExc{uint32(i), binary.LittleEndian.Uint32(b)})
	}
	ref.to = len(*exc)
	return ref, true
}

// rebuild sets v (len dim) to the vector of ref from u, the HNSW copy.
func (ref vecRef) rebuild(v, u []float32, m Metric, exc []refExc) {
	for i, x := range u {
		v[i] = vecRefValue(x, ref.norm, m)
	}
	for _, e := range exc[ref.from:ref.to] {
		v[e.i] = math.Float32frombits(e.bits)
	}
}
