package tier

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/engine/ivfpq"
	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/internal/cancel"
)

// SegmentIndexType names the vector index of warm segments
// (Options.SegmentIndex).
type SegmentIndexType string

// Warm-segment vector index kinds (Options.SegmentIndex).
const (
	SegmentIndexHNSW  SegmentIndexType = "hnsw"
	SegmentIndexIVFPQ SegmentIndexType = "ivfpq"
	// segmentIndexFlat is what an "ivfpq" build writes for a segment with
	// fewer than IVFMinRows vectors (or non-finite vectors), and what a
	// background flush writes until its deferred index is built
	// (deferred.go): no index, an exact scan of the segment's vectors. It
	// is not an Options value.
	segmentIndexFlat SegmentIndexType = "flat"
)

// Validate reports an error unless t is SegmentIndexHNSW or
// SegmentIndexIVFPQ.
func (t SegmentIndexType) Validate() error {
	if t != SegmentIndexHNSW && t != SegmentIndexIVFPQ {
		return fmt.Errorf("tier: unknown Options.SegmentIndex %q (want hnsw or ivfpq)", string(t))
	}
	return nil
}

// Upper bounds of the IVF options (Validate).
const (
	maxIVFNlist       = 1 << 16
	defaultNlistLimit = 4096
)

// ValidateSegmentIndex reports the problems of o's SegmentIndex and IVF*
// fields alone (call after EnsureDefaults; Dim is used when set), for
// callers that map their own options onto them (engine collection
// options). Validate includes them.
func (o *Options) ValidateSegmentIndex() error {
	var errs []error
	if err := o.SegmentIndex.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(append(errs, o.validateIVF()...)...)
}

func (o *Options) validateIVF() []error {
	var errs []error
	if o.IVFNbits != 4 && o.IVFNbits != 8 {
		errs = append(errs, fmt.Errorf("tier: Options.IVFNbits %d, want 4 or 8", o.IVFNbits))
	}
	if o.IVFM < 0 {
		errs = append(errs, fmt.Errorf("tier: Options.IVFM %d must be >= 0", o.IVFM))
	} else if o.IVFM > 0 && o.Dim > 0 && o.Dim%o.IVFM != 0 {
		errs = append(errs, fmt.Errorf("tier: Options.IVFM %d does not divide Dim %d", o.IVFM, o.Dim))
	}
	if o.IVFNlist < 0 || o.IVFNlist > maxIVFNlist {
		errs = append(errs, fmt.Errorf("tier: Options.IVFNlist %d outside [0,%d] (0: per segment)", o.IVFNlist, maxIVFNlist))
	}
	if o.IVFNprobe < 0 {
		errs = append(errs, fmt.Errorf("tier: Options.IVFNprobe %d must be >= 0 (0: nlist/8)", o.IVFNprobe))
	}
	if o.IVFKFactor < 1 {
		errs = append(errs, fmt.Errorf("tier: Options.IVFKFactor %d must be >= 1", o.IVFKFactor))
	}
	if o.IVFNbits == 4 || o.IVFNbits == 8 {
		if need := 1 << o.IVFNbits; o.IVFMinRows < need {
			errs = append(errs, fmt.Errorf("tier: Options.IVFMinRows %d must be >= 2^IVFNbits = %d (PQ training needs a point per centroid)", o.IVFMinRows, need))
		}
	}
	if o.IVFNlist > 0 && o.IVFMinRows < o.IVFNlist {
		errs = append(errs, fmt.Errorf("tier: Options.IVFMinRows %d must be >= IVFNlist %d (k-means needs a point per list)", o.IVFMinRows, o.IVFNlist))
	}
	return errs
}

// ivfBuildParams are the IVF-PQ parameters of a segment build.
type ivfBuildParams struct {
	nlist, m, nbits, minRows int
	seed                     uint64
}

// ivfDefaultNlist is clamp(round(4·√n), 1, 4096), at most n.
func ivfDefaultNlist(n int) int {
	nl := int(math.Round(4 * math.Sqrt(float64(n))))
	return max(1, min(nl, defaultNlistLimit, n))
}

// ivfDefaultM is the largest divisor of dim ≤ max(1, dim/8) (8-bit) or
// ≤ max(1, dim/4) (4-bit).
func ivfDefaultM(dim, nbits int) int {
	target := max(1, dim/8)
	if nbits == 4 {
		target = max(1, dim/4)
	}
	for m := target; m > 1; m-- {
		if dim%m == 0 {
			return m
		}
	}
	return 1
}

// ivfMetric maps the tier metric: Cosine is IP over normalised vectors.
func ivfMetric(m Metric) ivfpq.Metric {
	if m == L2 {
		return ivfpq.L2
	}
	return ivfpq.IP
}

func allFinite(x []float32) bool {
	for _, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return false
		}
	}
	return true
}

