//go:build arm64 && gc && !noasm && !purego

package asm

// setSQ8Kernels installs the NEON SQ8 kernels into t (see sq8_arm64.s);
// the integer kernels use UDOT when the CPU has the dot-product extension.
func setSQ8Kernels(t *kernels, l Level) {
	if l != NEON {
		return
	}
	t.sq8L2Sq = sq8L2SqNEONTail
	t.sq8Dot = sq8DotNEONTail
	if hasDotProd {
		t.l2SqU8 = func(a, b []uint8) uint32 { return u8Tail(l2SqU8UDOT, l2SqU8Ref, a, b) }
		t.dotU8 = func(a, b []uint8) uint32 { return u8Tail(dotU8UDOT, dotU8Ref, a, b) }
	} else {
		t.l2SqU8 = func(a, b []uint8) uint32 { return u8Tail(l2SqU8NEON, l2SqU8Ref, a, b) }
		t.dotU8 = func(a, b []uint8) uint32 { return u8Tail(dotU8NEON, dotU8Ref, a, b) }
	}
}

// The kernels process whole vectors only (8 floats, 16 bytes); these
// wrappers finish the tail with the reference.

func sq8L2SqNEONTail(q []float32, code []uint8, scale, offset []float32) float32 {
	n := len(q) &^ 7
	s := sq8L2SqNEON(q[:n], code[:n], scale[:n], offset[:n])
	if n < len(q) {
		s += sq8L2SqRef(q[n:], code[n:], scale[n:], offset[n:])
	}
	return s
}

func sq8DotNEONTail(q []float32, code []uint8, scale, offset []float32) float32 {
	n := len(q) &^ 7
	s := sq8DotNEON(q[:n], code[:n], scale[:n], offset[:n])
	if n < len(q) {
		s += sq8DotRef(q[n:], code[n:], scale[n:], offset[n:])
	}
	return s
}

func u8Tail(kern, ref func(a, b []uint8) uint32, a, b []uint8) uint32 {
	n := len(a) &^ 15
	return kern(a[:n], b[:n]) + ref(a[n:], b[n:len(a)])
}

//go:noescape
func sq8L2SqNEON(q []float32, code []uint8, scale, offset []float32) float32

//go:noescape
func sq8DotNEON(q []float32, code []uint8, scale, offset []float32) float32

// Integer kernels: read len(a) bytes of a and b; len(a) % 16 == 0.

//go:noescape
func dotU8NEON(a, b []uint8) uint32

//go:noescape
func l2SqU8NEON(a, b []uint8) uint32

//go:noescape
func dotU8UDOT(a, b []uint8) uint32

//go:noescape
func l2SqU8UDOT(a, b []uint8) uint32
