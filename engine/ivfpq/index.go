package ivfpq

import (
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/asm"
)

// Index is an IVF-PQ index (FAISS IndexIVFPQ / IndexIVFPQFastScan with an
// optional IndexRefineFlat stage). Search is safe for concurrent use with
// other searches; Add, Remove, Compact and SetRefineVectors take an
// exclusive lock.
type Index struct {
	mu      sync.RWMutex
	opts    Options
	trained bool
	coarse  []float32 // Nlist×Dim coarse centroids (rotated by rot, if any)
	rot     []float32 // OPQ rotation, Dim×Dim row-major (y = R·x), or nil
	pq      *PQ
	lists   []invList
	present *roaring.Bitmap // every id stored in a list (live or tombstoned)
	deleted *roaring.Bitmap // tombstones: stored but hidden
	nextID  uint64          // 1 + the largest id ever added (≤ 2^32)
	refine  []float32       // optional exact vectors, row id = vector of id
	closer  func() error

	ptabOnce sync.Once
	ptab     []float32 // precomputed L2 residual tables (precomputed), nil if off
}

// invList is one inverted list: ids[i] is the id of the i-th vector; codes
// are n×M bytes (Nbits = 8) or FastScan4Blocks(n) blocks of the
// asm.PackCodes4 layout (Nbits = 4). owned is false while the slices alias
// an opened file (they are copied before the first write).
type invList struct {
	ids   []uint32
	codes []uint8
	owned bool
}

// New returns an empty, untrained index. Errors wrap ErrInvalidOptions.
func New(opts Options) (*Index, error) {
	opts = opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Index{opts: opts, lists: make([]invList, opts.Nlist), present: roaring.New(), deleted: roaring.New()}, nil
}

// precomputed returns the query-independent tables of the L2
// residual search, built on first use: for list l, sub-quantizer j and
// centroid c, ptab[(l·M + j)·Ksub + c] = ‖C_j[c]‖² + 2⟨y_l,j, C_j[c]⟩,
// y_l the coarse centroid (Jégou, Douze, Schmid, TPAMI 2011, §IV-B; FAISS
// IndexIVFPQ::precompute_table). With them
//
//	‖q − y_l − r‖² = ‖q − y_l‖² + Σ_j (ptab[l][j][c_j] − 2⟨q_j, C_j[c_j]⟩)
//
// for the PQ reconstruction r = (C_j[c_j])_j, so the LUT of a probed list
// is one addition of ptab[l] to the query's −2⟨q_j, C_j[c]⟩ table, and
// ‖q − y_l‖² comes from the coarse search. Returns nil when the metric or
// encoding does not use them, or they would exceed
// Options.MaxPrecomputedTableBytes. Cost: O(Nlist·2^Nbits·d) once.
func (ix *Index) precomputed() []float32 {
	o := ix.opts
	if !(o.byResidual() && o.Metric == L2) || o.MaxPrecomputedTableBytes < 0 {
		return nil
	}
	size := int64(o.Nlist) * int64(o.M) << o.Nbits
	if size*4 > o.MaxPrecomputedTableBytes {
		return nil
	}
	ix.ptabOnce.Do(func() {
		tab := make([]float32, size)
		per := o.M << o.Nbits
		for l := 0; l < o.Nlist; l++ {
			ix.pq.listTerm(ix.coarse[l*o.Dim:(l+1)*o.Dim], tab[l*per:(l+1)*per])
		}
		ix.ptab = tab
	})
	return ix.ptab
}

// Options returns the index's build options (with defaults filled in).
func (ix *Index) Options() Options { return ix.opts }

// IsTrained reports whether Train has run (or the index was opened trained).
func (ix *Index) IsTrained() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.trained
}

// Len returns the number of live (added, not removed) vectors.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return int(ix.present.GetCardinality() - ix.deleted.GetCardinality())
}

// Tombstones returns the number of removed vectors still stored (dropped by
// Compact). The dead fraction is Tombstones()/(Len()+Tombstones()).
func (ix *Index) Tombstones() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return int(ix.deleted.GetCardinality())
}

// ImbalanceFactor returns n·Σ|l|² / (Σ|l|)² over the inverted lists l
// (stored vectors, tombstones included), FAISS's
// InvertedLists::imbalance_factor: 1 when every list has the same length,
// larger when a few lists hold most vectors, which makes each probe scan
// more codes on average. 0 for an empty index.
func (ix *Index) ImbalanceFactor() float64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var tot, sq float64
	for _, l := range ix.lists {
		n := float64(len(l.ids))
		tot += n
		sq += n * n
	}
	if tot == 0 {
		return 0
	}
	return float64(len(ix.lists)) * sq / (tot * tot)
}

