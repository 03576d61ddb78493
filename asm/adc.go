package asm

// ADCScan8 computes 8-bit PQ asymmetric distances:
// out[i] = Σ_{j<m} lut[j*256 + codes[i*m+j]] for i in [0, len(out)).
// codes: n×m uint8, row-major, n = len(out); lut: m×256 float32.
func ADCScan8(codes []uint8, m int, lut []float32, out []float32) {
	if len(out) == 0 || m == 0 {
		for i := range out {
			out[i] = 0
		}
		return
	}
	codes = codes[:len(out)*m]
	lut = lut[:m*256]
	k.adc8(codes, m, lut, out)
}

func adc8Ref(codes []uint8, m int, lut []float32, out []float32) {
	for i := range out {
		c := codes[i*m : i*m+m]
		var s0, s1 float32
		j := 0
		for ; j+2 <= m; j += 2 {
			s0 += lut[j*256+int(c[j])]
			s1 += lut[(j+1)*256+int(c[j+1])]
		}
		if j < m {
			s0 += lut[j*256+int(c[j])]
		}
		out[i] = s0 + s1
	}
}
