//go:build !((amd64 || arm64) && gc && !noasm && !purego)

package asm

func setDistanceKernels(t *kernels, l Level) {}

func dotDirect(a, b []float32) float32  { return dotRef(a, b) }
func l2SqDirect(a, b []float32) float32 { return l2SqRef(a, b) }