// codeBytesPerVector is the PQ code size of one vector in bytes (M·Nbits/8).
func (ix *Index) codeBytesPerVector() float64 {
	return float64(ix.opts.M*ix.opts.Nbits) / 8
}

// BytesPerVector is the memory of one stored vector in the lists: the PQ
// code (M·Nbits/8 bytes) plus the 4-byte id (block padding of 4-bit lists
// and the fixed centroid/codebook tables are not included).
func (ix *Index) BytesPerVector() float64 { return ix.codeBytesPerVector() + 4 }

// Train learns the coarse quantizer (k-means, Nlist centroids; assignment
// by inner product for IP) and the product quantizer (on residuals when
// encoding by residual) from x (n×Dim float32, row-major). n ≥ Nlist and
// n ≥ 2^Nbits. With Options.OPQ the rotation is learned on the PQ's
// training input (see opq.go) and the centroids and codebooks are kept in
// the rotated space. Training an already trained index is an error.
// Cost: O(Iters·n·(Nlist·d + 2^Nbits·d)); OPQ adds OPQIters·O(n_p·d² +
// d³ + 4·n_p·2^Nbits·d), n_p ≤ 256·2^Nbits the PQ training points.
func (ix *Index) Train(x []float32) error {
	o := ix.opts
	d := o.Dim
	if len(x)%d != 0 || len(x) == 0 {
		return fmt.Errorf("%w: training matrix has %d floats, not a positive multiple of Dim = %d", ErrDimension, len(x), d)
	}
	if !finite(x) {
		return fmt.Errorf("%w: training vectors contain NaN or Inf", ErrInvalidArgument)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.trained {
		return fmt.Errorf("%w: index is already trained", ErrInvalidArgument)
	}
	n := len(x) / d
	km := kmeansOf(o, o.Nlist, o.Threads)
	km.Metric = o.Metric
	km.Iters = o.CoarseKMeansIters
	km.Spherical = o.SphericalCoarse
	coarse, err := km.Train(x, d)
	if err != nil {
		return fmt.Errorf("ivfpq: coarse quantizer: %w", err)
	}
	// The PQ is trained on at most MaxPointsPerCentroid·Ksub points.
	px := x
	if limit := o.MaxPointsPerCentroid << o.Nbits; n > limit {
		px = subsample(x, d, n, limit, rand.New(rand.NewPCG(o.Seed, 0x7071)))
	}
	raw := px
	if o.byResidual() {
		px = append([]float32(nil), px...)
		np := len(px) / d
		assign := make([]int32, np)
		assignNearest(px, xnormsFor(px, d, o.Metric), d, coarse, o.Nlist, assign, nil, o.Threads)
		for i, c := range assign {
			subtract(px[i*d:(i+1)*d], coarse[int(c)*d:int(c+1)*d])
		}
	}
	var rot []float32
	if o.OPQ && o.OPQIters > 0 {
		// R is learned on the PQ's input; the PQ and the coarse centroids
		// then live in the rotated space (R(x − c) = R·x − R·c).
		src := px
		if opqLearnOnVectors {
			src = raw
		}
		r, err := trainOPQ(src, d, o.M, o.Nbits, o.OPQIters, kmeansOf(o, 0, o.Threads))
		if err != nil {
			return fmt.Errorf("ivfpq: OPQ rotation: %w", err)
		}
		rot = r.R
		rpx := make([]float32, len(px))
		rotateRows(px, d, rot, rpx, o.Threads)
		px = rpx
		rc := make([]float32, len(coarse))
		rotateRows(coarse, d, rot, rc, o.Threads)
		coarse = rc
	}
	pq, err := TrainPQ(px, d, o.M, o.Nbits, kmeansOf(o, 0, o.Threads))
	if err != nil {
		return fmt.Errorf("ivfpq: product quantizer: %w", err)
	}
	ix.coarse, ix.pq, ix.rot, ix.trained = coarse, pq, rot, true
	return nil
}

// opqLearnOnVectors is a test hook: learn the OPQ rotation on the
// (subsampled) vectors, as FAISS's OPQMatrix in front of an IVF index,
// instead of on the residuals the PQ encodes. Measured with
// TestOPQANNMeasure on fashion-mnist-784 (L2 by residual, nlist 256,
// M 56, nprobe 16): recall@10 before / after refine was 0.762 / 0.991
// (8-bit) and 0.610 / 0.988 (4-bit) learned on vectors, against 0.769 /
// 0.992 and 0.632 / 0.992 learned on residuals (the default), and 0.747
// / 0.988, 0.529 / 0.967 without OPQ. For IP without residuals the two
// are the same.
var opqLearnOnVectors = false

// Rotation returns a copy of the OPQ rotation R (Dim×Dim float32,
// row-major; the index stores and searches R·x), or nil without OPQ.
func (ix *Index) Rotation() []float32 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return append([]float32(nil), ix.rot...)
}

