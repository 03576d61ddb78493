//go:build !((amd64 || arm64) && gc && !noasm && !purego)

package asm

func setSQ8Kernels(t *kernels, l Level) {}
