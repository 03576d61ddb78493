//go:build !(amd64 && gc && !noasm && !purego)

package asm

// panelKernel is nil here: DotPanels runs its generic path.
func panelKernel() func(x, p []float32, d, mc int, out []float32, ldo int) {
	return nil
}
