package bench

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stratasearch/strata/datasets"
)

// TestFlatSearchExact checks flatSearch against a sort-based exact
// reference (float64 distances, ties by smaller id) with duplicated base
// rows (exact ties), k > n (-1 padding), several block boundaries and both
// metrics. Values are small integers so float32 kernels are exact and the
// reference order is unambiguous. Under -short the reference checks every
// fifth query plus the first and last of each query block (the exact
// reference dominates the run under -race).
func TestFlatSearchExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	checked := func(qi, nq int) bool {
		if !testing.Short() {
			return true
		}
		return qi%5 == 0 || qi%flatQueryBlock == 0 || qi%flatQueryBlock == flatQueryBlock-1 || qi == nq-1
	}
	for _, tc := range []struct{ n, nq, d, k int }{
		{5, 3, 3, 10},                     // k > n
		{flatBaseBlock + 37, 70, 17, 10},  // crosses a base and a query block
		{2*flatBaseBlock + 1, 130, 8, 25}, // several blocks
		{1, 1, 1, 1},
		{300, 7, 100, 10},                       // d % 8 == 4: the AVX2 tiles' 4-float step
		{flatBaseRows(1000)*2 + 5, 9, 1000, 10}, // long rows: smaller base blocks
	} {
		for _, ip := range []bool{false, true} {
			base := make([]float32, tc.n*tc.d)
			for i := range base {
				base[i] = float32(rng.IntN(5) - 2)
			}
			// Duplicate some rows: exact ties.
			for i := 1; i < tc.n; i += 3 {
				copy(base[i*tc.d:(i+1)*tc.d], base[(i-1)*tc.d:i*tc.d])
			}
			q := make([]float32, tc.nq*tc.d)
			for i := range q {
				q[i] = float32(rng.IntN(5) - 2)
			}
			got := flatSearch(q, base, tc.d, tc.k, ip)
			for qi := 0; qi < tc.nq; qi++ {
				if !checked(qi, tc.nq) {
					continue
				}
				type c struct {
					d  float64
					id int
				}
				cs := make([]c, tc.n)
				for j := 0; j < tc.n; j++ {
					var s float64
					for x := 0; x < tc.d; x++ {
						a, b := float64(q[qi*tc.d+x]), float64(base[j*tc.d+x])
						if ip {
							s -= a * b
						} else {
							s += (a - b) * (a - b)
						}
					}
					cs[j] = c{s, j}
				}
				sort.Slice(cs, func(a, b int) bool { return cs[a].d < cs[b].d || cs[a].d == cs[b].d && cs[a].id < cs[b].id })
				for r := 0; r < tc.k; r++ {
					want := int64(-1)
					if r < tc.n {
						want = int64(cs[r].id)
					}
					if g := got[qi*tc.k+r]; g != want {
						t.Fatalf("n=%d d=%d k=%d ip=%v query %d rank %d: id %d, want %d", tc.n, tc.d, tc.k, ip, qi, r, g, want)
					}
				}
			}
		}
	}
}

// TestStrideSubset checks the quick-mode base sample: rows ⌊i·N/n⌋,
// copied (not aliased), reaching the tail even when N < 2n.
func TestStrideSubset(t *testing.T) {
	m := datasets.Matrix[float32]{N: 10, D: 2, Data: make([]float32, 20)}
	for i := range m.Data {
		m.Data[i] = float32(i)
	}
	rowsOf := func(sub datasets.Matrix[float32]) []int {
		var r []int
		for i := 0; i < sub.N; i++ {
			r = append(r, int(sub.Row(i)[0])/2)
		}
		return r
	}
	for _, tc := range []struct {
		n    int
		rows []int
	}{{3, []int{0, 3, 6}}, {6, []int{0, 1, 3, 5, 6, 8}}, {9, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}}, {1, []int{0}}} {
		sub, desc := strideSubset(m, tc.n)
		if got := rowsOf(sub); sub.N != tc.n || sub.D != 2 || !slices.Equal(got, tc.rows) || !strings.Contains(desc, "evenly spaced") {
			t.Errorf("n=%d: rows %v want %v (%q)", tc.n, got, tc.rows, desc)
		}
		sub.Data[0] = -1
		if m.Data[0] != 0 {
			t.Fatalf("n=%d: subset aliases its source", tc.n)
		}
	}
	if sub, desc := strideSubset(m, 10); sub.N != 10 || desc != "all 10 base vectors" {
		t.Errorf("n=N: %d rows, %q", sub.N, desc)
	}
}

// BenchmarkFlatSearch: flatSearch of 192 random queries over 10,000
// random base rows, top-10, at the quick sets' shapes (d=100 ip, d=784
// l2); one op = one query.
func BenchmarkFlatSearch(b *testing.B) {
	for _, c := range []struct {
		d  int
		ip bool
	}{{100, true}, {784, false}} {
		rng := rand.New(rand.NewPCG(3, uint64(c.d)))
		const n, nq = 10000, 192
		base := make([]float32, n*c.d)
		for i := range base {
			base[i] = float32(rng.NormFloat64())
		}
		q := make([]float32, nq*c.d)
		for i := range q {
			q[i] = float32(rng.NormFloat64())
		}
		b.Run(fmt.Sprintf("d=%d/ip=%v", c.d, c.ip), func(b *testing.B) {
			for i := 0; i < b.N; i += nq {
				flatSearch(q, base, c.d, 10, c.ip)
			}
		})
	}
}
