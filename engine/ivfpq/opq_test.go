package ivfpq

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/datasets"
)

// correlatedVecs returns n×d vectors z·A with z standard normal scaled by
// a decaying spectrum and A a random Gaussian d×d mixing: strongly
// correlated dimensions with unequal variances, the case OPQ is for.
func correlatedVecs(seed uint64, n, d int) []float32 {
	rng := rand.New(rand.NewPCG(seed, 3))
	a := make([]float64, d*d)
	for i := range a {
		a[i] = rng.NormFloat64() / math.Sqrt(float64(d))
	}
	x := make([]float32, n*d)
	z := make([]float64, d)
	for i := 0; i < n; i++ {
		for j := range z {
			z[j] = rng.NormFloat64() * math.Pow(0.85, float64(j))
		}
		for c := 0; c < d; c++ {
			var s float64
			for j := 0; j < d; j++ {
				s += z[j] * a[j*d+c]
			}
			x[i*d+c] = float32(s)
		}
	}
	return x
}

// TestOPQReducesDistortion: the alternating OPQ training never increases
// the PQ distortion ‖R·x − ŷ‖² from one round to the next (both steps are
// minimisations; allowance 0.5 % for k-means' empty-cluster repair and
// float rounding), ends well below plain PQ (round 0, R = I) on correlated
// data, and returns an orthogonal R.
func TestOPQReducesDistortion(t *testing.T) {
	const d, m = 32, 8
	n, iters := 2000, 8
	if testing.Short() {
		n, iters = 500, 4
	}
	x := correlatedVecs(7, n, d)
	for _, nbits := range []int{4, 8} {
		res, err := trainOPQ(x, d, m, nbits, iters, KMeans{Iters: 10, Seed: 1, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		if e := orthogonalityError(res.R, d); e > 1e-5 {
			t.Fatalf("nbits=%d: R not orthogonal: max |RRᵀ−I| = %g", nbits, e)
		}
		dist := res.Distortion
		t.Logf("nbits=%d: distortion per round %.4g", nbits, dist)
		for i := 1; i < len(dist); i++ {
			if dist[i] > dist[i-1]*1.005 {
				t.Errorf("nbits=%d: distortion rose from %g to %g in round %d", nbits, dist[i-1], dist[i], i)
			}
		}
		// The final R applied to a fresh PQ (as Index.Train does).
		xr := make([]float32, len(x))
		rotateRows(x, d, res.R, xr, 2)
		plain := pqDistortion(t, x, d, m, nbits)
		rotated := pqDistortion(t, xr, d, m, nbits)
		t.Logf("nbits=%d: PQ distortion plain %.4g, OPQ-rotated %.4g", nbits, plain, rotated)
		if rotated > 0.9*plain {
			t.Errorf("nbits=%d: OPQ distortion %g not below 0.9 × plain %g", nbits, rotated, plain)
		}
	}
}

// pqDistortion trains a PQ on x and returns its mean squared error on x.
func pqDistortion(t *testing.T, x []float32, d, m, nbits int) float64 {
	pq, err := TrainPQ(x, d, m, nbits, KMeans{Iters: 10, Seed: 1, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	n := len(x) / d
	codes := make([]uint8, n*m)
	pq.Encode(x, codes)
	y := make([]float32, len(x))
	pq.Decode(codes, y)
	var s float64
	for i, v := range x {
		e := float64(v - y[i])
		s += e * e
	}
	return s / float64(n)
}

// TestProcrustesIsOptimal: for Ŷ = X·Qᵀ with Q a known orthogonal matrix
// (the rotation of an earlier round), procrustes recovers Q exactly, so
// the Procrustes step's orientation (R = V·Uᵀ, not its transpose) is
// right.
func TestProcrustesIsOptimal(t *testing.T) {
	const d, n = 24, 300
	x := randVecs(5, n, d, false)
	q, err := trainOPQ(correlatedVecs(6, 400, d), d, 4, 4, 2, KMeans{Iters: 3, Seed: 2, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float32, n*d)
	rotateRows(x, d, q.R, y, 1)
	got := make([]float32, d*d)
	if err := procrustes(crossProduct(transposeBlocks(x, d), y, d, 2), d, got); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if math.Abs(float64(got[i]-q.R[i])) > 1e-4 {
			t.Fatalf("R[%d] = %g, want %g", i, got[i], q.R[i])
		}
	}
}

// TestOPQSearchIsReconstructionDistance is TestADCDistanceIsReconstructionDistance
// with OPQ: every PQ distance returned (nprobe = nlist, k = n) equals the
// exact distance, in the original space, from q to the reconstruction
// mapped back, x̂ = Rᵀ·(c + r̂) (c, r̂ rotated centroid and decoded residual),
// for L2 and IP, 8 and 4 bits, by residual or not, and for L2 by residual
// both with the precomputed tables (ptab[l] from the rotated centroids)
// and with the per-list LUT. Since R is orthogonal, ‖Rq − y‖ = ‖q − Rᵀy‖
// and ⟨Rq, y⟩ = ⟨q, Rᵀy⟩, so the centroid terms computed in the rotated
// space are the original-space ones. The reconstructions are also checked
// to be closer to the data than without OPQ.
func TestOPQSearchIsReconstructionDistance(t *testing.T) {
	const d = 32
	n, iters, nq := 1500, 3, 3
	if testing.Short() {
		n, iters, nq = 400, 2, 2 // and the comparison without OPQ only for L2 by residual
	}
	x := correlatedVecs(21, n, d)
	for i := range x {
		x[i] += 2 // ⟨q,c⟩ and ‖q − c‖ far from zero
	}
	qs := correlatedVecs(22, 3, d)
	for _, metric := range []Metric{IP, L2} {
		for _, nbits := range []int{8, 4} {
			for _, res := range []Residual{ResidualOn, ResidualOff} {
				for _, ptab := range []int64{0, -1} {
					if ptab < 0 && !(metric == L2 && res == ResidualOn) {
						continue
					}
					o := Options{Dim: d, Metric: metric, Nlist: 8, M: 8, Nbits: nbits, Residual: res, KMeansIters: 2 + 2*iters,
						Seed: 3, OPQ: true, OPQIters: iters, MaxPrecomputedTableBytes: ptab}
					ix := buildIndex(t, o, x)
					if (ix.precomputed() != nil) != (metric == L2 && res == ResidualOn && ptab == 0) {
						t.Fatalf("%v res=%d ptab=%d: precomputed tables %v", metric, res, ptab, ix.precomputed() != nil)
					}
					R := ix.Rotation()
					if len(R) != d*d {
						t.Fatalf("Rotation has %d floats", len(R))
					}
					_, rec := reconstructAll(ix) // rotated space
					back := map[uint32][]float32{}
					for id, y := range rec {
						v := make([]float32, d)
						for a := 0; a < d; a++ {
							var s float64
							for b := 0; b < d; b++ {
								s += float64(R[b*d+a]) * float64(y[b]) // (Rᵀy)_a
							}
							v[a] = float32(s)
						}
						back[id] = v
					}
					// The reconstructions are of the right vectors: their
					// error is below that of the same index without OPQ
					// (catches codes or centroids left in the wrong space).
					if ptab == 0 && (!testing.Short() || (metric == L2 && res == ResidualOn)) {
						po := o
						po.OPQ = false
						_, plainRec := reconstructAll(buildIndex(t, po, x))
						var eOPQ, ePlain float64
						for id := range back {
							eOPQ += exactDist(x[int(id)*d:int(id+1)*d], back[id], L2)
							ePlain += exactDist(x[int(id)*d:int(id+1)*d], plainRec[id], L2)
						}
						if !(eOPQ < ePlain) {
							t.Fatalf("%v nbits=%d res=%d: reconstruction error with OPQ %g, without %g", metric, nbits, res, eOPQ/float64(n), ePlain/float64(n))
						}
					}
					for qi := 0; qi < nq; qi++ {
						q := qs[qi*d : (qi+1)*d]
						got, err := ix.Search(q, n, SearchParams{Nprobe: 8})
						if err != nil {
							t.Fatal(err)
						}
						if len(got) != n {
							t.Fatalf("got %d results, want %d", len(got), n)
						}
						rq := make([]float32, d)
						asm.DotBatch(q, R, rq)
						maxSpan := lutSpan(ix, rq, metric, res)
						for _, r := range got {
							want := exactDist(q, back[r.ID], metric)
							var mag float64
							for j := range q {
								mag += math.Abs(float64(q[j]) * float64(back[r.ID][j]))
							}
							mag = 2*mag + exactDist(q, back[r.ID], L2) + 1
							tol := float64(8*d) * 0x1p-24 * mag * 4
							if nbits == 4 {
								tol += float64(o.M) * 0.5 * math.Max(maxSpan/255, float64(o.M)*maxSpan/65535)
							}
							if e := math.Abs(float64(r.Distance) - want); e > tol {
								t.Fatalf("%v nbits=%d res=%d ptab=%d q%d id %d: PQ distance %g, exact to Rᵀ·reconstruction %g, err %g > %g",
									metric, nbits, res, ptab, qi, r.ID, r.Distance, want, e, tol)
							}
						}
					}
				}
			}
		}
	}
}

// lutSpan returns the largest max − min of a LUT sub-table over every
// list for the (rotated) query rq.
func lutSpan(ix *Index, rq []float32, metric Metric, res Residual) float64 {
	o := ix.opts
	lut := make([]float32, o.M*ix.pq.Ksub)
	var maxSpan float64
	for l := 0; l < o.Nlist; l++ {
		r := append([]float32(nil), rq...)
		if res != ResidualOff && metric == L2 {
			subtract(r, ix.coarse[l*o.Dim:(l+1)*o.Dim])
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
	return maxSpan
}

// TestOPQRefineFilterRemoveAdd: with OPQ, refinement rescoring every
// candidate (nprobe = nlist, KFactor·k ≥ n) returns exactly the brute-force
// top k on the unrotated vectors, also under an allow-list, after Remove,
// and after adding vectors with explicit ids to the trained index.
func TestOPQRefineFilterRemoveAdd(t *testing.T) {
	const d, k = 16, 10
	n := 1200
	if testing.Short() {
		n = 500
	}
	all, _, _ := gaussianBlobs(41, n+100, d, 12, 3, 1)
	x, extra := all[:n*d], all[n*d:]
	qs := randVecs(42, 5, d, false)
	for _, metric := range []Metric{L2, IP} {
		for _, nbits := range []int{8, 4} {
			o := Options{Dim: d, Metric: metric, Nlist: 6, M: 4, Nbits: nbits, KMeansIters: 5, Seed: 9, OPQ: true, OPQIters: 3}
			ix := buildIndex(t, o, x)
			ids := make([]uint32, 100)
			for i := range ids {
				ids[i] = uint32(n + i)
			}
			if _, err := ix.Add(ids, extra); err != nil {
				t.Fatal(err)
			}
			if err := ix.SetRefineVectors(all); err != nil {
				t.Fatal(err)
			}
			removed := roaring.New()
			for i := uint32(0); i < uint32(n+100); i += 7 {
				removed.Add(i)
			}
			allow := roaring.New()
			for i := uint32(0); i < uint32(n+100); i += 3 {
				allow.Add(i)
			}
			check := func(name string, p SearchParams, keep func(uint32) bool) {
				t.Helper()
				p.Nprobe, p.KFactor = o.Nlist, (n+100)/k+1
				wantIDs, wantD := bruteForce(all, qs, d, k, metric, keep)
				for qi := range wantIDs {
					got, err := ix.Search(qs[qi*d:(qi+1)*d], k, p)
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != len(wantIDs[qi]) {
						t.Fatalf("%v nbits=%d %s q%d: %d results, want %d", metric, nbits, name, qi, len(got), len(wantIDs[qi]))
					}
					for i, r := range got {
						w := float64(wantD[qi][i])
						if r.ID != wantIDs[qi][i] || math.Abs(float64(r.Distance)-w) > 1e-4*(1+math.Abs(w)) {
							t.Fatalf("%v nbits=%d %s q%d rank %d: got %d (%g), want %d (%g)", metric, nbits, name, qi, i, r.ID, r.Distance, wantIDs[qi][i], w)
						}
					}
				}
			}
			check("plain", SearchParams{}, nil)
			check("allow", SearchParams{Allow: allow}, allow.Contains)
			ix.Remove(removed.ToArray())
			check("removed", SearchParams{}, func(id uint32) bool { return !removed.Contains(id) })
			check("removed+allow", SearchParams{Allow: allow}, func(id uint32) bool { return allow.Contains(id) && !removed.Contains(id) })
			ix.Compact()
			check("compacted", SearchParams{}, func(id uint32) bool { return !removed.Contains(id) })
		}
	}
}

// smallOPQIndex is smallIndex with OPQ.
func smallOPQIndex(t testing.TB, nbits int, metric Metric) (*Index, []float32) {
	const d = 8
	x := randVecs(71, 300, d, false)
	o := Options{Dim: d, Metric: metric, Nlist: 4, M: 4, Nbits: nbits, KMeansIters: 3, Seed: 4, OPQ: true, OPQIters: 2}
	ix := buildIndex(t, o, x)
	ix.Remove([]uint32{3, 10, 299})
	return ix, x
}

// TestOPQPersist: an OPQ index is written in format version 2 with the
// rotation section and reopens (from bytes and mapped) to identical
// searches and bytes; an index without OPQ is still written in version 1.
// Structural damage to the rotation (CRC recomputed) is a *CorruptError
// at the rotation section's offset.
func TestOPQPersist(t *testing.T) {
	for _, nbits := range []int{8, 4} {
		for _, metric := range []Metric{L2, IP} {
			ix, x := smallOPQIndex(t, nbits, metric)
			data := serialise(t, ix)
			if v := binary.LittleEndian.Uint32(data[8:]); v != 2 {
				t.Fatalf("OPQ index written as version %d", v)
			}
			a, err := Open(data)
			if err != nil {
				t.Fatal(err)
			}
			if !a.Options().OPQ || !reflect.DeepEqual(a.Rotation(), ix.Rotation()) {
				t.Fatal("rotation not restored")
			}
			if again := serialise(t, a); !bytes.Equal(again, data) {
				t.Fatal("re-serialised OPQ index differs")
			}
			for qi := 0; qi < 10; qi++ {
				q := x[qi*8 : qi*8+8]
				want, _ := ix.Search(q, 20, SearchParams{Nprobe: 3})
				got, err := a.Search(q, 20, SearchParams{Nprobe: 3})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("nbits=%d %v q%d: reopened results differ", nbits, metric, qi)
				}
			}
		}
	}
	plain, _ := smallIndex(t, 8, L2)
	if v := binary.LittleEndian.Uint32(serialise(t, plain)[8:]); v != 1 {
		t.Fatalf("index without OPQ written as version %d, want 1", v)
	}

	ix, _ := smallOPQIndex(t, 8, L2)
	data := serialise(t, ix)
	fstart := len(data) - int(footerSizeOf(2))
	rotOff := int(binary.LittleEndian.Uint64(data[fstart+16*secRotation:]))
	expect := func(name string, b []byte, off int64) {
		t.Helper()
		_, err := Open(b)
		var ce *CorruptError
		if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: err = %v, want *CorruptError", name, err)
		}
		if off >= 0 && ce.Offset != off {
			t.Fatalf("%s: offset %d, want %d (%v)", name, ce.Offset, off, err)
		}
	}
	// Not orthogonal: R scaled by 2.
	bad := bytes.Clone(data)
	for i := 0; i < 64; i++ {
		p := rotOff + 4*i
		binary.LittleEndian.PutUint32(bad[p:], math.Float32bits(2*math.Float32frombits(binary.LittleEndian.Uint32(bad[p:]))))
	}
	expect("scaled rotation", refreshCRC(bad), int64(rotOff))
	// NaN in the rotation.
	bad = bytes.Clone(data)
	binary.LittleEndian.PutUint32(bad[rotOff+8:], 0x7fc00000)
	expect("NaN rotation", refreshCRC(bad), int64(rotOff))
	// Rotation section length not Dim².
	bad = bytes.Clone(data)
	binary.LittleEndian.PutUint64(bad[fstart+16*secRotation+8:], 4*64-4)
	expect("short rotation", refreshCRC(bad), int64(fstart+16*secRotation+8))
	// OPQ flag cleared: a 7th section that must then be empty.
	bad = bytes.Clone(data)
	binary.LittleEndian.PutUint32(bad[12:], binary.LittleEndian.Uint32(bad[12:])&^flagOPQ)
	expect("flag cleared", refreshCRC(bad), int64(fstart+16*secRotation+8))
	// OPQ flag in a version-1 file.
	v1 := serialise(t, plain)
	binary.LittleEndian.PutUint32(v1[12:], binary.LittleEndian.Uint32(v1[12:])|flagOPQ)
	expect("flag in v1", refreshCRC(v1), 12)
	// Every bit flip is caught.
	step := 1
	if testing.Short() {
		step = 5
	}
	for i := 0; i < len(data); i += step {
		b := bytes.Clone(data)
		b[i] ^= 0x04
		if _, err := Open(b); err == nil {
			t.Fatalf("flip at byte %d accepted", i)
		} else if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
			t.Fatalf("flip at byte %d: %v", i, err)
		}
	}
	// Inspect reads version 2.
	in, err := Inspect(data)
	if err != nil {
		t.Fatal(err)
	}
	if !in.OK() || in.Version != 2 {
		t.Fatalf("Inspect: version %d, problems %v", in.Version, in.Problems)
	}
	in, _ = Inspect(refreshCRC(func() []byte {
		b := bytes.Clone(data)
		binary.LittleEndian.PutUint64(b[fstart+16*secRotation+8:], 4)
		return b
	}()))
	if in.OK() {
		t.Fatal("Inspect accepted a rotation section of the wrong length")
	}
}

// TestOPQOptions: OPQIters is validated and defaulted; the cold codec
// refuses OPQ.
func TestOPQOptions(t *testing.T) {
	if err := (Options{Dim: 8, OPQ: true, OPQIters: -1}).EnsureDefaults().Validate(); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("OPQIters -1: %v", err)
	}
	if o := (Options{Dim: 8, OPQ: true}).EnsureDefaults(); o.OPQIters != defaultOPQIters {
		t.Fatalf("default OPQIters %d", o.OPQIters)
	}
	x := randVecs(3, 600, 16, false)
	if _, err := TrainColdCodec(x, Options{Dim: 16, Nlist: 4, OPQ: true}); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("cold codec with OPQ: %v", err)
	}
	ix := buildIndex(t, Options{Dim: 16, Nlist: 4, M: ColdM, KMeansIters: 2, OPQ: true, OPQIters: 1}, x)
	if _, err := NewColdCodec(ix); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("cold codec over an OPQ index: %v", err)
	}
}

