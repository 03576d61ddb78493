//go:build arm64 && gc && !noasm && !purego

package asm

import "github.com/klauspost/cpuid/v2"

// Advanced SIMD (NEON) is mandatory on ARMv8-A, so it is always offered.
func detectLevels() []Level { return []Level{Generic, NEON} }

// hasDotProd reports the ARMv8.2 dot-product extension (UDOT/SDOT).
var hasDotProd = cpuid.CPU.Supports(cpuid.ASIMDDP)
