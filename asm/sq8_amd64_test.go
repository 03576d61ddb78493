//go:build amd64 && gc && !noasm && !purego

package asm

import "slices"

// ktU8Variants lists integer SQ8 kernels that dispatch would not pick on
// this CPU but that can still run here, so every path gets tested: the
// AVX-512 BW kernels when the CPU has VNNI (dispatch prefers VNNI).
func ktU8Variants() []ktU8Variant {
	if !slices.Contains(SupportedLevels(), AVX512) {
		return nil
	}
	v := []ktU8Variant{{"avx512bw", l2SqU8AVX512, dotU8AVX512}}
	if hasVNNI {
		v = append(v, ktU8Variant{"avx512vnni", l2SqU8VNNI, dotU8VNNI})
	}
	return v
}
