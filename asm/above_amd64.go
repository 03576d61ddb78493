//go:build amd64 && gc && !noasm && !purego

package asm

//go:noescape
func indexAboveAVX2(x []float32, t float32) int

//go:noescape
func indexAboveAVX512(x []float32, t float32) int

//go:noescape
func indexBelowU16AVX2(x []uint16, t uint16) int

//go:noescape
func indexBelowU16AVX512(x []uint16, t uint16) int
