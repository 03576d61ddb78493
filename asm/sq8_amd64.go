//go:build amd64 && gc && !noasm && !purego

package asm

// setSQ8Kernels installs the amd64 SQ8 kernels for level l into t (see
// sq8_amd64.s). The integer kernels use VPDPBUSD when the CPU has AVX-512
// VNNI.
func setSQ8Kernels(t *kernels, l Level) {
	switch l {
	case AVX2:
		t.sq8L2Sq = sq8L2SqAVX2Tail
		t.sq8Dot = sq8DotAVX2Tail
		t.l2SqU8 = l2SqU8AVX2Tail
		t.dotU8 = dotU8AVX2Tail
	case AVX512:
		t.sq8L2Sq = sq8L2SqAVX512
		t.sq8Dot = sq8DotAVX512
		if hasVNNI {
			t.l2SqU8 = l2SqU8VNNI
			t.dotU8 = dotU8VNNI
		} else {
			t.l2SqU8 = l2SqU8AVX512
			t.dotU8 = dotU8AVX512
		}
	}
}

// The AVX2 kernels process whole vectors only; these wrappers finish the
// tail (< 8 floats or < 16 bytes) with the reference.

func sq8L2SqAVX2Tail(q []float32, code []uint8, scale, offset []float32) float32 {
	n := len(q) &^ 7
	s := sq8L2SqAVX2(q[:n], code[:n], scale[:n], offset[:n])
	if n < len(q) {
		s += sq8L2SqRef(q[n:], code[n:], scale[n:], offset[n:])
	}
	return s
}

func sq8DotAVX2Tail(q []float32, code []uint8, scale, offset []float32) float32 {
	n := len(q) &^ 7
	s := sq8DotAVX2(q[:n], code[:n], scale[:n], offset[:n])
	if n < len(q) {
		s += sq8DotRef(q[n:], code[n:], scale[n:], offset[n:])
	}
	return s
}

func l2SqU8AVX2Tail(a, b []uint8) uint32 {
	n := len(a) &^ 15
	return l2SqU8AVX2(a[:n], b[:n]) + l2SqU8Ref(a[n:], b[n:len(a)])
}

func dotU8AVX2Tail(a, b []uint8) uint32 {
	n := len(a) &^ 15
	return dotU8AVX2(a[:n], b[:n]) + dotU8Ref(a[n:], b[n:len(a)])
}

// Float-query kernels: q, code, scale, offset all of length len(q).

//go:noescape
func sq8L2SqAVX2(q []float32, code []uint8, scale, offset []float32) float32

//go:noescape
func sq8DotAVX2(q []float32, code []uint8, scale, offset []float32) float32

//go:noescape
func sq8L2SqAVX512(q []float32, code []uint8, scale, offset []float32) float32

//go:noescape
func sq8DotAVX512(q []float32, code []uint8, scale, offset []float32) float32

// Integer kernels: read len(a) bytes of a and b.

//go:noescape
func l2SqU8AVX2(a, b []uint8) uint32

//go:noescape
func dotU8AVX2(a, b []uint8) uint32

//go:noescape
func l2SqU8AVX512(a, b []uint8) uint32

//go:noescape
func dotU8AVX512(a, b []uint8) uint32

//go:noescape
func l2SqU8VNNI(a, b []uint8) uint32

//go:noescape
func dotU8VNNI(a, b []uint8) uint32
