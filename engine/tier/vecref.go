package tier

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/stratasearch/strata/engine/hnsw"
)

// Vectors by reference (segment format version 4). An HNSW segment holds
// every vector in its hnsw section already (normalised for Cosine), so
// its doc store does not repeat them: each row's upsert body is written
// with no vector (vector count 0), followed by the vector reference
//
//	uvarint n (0: no vector, else the dimension) and, when n > 0:
//	  Cosine only: norm float64 bits u64 (√Σ x_i², summed in float64)
//	  uvarint e | e × { uvarint component i (ascending) | float32 bits u32 }
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
// reference.
func (e *vecRefEncoder) appendRow(dst []byte, d *Document) ([]byte, error) {
	body := *d
	body.Vector = nil
	dst = appendDocBody(dst, &body, d.UpdatedUnixNano)
	if d.Vector == nil {
		return binary.AppendUvarint(dst, 0), nil
	}
	u, err := e.ix.Vector(e.u[:0], e.next)
	if err != nil || len(u) != len(d.Vector) {
		return nil, fmt.Errorf("tier: segment hnsw: vector %d: %v (%d of %d values)", e.next, err, len(u), len(d.Vector))
	}
	e.next++
	dst = binary.AppendUvarint(dst, uint64(len(d.Vector)))
	norm := 1.0
	if e.metric == Cosine {
		var s float64
		for _, x := range d.Vector {
			s += float64(x) * float64(x)
		}
		norm = math.Sqrt(s)
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(norm))
	}
	ne := 0
	for i, x := range d.Vector {
		if math.Float32bits(x) != math.Float32bits(vecRefValue(u[i], norm, e.metric)) {
			ne++
		}
	}
	dst = binary.AppendUvarint(dst, uint64(ne))
	for i, x := range d.Vector {
		if math.Float32bits(x) != math.Float32bits(vecRefValue(u[i], norm, e.metric)) {
			dst = binary.AppendUvarint(dst, uint64(i))
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
		}
	}
	return dst, nil
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
func (d *decoder) vectorRef(dim int, m Metric, exc *[]refExc) (ref vecRef, ok bool) {
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
		b := d.bytes(8, "vector norm")
		if b == nil {
			return ref, false
		}
		ref.norm = math.Float64frombits(binary.LittleEndian.Uint64(b))
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
