//go:build amd64 && gc && !noasm && !purego

package asm

import "github.com/klauspost/cpuid/v2"

func detectLevels() []Level {
	ls := []Level{Generic}
	if cpuid.CPU.Supports(cpuid.AVX2, cpuid.FMA3) {
		ls = append(ls, AVX2)
		if cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512DQ, cpuid.AVX512VL) {
			ls = append(ls, AVX512)
		}
	}
	return ls
}

// hasVNNI reports AVX-512 VNNI (VPDPBUSD), used by the SQ8 integer kernels.
var hasVNNI = cpuid.CPU.Supports(cpuid.AVX512VNNI)
