//go:build race

package ivfpq

const raceEnabled = true