// buildIVFSection builds the vector-index section of an "ivfpq" segment
// over vecs (n×dim, row h = the h-th row with a vector; Cosine vectors
// not yet normalised): an engine/ivfpq index (ids 0..n−1) or, below
// minRows vectors or with non-finite vectors, the flat marker (uvarint n).
//
// PQ encodes the vectors themselves (ivfpq.ResidualOff) for every metric,
// L2 included. For L2 by residual (engine/ivfpq's default), the first
// search would build the precomputed residual tables (Jégou et al. 2011
// §IV-B), 4·nlist·M·2^nbits bytes kept for the segment's lifetime — 40 MB
// against a 3 MB section for 10,000 fashion-mnist-784 vectors (nlist 400,
// M 98, 8-bit), ~83 MB per 100k-vector segment at d = 512 — and an opened
// ivfpq index offers no way to bound them (MaxPrecomputedTableBytes is not
// stored and has no setter). Without the tables, residual search computes
// one LUT per probed list. Measured (TestIVFL2TableMeasure, one thread,
// nprobe nlist/8, refine ×4, k 10), search time per query / refined
// recall@10:
//
//	                       residual+tables   residual, no tables   ResidualOff
//	fashion-784 8-bit      328 µs / 0.9996   1814 µs / 0.9996      97 µs / 0.9998
//	fashion-784 4-bit      506 µs / 0.9988   1061 µs / 0.9988      51 µs / 0.9974
//	Gaussian d=64 8-bit     26 µs / 0.4882    145 µs / 0.4882      24 µs / 0.4532
//	Gaussian d=64 4-bit     69 µs / 0.4388    146 µs / 0.4388      22 µs / 0.3752
//
// (one run on the shared 2-core machine; a second, more loaded run again
// had ResidualOff fastest, 3–19× ahead of both residual variants on
// fashion-mnist), so codes of the vectors search as fast as or faster than either
// residual variant, with no table memory, and as accurate after refinement
// on real L2 data (isotropic Gaussian data, the worst case for a coarse
// quantizer, loses 3–6 points). The cost is build time on fashion-mnist
// 8-bit: Train + Add 4.9 s vs 2.8 s (9.6 vs 3.8 s in the second run; not
// analysed — likely the many identical blank-pixel sub-vectors leaving
// k-means empty clusters to repair); 4-bit and Gaussian builds are
// unchanged within noise. IP and Cosine were already encoded this way.
func buildIVFSection(vecs []float32, dim int, metric Metric, p ivfBuildParams, threads int) (uint32, []byte, error) {
	n := len(vecs) / dim
	if n < p.minRows || !allFinite(vecs) {
		return secFlat, binary.AppendUvarint(nil, uint64(n)), nil
	}
	x := vecs
	if metric == Cosine {
		x = make([]float32, len(vecs))
		for h := 0; h < n; h++ {
			base.UnitVector(x[h*dim:], vecs[h*dim:(h+1)*dim])
		}
	}
	nlist := p.nlist
	if nlist == 0 {
		nlist = ivfDefaultNlist(n)
	}
	nlist = min(nlist, n)
	m := p.m
	if m == 0 {
		m = ivfDefaultM(dim, p.nbits)
	}
	ix, err := ivfpq.New(ivfpq.Options{Dim: dim, Metric: ivfMetric(metric), Nlist: nlist, M: m, Nbits: p.nbits,
		Residual: ivfpq.ResidualOff, Seed: p.seed, Threads: max(1, threads)})
	if err != nil {
		return 0, nil, fmt.Errorf("tier: segment ivfpq: %w", err)
	}
	if err := ix.Train(x); err != nil {
		return 0, nil, fmt.Errorf("tier: segment ivfpq: %w", err)
	}
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = uint32(i)
	}
	if _, err := ix.Add(ids, x); err != nil {
		return 0, nil, fmt.Errorf("tier: segment ivfpq: %w", err)
	}
	var b bytes.Buffer
	if _, err := ix.WriteTo(&b); err != nil {
		return 0, nil, fmt.Errorf("tier: segment ivfpq: %w", err)
	}
	return secIVFPQ, b.Bytes(), nil
}

// openVectorArrays gathers the rows' vectors into one contiguous n×dim
// array for the ivfpq refine stage and the flat scan. For L2 and IP the
// documents' Vector slices are re-pointed into it (no extra memory); for
// Cosine it holds normalised copies (the documents keep their vectors as
// written), 4·dim bytes per vector more.
func (w *warmSegment) openVectorArrays() {
	d := w.dim
	vecs := make([]float32, len(w.vecRow)*d)
	for h, r := range w.vecRow {
		v := w.docs[r].Vector
		if w.metric == Cosine {
			base.UnitVector(vecs[h*d:], v)
			continue
		}
		copy(vecs[h*d:], v)
		w.docs[r].Vector = vecs[h*d : (h+1)*d : (h+1)*d]
	}
	w.vecs = vecs
}

