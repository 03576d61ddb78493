package ivfpq

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/asm"
)

// reconstructAll returns, for every stored id, its list and the decoded
// vector (centroid + decoded residual, or decoded vector).
func reconstructAll(ix *Index) (map[uint32]int, map[uint32][]float32) {
	o := ix.opts
	lists := map[uint32]int{}
	vecs := map[uint32][]float32{}
	for l, L := range ix.lists {
		n := len(L.ids)
		codes := L.codes
		if o.Nbits == 4 {
			codes = asm.UnpackCodes4(L.codes, n, o.M)
		}
		for i, id := range L.ids {
			v := make([]float32, o.Dim)
			ix.pq.Decode(codes[i*o.M:(i+1)*o.M], v)
			if o.byResidual() {
				for j := range v {
					v[j] += ix.coarse[l*o.Dim+j]
				}
			}
			lists[id] = l
			vecs[id] = v
		}
	}
	return lists, vecs
}

func buildIndex(t testing.TB, o Options, x []float32) *Index {
	t.Helper()
	ix, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Train(x); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Add(nil, x); err != nil {
		t.Fatal(err)
	}
	return ix
}

// TestADCDistanceIsReconstructionDistance isolates the centroid term: with
// nprobe = nlist and k = n, every returned PQ distance must equal the exact
// distance from q to the vector's reconstruction c + r̂ (L2: ‖q−c−r̂‖²; IP:
// −⟨q,c⟩ − ⟨q,r̂⟩), within float32 rounding (8-bit) or the fast-scan
// quantisation bound (4-bit). Dropping the per-list term −⟨q,c⟩ for IP, or
// using q instead of q − c for the L2 LUT, breaks this by far more.
func TestADCDistanceIsReconstructionDistance(t *testing.T) {
	const d = 32
	n := 1500
	if testing.Short() {
		n = 600
	}
	x := randVecs(21, n, d, false)
	// Shift the data so ⟨q,c⟩ is far from zero and the term matters.
	for i := range x {
		x[i] += 3
	}
	qs := randVecs(22, 3, d, false)
	for _, metric := range []Metric{IP, L2} {
		for _, nbits := range []int{8, 4} {
			for _, res := range []Residual{ResidualOn, ResidualOff} {
				o := Options{Dim: d, Metric: metric, Nlist: 8, M: 8, Nbits: nbits, Residual: res, KMeansIters: 8, Seed: 3}
				ix := buildIndex(t, o, x)
				_, rec := reconstructAll(ix)
				for qi := 0; qi < 3; qi++ {
					q := qs[qi*d : (qi+1)*d]
					got, err := ix.Search(q, n, SearchParams{Nprobe: 8})
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != n {
						t.Fatalf("got %d results, want %d", len(got), n)
					}
					// Error allowance: float32 rounding of the LUT sums, and
					// for 4-bit the quantisation bound M·0.5/scale, where
					// 1/scale ≤ max(maxSpan/255, ΣSpans/65535); bound it by the
					// LUT value range.
					lut := make([]float32, o.M*ix.pq.Ksub)
					var maxSpan float64
					for l := 0; l < o.Nlist; l++ {
						r := append([]float32(nil), q...)
						if res != ResidualOff && metric == L2 {
							subtract(r, ix.coarse[l*d:(l+1)*d])
						}
						ix.pq.LUT(r, metric, lut)
						for j := 0; j < o.M; j++ {
							lo, hi := math.Inf(1), math.Inf(-1)
							for _, v := range lut[j*ix.pq.Ksub : (j+1)*ix.pq.Ksub] {
								lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
							}
							maxSpan = math.Max(maxSpan, hi-lo)
						}
					}
					for _, r := range got {
						want := exactDist(q, rec[r.ID], metric)
						var mag float64
						for j := range q {
							mag += math.Abs(float64(q[j]) * float64(rec[r.ID][j]))
						}
						mag = 2*mag + exactDist(q, rec[r.ID], L2) + 1
						tol := float64(4*d) * 0x1p-24 * mag * 4
						if nbits == 4 {
							tol += float64(o.M) * 0.5 * math.Max(maxSpan/255, float64(o.M)*maxSpan/65535)
						}
						if e := math.Abs(float64(r.Distance) - want); e > tol {
							t.Fatalf("%v nbits=%d res=%d q%d id %d: PQ distance %g, exact-to-reconstruction %g, err %g > %g",
								metric, nbits, res, qi, r.ID, r.Distance, want, e, tol)
						}
					}
				}
			}
		}
	}
}

