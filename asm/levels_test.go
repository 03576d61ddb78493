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

func TestCapLevels(t *testing.T) {
	all := []Level{Generic, AVX2, AVX512}
	for _, c := range []struct {
		max  string
		want int
	}{{"", 3}, {"avx512", 3}, {"avx2", 2}, {"generic", 1}, {"bogus", 3}, {"neon", 3}} {
		if got := capLevels(all, c.max); len(got) != c.want || got[0] != Generic {
			t.Errorf("capLevels(%v, %q) = %v, want the first %d", all, c.max, got, c.want)
		}
	}
}