// rotated returns x (n×Dim) rotated by the OPQ matrix into a new slice,
// or x itself without OPQ.
func (ix *Index) rotated(x []float32) []float32 {
	if ix.rot == nil {
		return x
	}
	out := make([]float32, len(x))
	rotateRows(x, ix.opts.Dim, ix.rot, out, ix.opts.Threads)
	return out
}

func norms(x []float32, d int) []float32 {
	out := make([]float32, len(x)/d)
	for i := range out {
		r := x[i*d : (i+1)*d]
		out[i] = asm.Dot(r, r)
	}
	return out
}

func subtract(x, c []float32) {
	for j := range x {
		x[j] -= c[j]
	}
}

// Add encodes and stores x (n×Dim float32, row-major) under ids (n ids, or
// nil for consecutive ids starting at 1 + the largest id added so far, 0
// for an empty index). Vectors go to their nearest coarse centroid (L2) or
// the one with the largest inner product (IP), the rule probing uses. An id that is already stored (live or tombstoned and not yet
// compacted) is an error; nothing is added when Add fails. Returns the ids.
func (ix *Index) Add(ids []uint32, x []float32) ([]uint32, error) {
	o := ix.opts
	d := o.Dim
	if len(x)%d != 0 {
		return nil, fmt.Errorf("%w: %d floats is not a multiple of Dim = %d", ErrDimension, len(x), d)
	}
	n := len(x) / d
	if ids != nil && len(ids) != n {
		return nil, fmt.Errorf("%w: %d ids for %d vectors", ErrInvalidArgument, len(ids), n)
	}
	if !finite(x) {
		return nil, fmt.Errorf("%w: vectors contain NaN or Inf", ErrInvalidArgument)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if !ix.trained {
		return nil, ErrNotTrained
	}
	if ids == nil {
		if ix.nextID+uint64(n) > 1<<32 {
			return nil, fmt.Errorf("%w: id space exhausted", ErrInvalidArgument)
		}
		ids = make([]uint32, n)
		for i := range ids {
			ids[i] = uint32(ix.nextID) + uint32(i)
		}
	} else {
		batch := roaring.New()
		for _, id := range ids {
			if ix.present.Contains(id) || batch.Contains(id) {
				return nil, fmt.Errorf("%w: id %d is already stored (compact after Remove before re-adding)", ErrInvalidArgument, id)
			}
			batch.Add(id)
		}
	}
	x = ix.rotated(x)
	assign := make([]int32, n)
	ix.assign(x, assign)
	codes := ix.encode(x, assign)
	for i, id := range ids {
		ix.appendCode(int(assign[i]), id, codes[i*o.M:(i+1)*o.M])
		ix.present.Add(id)
		if uint64(id) >= ix.nextID {
			ix.nextID = uint64(id) + 1
		}
	}
	return ids, nil
}

// assign sets assign[i] to the coarse list of x[i]: the nearest centroid
// (L2) or the one with the largest inner product (IP).
func (ix *Index) assign(x []float32, assign []int32) {
	o := ix.opts
	assignNearest(x, xnormsFor(x, o.Dim, o.Metric), o.Dim, ix.coarse, o.Nlist, assign, nil, o.Threads)
}

// encode returns the n×M PQ codes of x (residuals to the assigned centroids
// when encoding by residual), encoded on Threads goroutines.
func (ix *Index) encode(x []float32, assign []int32) []uint8 {
	o := ix.opts
	d := o.Dim
	n := len(assign)
	codes := make([]uint8, n*o.M)
	threads := max(1, min(o.Threads, n/64))
	var wg sync.WaitGroup
	for t := 0; t < threads; t++ {
		i0, i1 := t*n/threads, (t+1)*n/threads
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := make([]float32, d)
			for i := i0; i < i1; i++ {
				copy(r, x[i*d:(i+1)*d])
				if o.byResidual() {
					subtract(r, ix.coarse[int(assign[i])*d:int(assign[i]+1)*d])
				}
				ix.pq.Encode(r, codes[i*o.M:(i+1)*o.M])
			}
		}()
	}
	wg.Wait()
	return codes
}

