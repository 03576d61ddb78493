//go:build !unix

package lexical

// processCPU is unavailable off unix: CPU figures are reported as 0.
func processCPU() float64 { return 0 }
