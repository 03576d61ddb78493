//go:build !(amd64 && gc && !noasm && !purego)

package asm

func setGatherKernels(t *kernels, l Level) {}