// TestIPResidualMatchesBruteForce: inner product with residual encoding and
// a fine PQ (M = d, 256 centroids per dimension, so PQ error is tiny):
// with nprobe = nlist the top 10 match brute-force inner product.
func TestIPResidualMatchesBruteForce(t *testing.T) {
	const d = 16
	n := 3000
	if testing.Short() {
		n = 1000
	}
	x := randVecs(31, n, d, true)
	for i := range x {
		x[i] += 0.5 // non-centred: ⟨q,c⟩ varies a lot between lists
	}
	qs := randVecs(32, 20, d, true)
	o := Options{Dim: d, Metric: IP, Nlist: 16, M: d, Nbits: 8, KMeansIters: 10, Seed: 5}
	ix := buildIndex(t, o, x)
	gt, _ := bruteForce(x, qs, d, 10, IP, nil)
	got := make([][]Result, 20)
	for qi := range got {
		var err error
		if got[qi], err = ix.Search(qs[qi*d:(qi+1)*d], 10, SearchParams{Nprobe: 16}); err != nil {
			t.Fatal(err)
		}
	}
	if r := recallAt(got, gt, 10); r < 0.95 {
		t.Errorf("IP residual, M=d, nprobe=nlist: recall@10 = %.3f, want ≥ 0.95", r)
	}
}

// TestSyntheticRecall covers both metrics, both code sizes and both
// encodings against brute force, with and without refine.
func TestSyntheticRecall(t *testing.T) {
	const d, k = 32, 10
	n := 6000
	if testing.Short() {
		n = 1500
	}
	iters := 10
	if testing.Short() {
		n, iters = 1500, 4
	}
	x, _, _ := gaussianBlobs(41, n, d, 40, 1, 0.6)
	qs, _, _ := gaussianBlobs(42, 30, d, 40, 1, 0.6)
	for _, metric := range []Metric{L2, IP} {
		gt, _ := bruteForce(x, qs, d, k, metric, nil)
		for _, nbits := range []int{8, 4} {
			for _, res := range []Residual{ResidualOn, ResidualOff} {
				o := Options{Dim: d, Metric: metric, Nlist: 16, M: 16, Nbits: nbits, Residual: res, KMeansIters: iters, Seed: 1}
				ix := buildIndex(t, o, x)
				if err := ix.SetRefineVectors(x); err != nil {
					t.Fatal(err)
				}
				var raw, ref [][]Result
				for qi := 0; qi < 30; qi++ {
					q := qs[qi*d : (qi+1)*d]
					a, err := ix.Search(q, k, SearchParams{Nprobe: 16})
					if err != nil {
						t.Fatal(err)
					}
					b, err := ix.Search(q, k, SearchParams{Nprobe: 16, KFactor: 10})
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range b {
						if want := exactDist(q, x[int(r.ID)*d:int(r.ID+1)*d], metric); math.Abs(float64(r.Distance)-want) > 1e-3*(1+math.Abs(want)) {
							t.Fatalf("refined distance %g, exact %g", r.Distance, want)
						}
					}
					raw, ref = append(raw, a), append(ref, b)
				}
				r0, r1 := recallAt(raw, gt, k), recallAt(ref, gt, k)
				t.Logf("%v nbits=%d residual=%d: recall@10 %.3f, refined ×10 %.3f", metric, nbits, res, r0, r1)
				if r1 < 0.95 || r0 < 0.4 {
					t.Errorf("%v nbits=%d residual=%d: recall@10 %.3f (want ≥ 0.4), refined %.3f (want ≥ 0.95)", metric, nbits, res, r0, r1)
				}
			}
		}
	}
}

