//go:build !((amd64 || arm64) && gc && !noasm && !purego)

package asm

func setADCKernels(t *kernels, l Level) {}
