package asm

import (
	"strings"
	"testing"
)

// TestReportLevels prints the levels this binary can dispatch to, in the one
// line scripts/test.sh reads to say which kernel levels a run executed:
//
//	asm-levels: supported=generic,avx2,avx512 current=avx512
func TestReportLevels(t *testing.T) {
	var names []string
	for _, l := range SupportedLevels() {
		names = append(names, l.String())
	}
	t.Logf("asm-levels: supported=%s current=%s", strings.Join(names, ","), CurrentLevel())
}