// TestFilterRemoveCompact: allow-list applied inside the scan, tombstones
// hidden at once, Compact drops them and allows re-adding the ids; results
// match brute force over the allowed live set (refine, nprobe = nlist).
func TestFilterRemoveCompact(t *testing.T) {
	const d = 16
	n := 2000
	if testing.Short() {
		n = 800
	}
	x := randVecs(51, n, d, false)
	qs := randVecs(52, 10, d, false)
	for _, nbits := range []int{8, 4} {
		o := Options{Dim: d, Nlist: 8, M: 8, Nbits: nbits, KMeansIters: 5, Seed: 2}
		ix := buildIndex(t, o, x)
		ix.SetRefineVectors(x)
		allow := roaring.New()
		for i := 0; i < n; i += 7 {
			allow.Add(uint32(i))
		}
		var removed []uint32
		for i := 0; i < n; i += 3 {
			removed = append(removed, uint32(i))
		}
		if got := ix.Remove(removed); got != len(removed) {
			t.Fatalf("Remove returned %d, want %d", got, len(removed))
		}
		if ix.Remove(removed[:5]) != 0 {
			t.Fatal("removing twice counted again")
		}
		if ix.Len() != n-len(removed) || ix.Tombstones() != len(removed) {
			t.Fatalf("Len %d Tombstones %d", ix.Len(), ix.Tombstones())
		}
		dead := roaring.BitmapOf(removed...)
		keep := func(id uint32) bool { return allow.Contains(id) && !dead.Contains(id) }
		gt, _ := bruteForce(x, qs, d, 10, L2, keep)
		check := func(stage string) {
			for qi := 0; qi < 10; qi++ {
				q := qs[qi*d : (qi+1)*d]
				got, err := ix.Search(q, 10, SearchParams{Nprobe: 8, Allow: allow, KFactor: 1000})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 10 {
					t.Fatalf("%s: %d results, want 10", stage, len(got))
				}
				for i, r := range got {
					if !keep(r.ID) {
						t.Fatalf("%s: returned id %d (removed or not allowed)", stage, r.ID)
					}
					if r.ID != gt[qi][i] {
						t.Fatalf("%s nbits=%d q%d rank %d: id %d, brute force %d", stage, nbits, qi, i, r.ID, gt[qi][i])
					}
				}
				// The same filter as a callback gives the same results.
				viaFunc, err := ix.Search(q, 10, SearchParams{Nprobe: 8, AllowFunc: allow.Contains, KFactor: 1000})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(viaFunc, got) {
					t.Fatalf("%s: AllowFunc results differ from Allow", stage)
				}
				// Unfiltered: removed ids never appear.
				all, _ := ix.Search(q, 50, SearchParams{Nprobe: 8})
				for _, r := range all {
					if dead.Contains(r.ID) {
						t.Fatalf("%s: removed id %d returned", stage, r.ID)
					}
				}
			}
		}
		check("tombstoned")
		if _, err := ix.Add(removed[:1], x[:d]); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("re-adding a tombstoned id before Compact: err = %v", err)
		}
		ix.Compact()
		if ix.Len() != n-len(removed) || ix.Tombstones() != 0 {
			t.Fatalf("after Compact: Len %d Tombstones %d", ix.Len(), ix.Tombstones())
		}
		stored := 0
		for _, L := range ix.lists {
			stored += len(L.ids)
		}
		if stored != n-len(removed) {
			t.Fatalf("after Compact %d codes stored, want %d", stored, n-len(removed))
		}
		check("compacted")
		// Re-add the removed ids (same vectors): brute force over allowed.
		rx := make([]float32, 0, len(removed)*d)
		for _, id := range removed {
			rx = append(rx, x[int(id)*d:int(id+1)*d]...)
		}
		if _, err := ix.Add(removed, rx); err != nil {
			t.Fatal(err)
		}
		dead = roaring.New()
		gt, _ = bruteForce(x, qs, d, 10, L2, keep)
		check("re-added")
	}
}

