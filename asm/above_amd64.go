//go:build amd64 && gc && !noasm && !purego

package asm

//go:noescape
func indexAboveAVX2(x []float32, t float32) int

//go:noescape
func indexAboveAVX512(x []float32, t float32) int
