//go:build amd64 && gc && !noasm && !purego

package asm

// dotPanels4AVX2 is the 4×24 packed-panel kernel (panel_amd64.s): x is
// 4×d row-major, p holds mc packed rows (mc a multiple of PanelRows),
// out[r·ldo+j] is written for r < 4, j < mc.
//
//go:noescape
func dotPanels4AVX2(x, p []float32, d, mc int, out []float32, ldo int)

// panelKernel is the SIMD kernel for 4 x rows against mc packed rows
// (writing out[r·ldo+j] for r < 4, j < mc) at the current level, or nil
// (the generic path).
func panelKernel() func(x, p []float32, d, mc int, out []float32, ldo int) {
	if current == AVX2 || current == AVX512 {
		return dotPanels4AVX2
	}
	return nil
}