// TestAddBatchesEqualsOneBatch: adding in uneven batches yields the same
// lists (ids and packed codes) as one Add.
func TestAddBatchesEqualsOneBatch(t *testing.T) {
	const d = 16
	x := randVecs(61, 700, d, false)
	for _, nbits := range []int{4, 8} {
		o := Options{Dim: d, Nlist: 4, M: 4, Nbits: nbits, KMeansIters: 4, Seed: 9}
		a := buildIndex(t, o, x)
		b, _ := New(o)
		if err := b.Train(x); err != nil {
			t.Fatal(err)
		}
		for _, cut := range [][2]int{{0, 1}, {1, 33}, {33, 400}, {400, 700}} {
			if _, err := b.Add(nil, x[cut[0]*d:cut[1]*d]); err != nil {
				t.Fatal(err)
			}
		}
		for l := range a.lists {
			if string(a.lists[l].codes) != string(b.lists[l].codes) || len(a.lists[l].ids) != len(b.lists[l].ids) {
				t.Fatalf("nbits=%d list %d differs between one Add and batched Adds", nbits, l)
			}
		}
	}
}

// TestIDSpaceEnd: adding id 2^32−1 must not wrap the next automatic id to
// 0 (which would duplicate stored ids); automatic ids are then exhausted.
func TestIDSpaceEnd(t *testing.T) {
	x := randVecs(3, 300, 8, false)
	ix := buildIndex(t, Options{Dim: 8, Nlist: 2, M: 2, Nbits: 4, KMeansIters: 2}, x)
	if _, err := ix.Add([]uint32{math.MaxUint32}, x[:8]); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Add(nil, x[:8]); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("automatic id after 2^32−1: err = %v", err)
	}
	data := serialise(t, ix)
	o, err := Open(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Add(nil, x[:8]); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("reopened: automatic id after 2^32−1: err = %v", err)
	}
}

func TestIndexErrors(t *testing.T) {
	ix, err := New(Options{Dim: 8, Nlist: 2, M: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Search(make([]float32, 8), 1, SearchParams{}); !errors.Is(err, ErrNotTrained) {
		t.Errorf("search untrained: %v", err)
	}
	if _, err := ix.Add(nil, make([]float32, 8)); !errors.Is(err, ErrNotTrained) {
		t.Errorf("add untrained: %v", err)
	}
	x := randVecs(1, 300, 8, false)
	if err := ix.Train(x); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Search(make([]float32, 7), 1, SearchParams{}); !errors.Is(err, ErrDimension) {
		t.Errorf("short query: %v", err)
	}
	if _, err := ix.Search(make([]float32, 8), 0, SearchParams{}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("k=0: %v", err)
	}
	bad := make([]float32, 8)
	bad[3] = float32(math.NaN())
	if _, err := ix.Add(nil, bad); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NaN vector: %v", err)
	}
	if _, err := ix.Add([]uint32{5, 5}, make([]float32, 16)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("duplicate ids: %v", err)
	}
	if _, err := ix.Add([]uint32{100}, x[:8]); err != nil {
		t.Fatal(err)
	}
	ix.SetRefineVectors(x[:80]) // rows 0..9 only
	if _, err := ix.Search(x[:8], 1, SearchParams{Nprobe: 2, KFactor: 2}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("refine without a row for id 100: %v", err)
	}
	if _, err := New(Options{Dim: 10, M: 3}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("d not divisible by M: %v", err)
	}
}
