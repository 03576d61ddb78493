// Package testenv holds the switches tests share.
//
// STRATA_EMULATED=1 marks a run under CPU emulation (qemu-user), which
// scripts/test.sh sets for its emulated steps. Emulation is 10–50× slower
// than native execution, so tests that train models (k-means, PQ), read
// real datasets, or otherwise take seconds natively call SkipIfEmulated and
// leave that work to the native run; the emulated run keeps the small seeded
// tests that exercise what differs by architecture.
package testenv

import (
	"os"
	"testing"
)

// Emulated reports whether STRATA_EMULATED is set to a non-empty value
// other than "0".
func Emulated() bool {
	v := os.Getenv("STRATA_EMULATED")
	return v != "" && v != "0"
}

// SkipIfEmulated skips t under emulation, naming why the test is too heavy.
func SkipIfEmulated(t testing.TB, why string) {
	t.Helper()
	if Emulated() {
		t.Skipf("STRATA_EMULATED is set: %s (runs natively)", why)
	}
}
