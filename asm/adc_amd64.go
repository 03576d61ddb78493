//go:build amd64 && gc && !noasm && !purego

package asm

// setADCKernels installs the amd64 8-bit ADC kernel for level l into t.
//
// Both AVX levels use the scalar four-row kernel adc8Scalar4. The gather
// kernels (adc8AVX2, adc8AVX512; see adc_amd64.s) are kept, tested and
// benchmarked as alternatives, but on the machine we measured (AMD EPYC,
// Zen 4 class, min-of-300 timings, n = 4096 codes) they are not faster:
//
//	m    generic  gather AVX2  gather AVX-512  scalar4
//	8    13.0 µs  13.4 µs      11.0 µs         5.6 µs
//	16   22.7 µs  25.2 µs      20.9 µs         10.9 µs
//	64   82.4 µs  103 µs       87.4 µs         45.2 µs
//
// A gather costs about as much as its 16 (8) scalar loads there, and the
// gather scheme spends one extra gather per 4 sub-quantizers on the codes.
// CPUs with faster gathers may favour them; BenchmarkADC8Variants measures.
func setADCKernels(t *kernels, l Level) {
	switch l {
	case AVX2, AVX512:
		t.adc8 = adc8ScalarGo
	}
}

func adc8AVX512Go(codes []uint8, m int, lut []float32, out []float32) {
	m4 := m &^ 3
	if m4 == 0 {
		adc8Ref(codes, m, lut, out)
		return
	}
	adc8AVX512(codes, m, m4, lut, out)
	adc8AddTail(codes, m, m4, lut, out)
}

func adc8AVX2Go(codes []uint8, m int, lut []float32, out []float32) {
	m4 := m &^ 3
	if m4 == 0 {
		adc8Ref(codes, m, lut, out)
		return
	}
	n8 := len(out) &^ 7
	adc8AVX2(codes, m, m4, lut, out[:n8])
	adc8AddTail(codes, m, m4, lut, out[:n8])
	if n8 < len(out) {
		adc8Ref(codes[n8*m:], m, lut, out[n8:])
	}
}

// adc8AddTail adds sub-quantizers [m4, m) to out, which holds the sums over
// [0, m4).
func adc8AddTail(codes []uint8, m, m4 int, lut []float32, out []float32) {
	if m4 == m {
		return
	}
	for i := range out {
		c := codes[i*m : i*m+m]
		s := out[i]
		for j := m4; j < m; j++ {
			s += lut[j*256+int(c[j])]
		}
		out[i] = s
	}
}

// adc8AVX512 and adc8AVX2 sum sub-quantizers [0, m4) for len(out) rows of
// codes (row stride m bytes); m4 ≥ 4 and a multiple of 4. adc8AVX2 needs
// len(out) % 8 == 0.
//
//go:noescape
func adc8AVX512(codes []uint8, m, m4 int, lut []float32, out []float32)

//go:noescape
func adc8AVX2(codes []uint8, m, m4 int, lut []float32, out []float32)

// adc8Scalar4 is the scalar four-row kernel over sub-quantizers
// [0, m &^ 1) (row stride m); m ≥ 2, len(out) % 4 == 0.
//
//go:noescape
func adc8Scalar4(codes []uint8, m int, lut []float32, out []float32)

// adc8ScalarGo runs adc8Scalar4 on the even part of m and whole groups of
// four rows, then finishes the odd sub-quantizer and the leftover rows.
func adc8ScalarGo(codes []uint8, m int, lut []float32, out []float32) {
	m2 := m &^ 1
	n4 := len(out) &^ 3
	if m2 == 0 || n4 == 0 {
		adc8Ref(codes, m, lut, out)
		return
	}
	adc8Scalar4(codes, m, lut, out[:n4])
	adc8AddTail(codes, m, m2, lut, out[:n4])
	if n4 < len(out) {
		adc8Ref(codes[n4*m:], m, lut, out[n4:])
	}
}
