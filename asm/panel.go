package asm

// Packed panels: the base side of a many-to-many inner product laid out
// for broadcast FMAs, as a GEMM packs its B operand.
//
// DotMany reads both operands row-major, so every pair of rows ends in a
// horizontal sum; at d = 100 those sums and the short chunk loop cost a
// quarter of the kernel. With the c rows packed in panels of 8 stored
// coordinate-major (panel[t·8+r] = coordinate t of the panel's row r),
// one coordinate of 24 rows is three vector loads, each x row contributes
// one broadcast, and 4 x rows × 24 c rows accumulate in 12 registers with
// no reduction: 12 FMAs per 7 loads per coordinate, stored straight to
// the output. Packing is done once per c matrix (PackPanels), not per
// call.

// PanelRows is the number of c rows a packed group holds: three panels of
// 8. PackPanels pads the last group with zero rows.
const PanelRows = 24

// PackPanels appends c (m×d row-major, m = len(c)/d) to dst in the layout
// DotPanels reads and returns it: ⌈m/24⌉ groups of three panels, panel q
// of group g holding rows g·24+q·8 … +7 coordinate-major, rows past m
// zero. The result holds ⌈m/24⌉·24·d floats. d ≥ 1.
func PackPanels(dst, c []float32, d int) []float32 {
	m := len(c) / d
	groups := (m + PanelRows - 1) / PanelRows
	at := len(dst)
	dst = append(dst, make([]float32, groups*PanelRows*d)...)
	p := dst[at:]
	for i := 0; i < m; i++ {
		g, q, r := i/PanelRows, (i%PanelRows)/8, i%8
		panel := p[(g*3+q)*8*d:]
		row := c[i*d : (i+1)*d]
		for t, v := range row {
			panel[t*8+r] = v
		}
	}
	return dst
}

// DotPanels writes out[i·ldo+j] = Dot(x_i, c_j) for the n = len(x)/d rows
// of x and the m = len(p)/d rows of a PackPanels matrix p (m a multiple of
// PanelRows; padding rows give 0). ldo ≥ m; len(out) ≥ (n−1)·ldo+m.
// The packed rows are taken in tiles of about 192 KiB, each against every
// x row, as DotMany does. Products are summed in a different order than
// Dot's, so results may differ from it in the last bits. d ≤ 0 does
// nothing; trailing partial rows of x are ignored. It panics when p's rows
// are not a multiple of PanelRows or out is too short (a caller's shape
// error, as a short slice panics in DotMany).
func DotPanels(x, p []float32, d int, out []float32, ldo int) {
	if d <= 0 {
		return
	}
	n, m := len(x)/d, len(p)/d
	if m%PanelRows != 0 {
		panic("asm: DotPanels: packed rows not a multiple of PanelRows")
	}
	if n == 0 || m == 0 {
		return
	}
	if ldo < m || len(out) < (n-1)*ldo+m {
		panic("asm: DotPanels: out too short")
	}
	tile := max(PanelRows, manyTileBytes/(4*d)/PanelRows*PanelRows)
	k4 := panelKernel()
	// With the SIMD kernel, the last n mod 4 x rows run as one 4-row
	// block padded with zero rows, into a scratch output.
	n4 := n
	var xs, os []float32
	if k4 != nil && n%4 != 0 {
		n4 = n &^ 3
		xs = make([]float32, 4*d)
		copy(xs, x[n4*d:n*d])
		os = make([]float32, 4*tile)
	}
	for j0 := 0; j0 < m; j0 += tile {
		j1 := min(m, j0+tile)
		pt := p[j0*d : j1*d]
		if k4 == nil {
			for i := 0; i < n; i++ {
				dotPanelsRow(x[i*d:(i+1)*d], pt, d, out[i*ldo+j0:i*ldo+j1])
			}
			continue
		}
		for i := 0; i < n4; i += 4 {
			k4(x[i*d:(i+4)*d], pt, d, j1-j0, out[i*ldo+j0:], ldo)
		}
		if xs != nil {
			k4(xs, pt, d, j1-j0, os, tile)
			for i := n4; i < n; i++ {
				copy(out[i*ldo+j0:i*ldo+j1], os[(i-n4)*tile:])
			}
		}
	}
}

// dotPanelsRow is the reference for one x row: out[j] = Dot(x, c_j) over
// the packed rows of p.
func dotPanelsRow(x, p []float32, d int, out []float32) {
	for g := 0; g*PanelRows < len(out); g++ {
		for q := 0; q < 3; q++ {
			panel := p[(g*3+q)*8*d:]
			var acc [8]float32
			for t, v := range x {
				for r := range acc {
					acc[r] += v * panel[t*8+r]
				}
			}
			copy(out[g*PanelRows+q*8:], acc[:])
		}
	}
}