// ivfNextIDOff is the byte offset of nextID (u64, 1 + the largest id ever
// added) in an engine/ivfpq file header (layout in engine/ivfpq/doc.go).
const ivfNextIDOff = 48

// openIVF opens the ivfpq section b (at file offset off) over nvec vectors.
// The section must hold exactly the ids 0..nvec−1, live, of the segment's
// dimension and metric: ivfpq.Open checks the ids unique and below the
// header's nextID, so Len = nvec and nextID = nvec leave no other set.
// A section by residual for L2 (written before buildIVFSection encoded
// the vectors themselves) is accepted; ivfpq builds its precomputed tables
// on the first search (see buildIVFSection).
func (w *warmSegment) openIVF(b []byte, off int64, nvec int) error {
	ix, err := ivfpq.Open(b)
	if err != nil {
		var ce *ivfpq.CorruptError
		if errors.As(err, &ce) {
			return segCorrupt(w.path, off+ce.Offset, "ivfpq: %s", ce.Reason)
		}
		return segCorrupt(w.path, off, "ivfpq: %v", err)
	}
	xo := ix.Options()
	if ix.Len() != nvec || ix.Tombstones() != 0 || xo.Dim != w.dim || xo.Metric != ivfMetric(w.metric) || !ix.IsTrained() {
		ix.Close()
		return segCorrupt(w.path, off, "ivfpq has %d live + %d removed vectors of dim %d metric %v, want %d of %d metric %v",
			ix.Len(), ix.Tombstones(), xo.Dim, xo.Metric, nvec, w.dim, ivfMetric(w.metric))
	}
	// Open succeeded, so the header (and its nextID) is there.
	if next := binary.LittleEndian.Uint64(b[ivfNextIDOff:]); next != uint64(nvec) {
		ix.Close()
		return segCorrupt(w.path, off+ivfNextIDOff, "ivfpq next id %d, want %d: its ids are not exactly 0..%d, the segment's vectors",
			next, nvec, nvec-1)
	}
	if err := ix.SetRefineVectors(w.vecs); err != nil {
		ix.Close()
		return segCorrupt(w.path, off, "ivfpq refine vectors: %v", err)
	}
	w.ivf = ix
	return nil
}

// ivfNprobe is the segment's probe count: Options.IVFNprobe or nlist/8.
func (w *warmSegment) ivfNprobe() int {
	nl := w.ivf.Options().Nlist
	np := w.nprobe
	if np <= 0 {
		np = max(1, nl/8)
	}
	return min(np, nl)
}

// tierDistance turns an ivfpq / flat distance (L2: squared L2; IP and
// Cosine: −⟨q,x⟩ over normalised vectors) into the tier's (Metric).
func (w *warmSegment) tierDistance(d float32) float32 {
	if w.metric == Cosine {
		return 1 + d
	}
	return d
}

// searchIVF is searchAllow for "ivfpq" and "flat" segments: allow (nil:
// every vector) holds the vector ids (hid) of the rows visible at the
// snapshot that pass the filter; it is applied inside the IVF list scan.
// Distances are exact (refined). When the probed lists hold fewer than
// min(k, |allow|) allowed vectors, or few rows are allowed, the allowed
// vectors are scanned exactly instead, so the result always holds
// min(k, |allow|) hits, like the HNSW path. When ctx is done first it
// returns the hits found so far and ctx.Err().
func (w *warmSegment) searchIVF(ctx context.Context, q []float32, k int, allow *roaring.Bitmap) ([]Hit, error) {
	n := len(w.vecRow)
	want := n
	if allow != nil {
		want = int(allow.GetCardinality())
	}
	want = min(want, k)
	if want == 0 {
		return nil, nil
	}
	if w.metric == Cosine {
		q = base.UnitVector(nil, q)
	}
	if w.ivf != nil && allFinite(q) {
		nprobe := w.ivfNprobe()
		nl := w.ivf.Options().Nlist
		// A filter this selective leaves fewer allowed vectors in the
		// probed lists than the exact scan costs: scan them exactly.
		expected := float64(n) * float64(nprobe) / float64(nl)
		if allow == nil || float64(allow.GetCardinality()) > expected/8 {
			res, err := w.ivf.SearchContext(ctx, q, k, ivfpq.SearchParams{Nprobe: nprobe, KFactor: w.kfactor, Allow: allow})
			var cerr error // ctx.Err() when the search was cut short
			if ctxErr(ctx, err) {
				cerr, err = err, nil
			}
			if err != nil {
				return nil, w.ivfErr(err)
			}
			if cerr == nil && len(res) < want && nprobe < nl {
				res, err = w.ivf.SearchContext(ctx, q, k, ivfpq.SearchParams{Nprobe: nl, KFactor: w.kfactor, Allow: allow})
				if ctxErr(ctx, err) {
					cerr, err = err, nil
				}
				if err != nil {
					return nil, w.ivfErr(err)
				}
			}
			if len(res) >= want || cerr != nil {
				hits := make([]Hit, 0, len(res))
				for _, r := range res {
					if int(r.ID) >= n {
						return nil, segCorrupt(w.path, 0, "ivfpq id %d beyond %d vectors", r.ID, n)
					}
					row := w.vecRow[r.ID]
					hits = append(hits, Hit{Doc: w.docs[row], Epoch: w.birth[row], Distance: w.tierDistance(r.Distance)})
				}
				return hits, cerr
			}
		}
	}
	return w.scanExact(ctx, q, k, allow)
}

