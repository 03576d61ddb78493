package base

import (
	"maps"
	"testing"
)

// TestGrowMap: the result holds m's entries, is m itself for a small n
// and a copy (m unchanged) otherwise, and takes n inserts with fewer
// bytes allocated than m growing by insertion.
func TestGrowMap(t *testing.T) {
	m := map[int]int{1: 10, 2: 20}
	if g := GrowMap(m, 10); len(g) != 2 || g[1] != 10 {
		t.Fatalf("%v", g)
	} else {
		g[3] = 30
		if len(m) != 3 {
			t.Fatal("a small n did not return m itself")
		}
	}
	g := GrowMap(m, 1000)
	if !maps.Equal(g, m) {
		t.Fatalf("%v, want %v", g, m)
	}
	g[4] = 40
	if _, ok := m[4]; ok {
		t.Fatal("a large n returned m itself")
	}
	if g := GrowMap(map[int]int(nil), 100); g == nil || len(g) != 0 {
		t.Fatalf("nil map: %v", g)
	}
	fill := func(m map[int]int) {
		for i := range 100000 {
			m[i] = i
		}
	}
	grown := testing.AllocsPerRun(3, func() { fill(GrowMap(map[int]int{}, 100000)) })
	plain := testing.AllocsPerRun(3, func() { fill(map[int]int{}) })
	if grown >= plain {
		t.Errorf("%v allocations with GrowMap, %v without", grown, plain)
	}
}
