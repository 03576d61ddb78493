//go:build !(amd64 && gc && !noasm && !purego)

package asm

func setManyKernels(t *kernels, l Level) {}
