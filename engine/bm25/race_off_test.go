//go:build !race

package bm25

const raceEnabled = false