func (w *warmSegment) ivfErr(err error) error {
	if errors.Is(err, ivfpq.ErrInvalidArgument) && !errors.Is(err, ivfpq.ErrDimension) {
		// A refined id without a vector: the section lists ids beyond
		// the segment's vectors.
		return segCorrupt(w.path, 0, "ivfpq search: %v", err)
	}
	return fmt.Errorf("tier: search %s: %w", w.path, err)
}

// scanExact is the exact top-k over the segment's vectors in allow (nil:
// all); q is already normalised for Cosine. It looks at ctx before every
// scanBlockRows vectors; when it finds ctx done it returns the top k of
// the vectors scored so far and ctx.Err().
func (w *warmSegment) scanExact(ctx context.Context, q []float32, k int, allow *roaring.Bitmap) ([]Hit, error) {
	d := w.dim
	n := len(w.vecRow)
	done := ctx.Done()
	var cs []cand
	if allow != nil && allow.GetCardinality() < uint64(n)/4 {
		// A small allow-list: score only its vectors.
		it := allow.Iterator()
		for i := 0; it.HasNext(); i++ {
			if i%scanBlockRows == 0 && cancel.Done(done) {
				return w.topExact(nearest(cs, k), k), ctx.Err()
			}
			h := it.Next()
			if int(h) >= n {
				break
			}
			x := w.vecs[int(h)*d : (int(h)+1)*d]
			if w.metric == L2 {
				cs = append(cs, cand{h, asm.L2Sq(q, x)})
			} else {
				cs = append(cs, cand{h, -asm.Dot(q, x)})
			}
		}
		return w.topExact(cs, k), nil
	}
	out := make([]float32, scanBlockRows)
	for h0 := 0; h0 < n; h0 += scanBlockRows {
		if cancel.Done(done) {
			return w.topExact(nearest(cs, k), k), ctx.Err()
		}
		m := min(scanBlockRows, n-h0)
		block := w.vecs[h0*d : (h0+m)*d]
		if w.metric == L2 {
			asm.L2SqBatch(q, block, out[:m])
		} else {
			asm.DotBatch(q, block, out[:m])
		}
		for i := 0; i < m; i++ {
			h := uint32(h0 + i)
			if allow != nil && !allow.Contains(h) {
				continue
			}
			dv := out[i]
			if w.metric != L2 {
				dv = -dv
			}
			cs = append(cs, cand{h, dv})
		}
	}
	return w.topExact(cs, k), nil
}

type cand struct {
	h    uint32
	dist float32
}

// nearest returns the k best of cs (topExact's order, unsorted) in
// O(len·log k), so that a scan cut short does not sort everything it
// scored.
func nearest(cs []cand, k int) []cand {
	if len(cs) <= k || k <= 0 {
		return cs
	}
	worse := func(a, b cand) bool { return a.dist > b.dist || a.dist == b.dist && a.h > b.h }
	h := append([]cand(nil), cs[:k]...) // max-heap by worse
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			if r := l + 1; r < len(h) && worse(h[r], h[l]) {
				l = r
			}
			if !worse(h[l], h[i]) {
				return
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, c := range cs[k:] {
		if worse(h[0], c) {
			h[0] = c
			down(0)
		}
	}
	return h
}

// topExact returns the k best of cs (distances before tierDistance) as hits.
func (w *warmSegment) topExact(cs []cand, k int) []Hit {
	sort.Slice(cs, func(i, j int) bool { return cs[i].dist < cs[j].dist || cs[i].dist == cs[j].dist && cs[i].h < cs[j].h })
	if len(cs) > k {
		cs = cs[:k]
	}
	hits := make([]Hit, len(cs))
	for i, c := range cs {
		row := w.vecRow[c.h]
		hits[i] = Hit{Doc: w.docs[row], Epoch: w.birth[row], Distance: w.tierDistance(c.dist)}
	}
	return hits
}
