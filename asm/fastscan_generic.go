//go:build !((amd64 || arm64) && gc && !noasm && !purego)

package asm

func setFastScanKernels(t *kernels, l Level) {}

// GFNI variants exist only on amd64; see fastscan_amd64.go.
var fs4HasGFNI, fs4UseGFNI = false, false

// The transposed VBMI/VNNI variants exist only on amd64 too.
var fs4HasVBMI, fs4UseVBMI = false, false
