//go:build race

package testenv

// Race reports whether the binary was built with -race (the race detector
// slows code 5–20×, so timing and throughput assertions do not hold).
const Race = true
