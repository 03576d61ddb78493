//go:build !unix

package bench

// processCPU is unavailable here: CPU-time figures are 0 and CPU ratios are
// not computed.
func processCPU() float64 { return 0 }