// own makes list l's slices private copies (they may alias a mapped file).
func (ix *Index) own(l int) {
	L := &ix.lists[l]
	if !L.owned {
		L.ids = append([]uint32(nil), L.ids...)
		L.codes = append([]uint8(nil), L.codes...)
		L.owned = true
	}
}

// appendCode appends one vector (id, M unpacked codes) to list l.
func (ix *Index) appendCode(l int, id uint32, code []uint8) {
	ix.own(l)
	L := &ix.lists[l]
	m := ix.opts.M
	v := len(L.ids)
	L.ids = append(L.ids, id)
	if ix.opts.Nbits == 8 {
		L.codes = append(L.codes, code...)
		return
	}
	bsz := asm.FastScan4BlockBytes(m)
	if need := asm.FastScan4Blocks(v+1) * bsz; len(L.codes) < need {
		L.codes = append(L.codes, make([]uint8, need-len(L.codes))...)
	}
	for j, c := range code {
		put4(L.codes, m, v, j, c)
	}
}

// put4 sets the 4-bit code of vector v, sub-quantizer j in a PackCodes4
// layout (see asm/fastscan.go): group j/2, half j%2 → bytes 16j..16j+15 of
// the block; byte 2w (w < 8) or 2(w−8)+1 (w ≥ 8) for w = v mod 16; the high
// nibble holds vectors 16..31 of the block.
func put4(packed []uint8, m, v, j int, c uint8) {
	blk := packed[v/asm.FastScanBlock*asm.FastScan4BlockBytes(m):]
	w := v % asm.FastScanBlock
	hi := w >= 16
	w &= 15
	pos := 2 * w
	if w >= 8 {
		pos = 2*(w-8) + 1
	}
	b := &blk[j*16+pos]
	if hi {
		*b = *b&0x0f | (c&15)<<4
	} else {
		*b = *b&0xf0 | c&15
	}
}

// Remove tombstones ids: they are hidden from every search that starts
// after Remove returns, and dropped from storage by Compact. Ids not stored
// or already removed are ignored. Returns how many ids were newly removed.
func (ix *Index) Remove(ids []uint32) int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	n := 0
	for _, id := range ids {
		if ix.present.Contains(id) && ix.deleted.CheckedAdd(id) {
			n++
		}
	}
	return n
}

// Compact drops tombstoned vectors from the inverted lists (rewriting the
// affected lists) so their ids may be added again. Cost O(stored codes).
func (ix *Index) Compact() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.deleted.IsEmpty() {
		return
	}
	m := ix.opts.M
	for l := range ix.lists {
		L := ix.lists[l]
		n := len(L.ids)
		var codes []uint8
		if ix.opts.Nbits == 8 {
			codes = L.codes
		} else {
			codes = asm.UnpackCodes4(L.codes, n, m)
		}
		var ids []uint32
		var keep []uint8
		for i, id := range L.ids {
			if !ix.deleted.Contains(id) {
				ids = append(ids, id)
				keep = append(keep, codes[i*m:(i+1)*m]...)
			}
		}
		if len(ids) == n {
			continue
		}
		if ix.opts.Nbits == 4 {
			keep = asm.PackCodes4(keep, len(ids), m)
		}
		ix.lists[l] = invList{ids: ids, codes: keep, owned: true}
	}
	ix.present.AndNot(ix.deleted)
	ix.deleted.Clear()
}

// SetRefineVectors gives the exact vectors used by refinement (KFactor):
// vectors is N×Dim float32, row-major, row id being the vector of id (so
// ids must be < N); it may be an mmap of a file and is not copied or
// modified. nil disables refinement.
func (ix *Index) SetRefineVectors(vectors []float32) error {
	if len(vectors)%ix.opts.Dim != 0 {
		return fmt.Errorf("%w: refine vectors have %d floats, not a multiple of Dim = %d", ErrDimension, len(vectors), ix.opts.Dim)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.refine = vectors
	return nil
}

// Close releases the file mapping of an index opened by OpenFile. The index
// must not be used afterwards. Close on other indexes is a no-op.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	c := ix.closer
	ix.closer = nil
	ix.lists = nil
	ix.ptab = nil
	ix.trained = false
	if c != nil {
		return c()
	}
	return nil
}
