//go:build !linux

package hnsw

func procCPU() float64 { return 0 }