// TestOPQANNMeasure logs the effect of OPQ on the larger ANN sets from
// `make datasets` (fashion-mnist-784 L2 by residual, nlist 256, M 56;
// glove-100 IP on the prepared vectors, nlist 1024, M 50), 8-bit refined
// ×4 and 4-bit refined ×10, at a fixed nprobe, on the first 1000 queries:
// recall@10 before and after refine, and training time. It asserts
// nothing about the figures and is too slow for CI (OPQ on 60,000 × 784
// takes minutes on two cores), so it runs only with
// STRATA_IVFPQ_OPQ_MEASURE=1.
func TestOPQANNMeasure(t *testing.T) {
	if os.Getenv("STRATA_IVFPQ_OPQ_MEASURE") != "1" {
		t.Skip("set STRATA_IVFPQ_OPQ_MEASURE=1 to measure OPQ on fashion-mnist and glove")
	}
	cache, err := datasets.CacheDir()
	if err != nil {
		t.Skip(err)
	}
	const k, nq = 10, 1000
	for _, c := range []struct {
		name     string
		metric   Metric
		nlist, m int
		nprobe   int
	}{{datasets.FashionMNIST, L2, 256, 56, 16}, {datasets.GloVe6B100, IP, 1024, 50, 32}} {
		if only := os.Getenv("STRATA_IVFPQ_OPQ_SET"); only != "" && only != c.name {
			continue
		}
		ann, err := datasets.LoadANN(cache, c.name, 100) // the cached ground truth is top-100
		if err != nil {
			t.Skip(err)
		}
		gt := make([][]uint32, nq)
		for qi := range gt {
			for _, id := range ann.GT.IDs.Row(qi)[:k] {
				gt[qi] = append(gt[qi], uint32(id))
			}
		}
		for _, nb := range []struct{ nbits, kf int }{{8, 4}, {4, 10}} {
			for _, opq := range []bool{false, true} {
				if os.Getenv("STRATA_IVFPQ_OPQ_ON_VECTORS") == "1" {
					// Variant: R learned on the vectors, not the residuals.
					if !opq {
						continue
					}
					opqLearnOnVectors = true
					defer func() { opqLearnOnVectors = false }()
				}
				o := Options{Dim: ann.Base.D, Metric: c.metric, Nlist: c.nlist, M: c.m, Nbits: nb.nbits, Seed: 1, OPQ: opq}
				ix, err := New(o)
				if err != nil {
					t.Fatal(err)
				}
				t0 := time.Now()
				if err := ix.Train(ann.Base.Data); err != nil {
					t.Fatal(err)
				}
				t1 := time.Now()
				if _, err := ix.Add(nil, ann.Base.Data); err != nil {
					t.Fatal(err)
				}
				t2 := time.Now()
				if err := ix.SetRefineVectors(ann.Base.Data); err != nil {
					t.Fatal(err)
				}
				var raw, ref [][]Result
				t3 := time.Now()
				for qi := 0; qi < nq; qi++ {
					a, _ := ix.Search(ann.Queries.Row(qi), k, SearchParams{Nprobe: c.nprobe})
					raw = append(raw, a)
				}
				t4 := time.Now()
				for qi := 0; qi < nq; qi++ {
					b, _ := ix.Search(ann.Queries.Row(qi), k, SearchParams{Nprobe: c.nprobe, KFactor: nb.kf})
					ref = append(ref, b)
				}
				t5 := time.Now()
				t.Logf("%s %v nlist=%d M=%d nbits=%d nprobe=%d OPQ=%v/%d (learned on vectors: %v): recall@10 PQ %.4f, refined ×%d %.4f; train %v, add %v, search %v/q (%v/q refined)",
					c.name, c.metric, c.nlist, c.m, nb.nbits, c.nprobe, opq, ix.Options().OPQIters, opqLearnOnVectors, recallAt(raw, gt, k), nb.kf, recallAt(ref, gt, k),
					t1.Sub(t0).Round(time.Millisecond), t2.Sub(t1).Round(time.Millisecond),
					(t4.Sub(t3) / nq).Round(time.Microsecond), (t5.Sub(t4) / nq).Round(time.Microsecond))
			}
		}
	}
}
