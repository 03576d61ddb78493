//go:build amd64 && gc && !noasm && !purego

package asm

import (
	"slices"
	"testing"
)

// ktADCVariants lists the ADC kernels that dispatch does not pick but that
// this CPU can run: the gather kernels.
func ktADCVariants() []ktADCVariant {
	var v []ktADCVariant
	if slices.Contains(SupportedLevels(), AVX2) {
		v = append(v, ktADCVariant{"gather-avx2", adc8AVX2Go})
	}
	if slices.Contains(SupportedLevels(), AVX512) {
		v = append(v, ktADCVariant{"gather-avx512", adc8AVX512Go})
	}
	return v
}

// BenchmarkADC8Variants times the gather kernels next to the dispatched
// scalar kernel (BenchmarkADC8 level=avx2/avx512).
func BenchmarkADC8Variants(b *testing.B) {
	benchADC(b, ktADCVariants())
}
