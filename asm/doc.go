// Package asm holds Strata's SIMD inner loops and their pure-Go twins.
//
// Every dense search spends its time in a handful of kernels: squared L2 and
// dot product over float32 vectors (one-to-one and batched one-to-many),
// SQ8 distances, 8-bit PQ asymmetric-distance (ADC) scans, and the 4-bit PQ
// "fast-scan" of FAISS / ScaNN. Each kernel exists as
//
//	x_generic.go        pure Go, used when asm is unavailable (build tag noasm or purego,
//	                    or an architecture other than amd64 / arm64)
//	x_amd64.go + .s     AVX2 and AVX-512 (F, BW, DQ, VL) variants
//	x_arm64.go + .s     NEON variant
//
// The reference implementations (ref.go) are compiled on every build; the
// generic dispatch level uses them, and tests compare every other level
// against them.
//
// The dispatch level is chosen once at init from github.com/klauspost/cpuid/v2
// and can be forced by tests with SetLevel. The build constraint for assembly
// is (amd64 || arm64) && gc && !noasm && !purego; the generic files carry
// exactly its negation.
package asm
