package ivfpq

import (
	"math"
	"testing"
)

// TestPrecomputedTablesMatchPerListLUT: for L2 by residual, search with
// the precomputed tables (ptab[l] + query term, + ‖q − y_l‖²) returns the
// same distances as the per-list LUT on q − y_l (tables disabled, or over
// the size bound), within float32 rounding of the terms (8-bit), and the
// same ids up to swaps of near-equal distances; 4-bit distances differ by
// at most the two LUT quantisation bounds.
func TestPrecomputedTablesMatchPerListLUT(t *testing.T) {
	const d = 48
	n := 2000
	if testing.Short() {
		n = 700
	}
	x := randVecs(31, n, d, false)
	for i := range x {
		x[i] = 2*x[i] + 5 // far from the origin: ‖q − y‖² is large
	}
	qs := randVecs(32, 8, d, false)
	for i := range qs {
		qs[i] = 2*qs[i] + 5
	}
	for _, nbits := range []int{8, 4} {
		base := Options{Dim: d, Metric: L2, Nlist: 16, M: 12, Nbits: nbits, KMeansIters: 6, Seed: 5}
		on := buildIndex(t, base, x)
		offOpts := base
		offOpts.MaxPrecomputedTableBytes = -1
		off := buildIndex(t, offOpts, x)
		boundOpts := base
		boundOpts.MaxPrecomputedTableBytes = int64(base.Nlist*base.M<<nbits)*4 - 1 // one byte short
		bound := buildIndex(t, boundOpts, x)
		if on.precomputed() == nil {
			t.Fatal("tables not built under the default bound")
		}
		if off.precomputed() != nil || bound.precomputed() != nil {
			t.Fatal("tables built although disabled / over the bound")
		}
		for qi := 0; qi < 8; qi++ {
			q := qs[qi*d : (qi+1)*d]
			for _, nprobe := range []int{1, 3, 16} {
				a, err := on.Search(q, 50, SearchParams{Nprobe: nprobe})
				if err != nil {
					t.Fatal(err)
				}
				b, err := off.Search(q, 50, SearchParams{Nprobe: nprobe})
				if err != nil {
					t.Fatal(err)
				}
				c, err := bound.Search(q, 50, SearchParams{Nprobe: nprobe})
				if err != nil {
					t.Fatal(err)
				}
				if len(a) != len(b) || len(b) != len(c) {
					t.Fatalf("nbits=%d: result counts %d / %d / %d", nbits, len(a), len(b), len(c))
				}
				// Tolerance: rounding of terms of magnitude ~‖q‖², ‖y‖².
				var qn float64
				for _, v := range q {
					qn += float64(v) * float64(v)
				}
				tol := 4 * float64(d) * 0x1p-24 * 4 * qn
				if nbits == 4 {
					// Two quantised LUTs, each within M·0.5/scale of its
					// float sum, 1/scale ≤ max(maxSpan/255, M·maxSpan/65535).
					maxSpan := lutMaxSpan(on, q)
					tol += 2 * float64(base.M) * 0.5 * math.Max(maxSpan/255, float64(base.M)*maxSpan/65535)
				}
				distB := map[uint32]float32{}
				for _, r := range b {
					distB[r.ID] = r.Distance
				}
				worst := float64(b[len(b)-1].Distance)
				for i, r := range a {
					if e := math.Abs(float64(r.Distance) - float64(b[i].Distance)); e > tol {
						t.Fatalf("nbits=%d q%d nprobe=%d rank %d: precomputed %g vs per-list %g (err %g > %g)",
							nbits, qi, nprobe, i, r.Distance, b[i].Distance, e, tol)
					}
					if db, ok := distB[r.ID]; ok {
						if e := math.Abs(float64(r.Distance) - float64(db)); e > tol {
							t.Fatalf("nbits=%d id %d: precomputed %g vs per-list %g", nbits, r.ID, r.Distance, db)
						}
					} else if float64(r.Distance) < worst-2*tol {
						t.Fatalf("nbits=%d q%d nprobe=%d: id %d (%g) missing from the per-list results (worst %g)",
							nbits, qi, nprobe, r.ID, r.Distance, worst)
					}
					if c[i] != b[i] {
						t.Fatalf("nbits=%d: bound-disabled index differs from disabled one at rank %d", nbits, i)
					}
				}
			}
		}
	}
}

// lutMaxSpan returns the largest max − min of a sub-table over the per-list
// L2 residual LUTs of q.
func lutMaxSpan(ix *Index, q []float32) float64 {
	o := ix.opts
	lut := make([]float32, o.M*ix.pq.Ksub)
	var maxSpan float64
	for l := 0; l < o.Nlist; l++ {
		r := append([]float32(nil), q...)
		subtract(r, ix.coarse[l*o.Dim:(l+1)*o.Dim])
		ix.pq.LUT(r, L2, lut)
		for j := 0; j < o.M; j++ {
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, v := range lut[j*ix.pq.Ksub : (j+1)*ix.pq.Ksub] {
				lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
			}
			maxSpan = math.Max(maxSpan, hi-lo)
		}
	}
	return maxSpan
}
