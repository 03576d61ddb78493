//go:build arm64 && gc && !noasm && !purego

package asm

// ktU8Variants lists the NEON integer kernels besides the dispatched one:
// the UMULL/UADALP kernels always, the UDOT kernels when the CPU has them.
func ktU8Variants() []ktU8Variant {
	v := []ktU8Variant{{"neon-umull",
		func(a, b []uint8) uint32 { return u8Tail(l2SqU8NEON, l2SqU8Ref, a, b) },
		func(a, b []uint8) uint32 { return u8Tail(dotU8NEON, dotU8Ref, a, b) }}}
	if hasDotProd {
		v = append(v, ktU8Variant{"neon-udot",
			func(a, b []uint8) uint32 { return u8Tail(l2SqU8UDOT, l2SqU8Ref, a, b) },
			func(a, b []uint8) uint32 { return u8Tail(dotU8UDOT, dotU8Ref, a, b) }})
	}
	return v
}
