//go:build !((amd64 || arm64) && gc && !noasm && !purego)

package asm

func setDistanceKernels(t *kernels, l Level) {}
