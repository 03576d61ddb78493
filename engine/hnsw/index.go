package hnsw

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/internal/base"
)

// maxLevelCap bounds node levels (stored as uint8). With mL = 1/ln(M) and
// M ≥ 2, reaching level 31 needs a uniform draw below 2^-31: it does not
// happen in practice, and the cap keeps corrupt input bounded.
const maxLevelCap = 31

// nLocks is the number of node-lock stripes (hnswlib keeps one mutex per
// node; stripes keep the lock array fixed while the index grows). A
// goroutine never holds two stripe locks at once, so collisions cannot
// deadlock.
const nLocks = 1 << 12

// noEntry marks an empty graph in Index.ep.
const noEntry = math.MaxUint64

// Index is an HNSW graph over float32 vectors (Malkov & Yashunin 2018).
// All methods are safe for concurrent use: Add/AddBatch/Delete/
// RepairDeleted may run while searches run. An Index opened from bytes
// (Open, OpenFile) is read-only.
type Index struct {
	opts    Options
	dim     int
	m       int // Mmax for layers ≥ 1
	mmax0   int // Mmax0 = 2·M for layer 0
	ml      float64
	metric  Metric
	stride0 int // uint32 words per node at layer 0: 1 + Mmax0
	strideU int // uint32 words per upper-layer slot: 1 + M

	// mu guards the array fields below against reallocation: every
	// operation holds RLock while it touches them; growth takes Lock.
	mu       sync.RWMutex
	vecs     []float32 // cap × dim, row-major; cosine rows are unit length
	level0   []uint32  // cap × stride0: [count, id_1 .. id_Mmax0]
	levels   []uint8   // cap: top level of each node
	upperOff []uint32  // cap: first upper slot of each node (levels 1..L use slots off..off+L-1)
	upper    []uint32  // slots × strideU: [count, id_1 .. id_M]
	labels   []uint64  // cap
	present  []uint32  // bitset: vector written (atomic)
	deleted  []uint32  // bitset: tombstoned (atomic)
	codes    []uint8   // SQ8 only: cap × dim codes
	sqScale  []float32 // SQ8 only: d; x ≈ sqOffset[j] + sqScale[j]·code[j]
	sqOffset []float32
	quant    bool        // Storage == SQ8
	trained  atomic.Bool // SQ8 quantiser fixed

	// allocMu guards id and upper-slot allocation and the level RNG.
	allocMu   sync.Mutex
	next      uint32 // ids handed out
	upperUsed uint32 // upper slots handed out
	rng       *rand.Rand

	// ep packs entry<<8 | maxLevel, or noEntry. Written under epMu.
	ep      atomic.Uint64
	epMu    sync.Mutex
	byLevel [][]uint32 // byLevel[l]: nodes whose top level is l ≥ 1 (under epMu)

	locks [nLocks]sync.Mutex

	numDeleted atomic.Int64
	rep        repairState

	ctxPool sync.Pool

	readOnly bool
	closed   bool // under mu
	closer   func() error
	path     string
}

// New returns an empty index. It validates opts after EnsureDefaults.
func New(opts Options) (*Index, error) {
	opts = opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ix := newIndex(opts)
	ix.grow(opts.InitialCapacity, opts.InitialCapacity/opts.M+16)
	return ix, nil
}

func newIndex(opts Options) *Index {
	ix := &Index{
		opts:    opts,
		dim:     opts.Dim,
		m:       opts.M,
		mmax0:   2 * opts.M,
		ml:      1 / math.Log(float64(opts.M)),
		metric:  opts.Metric,
		stride0: 1 + 2*opts.M,
		strideU: 1 + opts.M,
		rng:     rand.New(rand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15)),
		quant:   opts.Storage == SQ8,
	}
	ix.ep.Store(noEntry)
	ix.ctxPool.New = func() any { return new(searchCtx) }
	return ix
}

func (ix *Index) isClosed() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.closed
}

// Options returns the build options (with defaults filled in).
func (ix *Index) Options() Options { return ix.opts }

// Len returns the number of ids handed out by Add, including deleted ones.
func (ix *Index) Len() int {
	ix.allocMu.Lock()
	defer ix.allocMu.Unlock()
	return int(ix.next)
}

// Live returns the number of inserted, non-deleted vectors.
func (ix *Index) Live() int { return ix.Len() - int(ix.numDeleted.Load()) }

// grow reallocates the arrays (under mu.Lock) so that at least nodes ids
// and upperSlots upper slots fit.
func (ix *Index) grow(nodes, upperSlots int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if c := len(ix.levels); nodes > c {
		nc := max(nodes, 2*c, 64)
		ix.vecs = growSlice(ix.vecs, nc*ix.dim)
		ix.level0 = growSlice(ix.level0, nc*ix.stride0)
		ix.levels = growSlice(ix.levels, nc)
		ix.upperOff = growSlice(ix.upperOff, nc)
		ix.labels = growSlice(ix.labels, nc)
		ix.present = growSlice(ix.present, (nc+31)/32)
		ix.deleted = growSlice(ix.deleted, (nc+31)/32)
		if ix.quant {
			ix.codes = growSlice(ix.codes, nc*ix.dim)
		}
	}
	if c := len(ix.upper) / ix.strideU; upperSlots > c {
		nc := max(upperSlots, 2*c, 16)
		ix.upper = growSlice(ix.upper, nc*ix.strideU)
	}
}

func growSlice[T any](s []T, n int) []T {
	t := make([]T, n)
	copy(t, s)
	return t
}

func (ix *Index) ensureCap(id uint32, upperSlots uint32) {
	ix.mu.RLock()
	ok := int(id) < len(ix.levels) && int(upperSlots)*ix.strideU <= len(ix.upper)
	ix.mu.RUnlock()
	if !ok {
		ix.grow(int(id)+1, int(upperSlots))
	}
}

// drawLevel returns ⌊-ln(U)·mL⌋ (paper Alg. 1, line 4). Caller holds allocMu.
func (ix *Index) drawLevel() int {
	u := ix.rng.Float64()
	for u == 0 {
		u = ix.rng.Float64()
	}
	l := int(-math.Log(u) * ix.ml)
	return min(l, maxLevelCap)
}

// alloc reserves one id with its level and upper slots.
func (ix *Index) alloc() (id uint32, level int, off uint32, err error) {
	ix.allocMu.Lock()
	defer ix.allocMu.Unlock()
	if ix.next == math.MaxUint32 {
		return 0, 0, 0, fmt.Errorf("hnsw: index full (%d ids)", ix.next)
	}
	id = ix.next
	ix.next++
	level = ix.drawLevel()
	off = ix.upperUsed
	ix.upperUsed += uint32(level)
	return id, level, off, nil
}

// Add inserts vec (length Dim) under the caller's label and returns its
// internal id (insertion order, 0-based). Cosine vectors are normalised
// first. Cost: O(efConstruction · M · log n) distance computations
// (paper §4.2). Errors: ErrDimension, ErrInvalidVector (NaN or Inf),
// ErrUntrained (SQ8), ErrReadOnly, ErrClosed.
func (ix *Index) Add(label uint64, vec []float32) (uint32, error) {
	if ix.readOnly {
		return 0, ErrReadOnly
	}
	if ix.isClosed() {
		return 0, ErrClosed
	}
	if len(vec) != ix.dim {
		return 0, fmt.Errorf("%w: got %d values, index dimension is %d", ErrDimension, len(vec), ix.dim)
	}
	if err := checkFinite(vec, 0, ix.dim); err != nil {
		return 0, err
	}
	if ix.quant && !ix.trained.Load() {
		return 0, ErrUntrained
	}
	id, level, off, err := ix.alloc()
	if err != nil {
		return 0, err
	}
	ix.ensureCap(id, off+uint32(level))
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	ix.store(id, level, off, label, vec)
	ctx := ix.getCtx()
	ix.insert(ctx, id, level)
	ix.putCtx(ctx)
	return id, nil
}

// AddBatch inserts n = len(labels) vectors, vecs being n×Dim row-major,
// using up to threads goroutines (threads ≤ 0 means GOMAXPROCS). Ids are
// assigned in order: the i-th vector gets first+i. Levels are drawn in
// order too, so a single-threaded batch is reproducible. An untrained SQ8
// index trains its quantiser on this batch first (TrainSQ8). Errors:
// ErrDimension or ErrInvalidVector (nothing inserted), ErrReadOnly.
func (ix *Index) AddBatch(labels []uint64, vecs []float32, threads int) (first uint32, err error) {
	if ix.readOnly {
		return 0, ErrReadOnly
	}
	n := len(labels)
	if len(vecs) != n*ix.dim {
		return 0, fmt.Errorf("%w: %d values for %d vectors of dimension %d", ErrDimension, len(vecs), n, ix.dim)
	}
	if n == 0 {
		return 0, nil
	}
	if err := checkFinite(vecs, 0, ix.dim); err != nil {
		return 0, err
	}
	if ix.quant && !ix.trained.Load() {
		if err := ix.TrainSQ8(vecs); err != nil && !ix.trained.Load() {
			return 0, err
		}
	}
	type job struct {
		level int
		off   uint32
	}
	jobs := make([]job, n)
	ix.allocMu.Lock()
	if uint64(ix.next)+uint64(n) >= math.MaxUint32 {
		ix.allocMu.Unlock()
		return 0, fmt.Errorf("hnsw: index full")
	}
	first = ix.next
	ix.next += uint32(n)
	for i := range jobs {
		l := ix.drawLevel()
		jobs[i] = job{l, ix.upperUsed}
		ix.upperUsed += uint32(l)
	}
	slots := ix.upperUsed
	ix.allocMu.Unlock()
	ix.ensureCap(first+uint32(n)-1, slots)

	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	threads = min(threads, n)
	var nextJob atomic.Int64
	// stopAt bounds a worker's claims; seeding uses it to build the
	// first nodes of an empty graph sequentially.
	stopAt := int64(n)
	work := func() {
		ix.mu.RLock()
		defer ix.mu.RUnlock()
		ctx := ix.getCtx()
		defer ix.putCtx(ctx)
		for {
			i := int(nextJob.Add(1) - 1)
			if int64(i) >= atomic.LoadInt64(&stopAt) {
				nextJob.Add(-1)
				return
			}
			id := first + uint32(i)
			ix.store(id, jobs[i].level, jobs[i].off, labels[i], vecs[i*ix.dim:(i+1)*ix.dim])
			ix.insert(ctx, id, jobs[i].level)
		}
	}
	if threads == 1 {
		work()
		return first, nil
	}
	// While a graph is tiny, concurrent inserts miss each other's links
	// (each sees a graph without the others), which costs measurable
	// recall: seed the first parallelSeed nodes of a small graph one at a
	// time, as a sequential build would, then fan out.
	if seed := int64(parallelSeed) - int64(first); seed > 0 {
		atomic.StoreInt64(&stopAt, min(seed, int64(n)))
		work()
		atomic.StoreInt64(&stopAt, int64(n))
	}
	var wg sync.WaitGroup
	for range threads {
		wg.Go(work)
	}
	wg.Wait()
	return first, nil
}

// parallelSeed is how many nodes AddBatch inserts sequentially into an
// empty graph before it goes parallel.
const parallelSeed = 256

// store writes a node's vector and metadata. Caller holds mu.RLock.
func (ix *Index) store(id uint32, level int, off uint32, label uint64, vec []float32) {
	v := ix.vec(id)
	copy(v, vec)
	if ix.metric == Cosine {
		base.UnitVector(v, v)
	}
	if ix.quant {
		ix.encode(ix.codes[int(id)*ix.dim:int(id+1)*ix.dim], v)
	}
	ix.levels[id] = uint8(level)
	ix.upperOff[id] = off
	ix.labels[id] = label
	atomic.StoreUint32(&ix.level0[int(id)*ix.stride0], 0)
	for l := 1; l <= level; l++ {
		atomic.StoreUint32(&ix.upper[int(off+uint32(l-1))*ix.strideU], 0)
	}
	atomic.OrUint32(&ix.present[id>>5], 1<<(id&31))
}

// checkFinite rejects NaN and ±Inf, which would poison every distance.
func checkFinite(v []float32, first, dim int) error {
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%w: value %v at vector %d, dimension %d", ErrInvalidVector, x, first+i/dim, i%dim)
		}
	}
	return nil
}

func (ix *Index) vec(id uint32) []float32 {
	b := int(id) * ix.dim
	return ix.vecs[b : b+ix.dim : b+ix.dim]
}

// links returns node id's adjacency list at layer lc as [count, ids...].
// Readers load entries with atomic.LoadUint32; writers hold the node's
// stripe lock and store with atomic.StoreUint32.
func (ix *Index) links(id uint32, lc int) []uint32 {
	if lc == 0 {
		b := int(id) * ix.stride0
		return ix.level0[b : b+ix.stride0 : b+ix.stride0]
	}
	b := int(ix.upperOff[id]+uint32(lc-1)) * ix.strideU
	return ix.upper[b : b+ix.strideU : b+ix.strideU]
}

func (ix *Index) mmax(lc int) int {
	if lc == 0 {
		return ix.mmax0
	}
	return ix.m
}

func (ix *Index) lock(id uint32) *sync.Mutex { return &ix.locks[id&(nLocks-1)] }

func (ix *Index) isDeleted(id uint32) bool {
	return atomic.LoadUint32(&ix.deleted[id>>5])&(1<<(id&31)) != 0
}

func (ix *Index) isPresent(id uint32) bool {
	return atomic.LoadUint32(&ix.present[id>>5])&(1<<(id&31)) != 0
}

// dist is the metric distance between a prepared query and stored node id.
func (ix *Index) dist(q []float32, id uint32) float32 {
	b := int(id) * ix.dim
	v := ix.vecs[b : b+ix.dim : b+ix.dim]
	if ix.metric == L2 {
		return asm.L2Sq(q, v)
	}
	return 1 - asm.Dot(q, v)
}

func (ix *Index) entry() (uint32, int, bool) {
	e := ix.ep.Load()
	if e == noEntry {
		return 0, 0, false
	}
	return uint32(e >> 8), int(e & 0xff), true
}

func (ix *Index) setEntry(id uint32, level int) {
	ix.ep.Store(uint64(id)<<8 | uint64(level))
}

// insert links a stored node into the graph (paper Alg. 1). Caller holds
// mu.RLock.
func (ix *Index) insert(ctx *searchCtx, id uint32, level int) {
	q := ix.vec(id)
	ix.epMu.Lock()
	ep, maxL, ok := ix.entry()
	if level > 0 {
		for len(ix.byLevel) <= level {
			ix.byLevel = append(ix.byLevel, nil)
		}
		ix.byLevel[level] = append(ix.byLevel[level], id)
	}
	if !ok {
		ix.setEntry(id, level)
		ix.epMu.Unlock()
		return
	}
	hold := level > maxL
	if !hold {
		ix.epMu.Unlock()
	}

	cur, curD := ep, ix.dist(q, ep)
	for lc := maxL; lc > level; lc-- {
		cur, curD = ix.greedy(ctx, q, cur, curD, lc)
	}
	ctx.eps = append(ctx.eps[:0], cand{curD, cur})
	for lc := min(level, maxL); lc >= 0; lc-- {
		ix.searchLayer(ctx, q, ctx.eps, ix.opts.EfConstruction, lc, nil, id, false)
		// W, ascending.
		w := ctx.sortedResults()
		if len(w) == 0 {
			continue // every candidate was deleted: keep the entry points
		}
		ctx.eps = append(ctx.eps[:0], w...) // entry points for the next layer
		sel := ix.selectNeighbors(ctx, q, ctx.eps, ix.m, lc, ix.opts.ExtendCandidates, id)
		// addLink reuses ctx.sel: keep the selection in ctx.nb.
		ctx.nb = append(ctx.nb[:0], sel...)
		ix.setLinks(id, lc, ctx.nb)
		for _, c := range ctx.nb {
			ix.addLink(ctx, c.id, id, lc)
		}
	}
	if hold {
		ix.setEntry(id, level)
		ix.epMu.Unlock()
	}
}

// TrainSQ8 fixes the SQ8 quantiser from sample (m×Dim row-major, m ≥ 1):
// per dimension, offset = min and scale = (max-min)/255 over the sample
// (cosine rows normalised first); values outside are clamped when
// encoded. It must be called before the first Add; AddBatch calls it on
// its batch when needed. Errors: ErrDimension, and an error if the index
// is not SQ8, already trained or not empty.
func (ix *Index) TrainSQ8(sample []float32) error {
	if !ix.quant {
		return fmt.Errorf("hnsw: TrainSQ8 on an index with Storage %v", ix.opts.Storage)
	}
	if len(sample) == 0 || len(sample)%ix.dim != 0 {
		return fmt.Errorf("%w: SQ8 sample of %d values for dimension %d", ErrDimension, len(sample), ix.dim)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.trained.Load() {
		return fmt.Errorf("hnsw: SQ8 quantiser already trained")
	}
	d := ix.dim
	lo := make([]float32, d)
	hi := make([]float32, d)
	row := make([]float32, d)
	for i := 0; i*d < len(sample); i++ {
		copy(row, sample[i*d:(i+1)*d])
		if ix.metric == Cosine {
			base.UnitVector(row, row)
		}
		for j, x := range row {
			if i == 0 || x < lo[j] {
				lo[j] = x
			}
			if i == 0 || x > hi[j] {
				hi[j] = x
			}
		}
	}
	ix.sqOffset = lo
	ix.sqScale = make([]float32, d)
	for j := range hi {
		ix.sqScale[j] = (hi[j] - lo[j]) / 255
	}
	ix.trained.Store(true)
	return nil
}

// encode quantises v into code (round to nearest, clamped).
func (ix *Index) encode(code []uint8, v []float32) {
	for j, x := range v {
		s := ix.sqScale[j]
		if s == 0 {
			code[j] = 0
			continue
		}
		c := math.Round(float64((x - ix.sqOffset[j]) / s))
		code[j] = uint8(max(0, min(255, c)))
	}
}

// distQ is the traversal distance: on SQ8 codes when quantised, else exact.
func (ix *Index) distQ(q []float32, id uint32, quant bool) float32 {
	if !quant {
		return ix.dist(q, id)
	}
	b := int(id) * ix.dim
	c := ix.codes[b : b+ix.dim : b+ix.dim]
	if ix.metric == L2 {
		return asm.SQ8L2Sq(q, c, ix.sqScale, ix.sqOffset)
	}
	return 1 - asm.SQ8Dot(q, c, ix.sqScale, ix.sqOffset)
}

// greedy walks layer lc from cur to a local minimum (search with ef = 1).
func (ix *Index) greedy(ctx *searchCtx, q []float32, cur uint32, curD float32, lc int) (uint32, float32) {
	return ix.greedyQ(ctx, q, cur, curD, lc, false)
}

func (ix *Index) greedyQ(ctx *searchCtx, q []float32, cur uint32, curD float32, lc int, quant bool) (uint32, float32) {
	for changed := true; changed; {
		changed = false
		l := ix.links(cur, lc)
		n := min(int(atomic.LoadUint32(&l[0])), len(l)-1)
		if !quant {
			// Score the whole list in one gather call; the scan below
			// visits the same distances in the same order.
			nbs := ctx.nbIDs[:0]
			for i := 1; i <= n; i++ {
				nbs = append(nbs, atomic.LoadUint32(&l[i]))
			}
			ctx.nbIDs = nbs
			ds := ix.distGather(ctx, q, nbs)
			for i, d := range ds {
				if d < curD {
					cur, curD, changed = nbs[i], d, true
				}
			}
			continue
		}
		for i := 1; i <= n; i++ {
			nb := atomic.LoadUint32(&l[i])
			if d := ix.distQ(q, nb, quant); d < curD {
				cur, curD, changed = nb, d, true
			}
		}
	}
	return cur, curD
}

func (ix *Index) setLinks(id uint32, lc int, sel []cand) {
	mu := ix.lock(id)
	mu.Lock()
	l := ix.links(id, lc)
	for i, c := range sel {
		atomic.StoreUint32(&l[1+i], c.id)
	}
	atomic.StoreUint32(&l[0], uint32(len(sel)))
	mu.Unlock()
}

// addLink adds the edge e→id at layer lc, shrinking e's list with the
// selection heuristic when it overflows Mmax(lc) (paper Alg. 1, lines
// 13–17). Deleted neighbours are dropped while shrinking.
func (ix *Index) addLink(ctx *searchCtx, e, id uint32, lc int) {
	mu := ix.lock(e)
	mu.Lock()
	defer mu.Unlock()
	l := ix.links(e, lc)
	n := int(l[0])
	for i := 1; i <= n; i++ {
		if l[i] == id {
			return
		}
	}
	if mx := ix.mmax(lc); n < mx {
		atomic.StoreUint32(&l[1+n], id)
		atomic.StoreUint32(&l[0], uint32(n+1))
		return
	}
	ev := ix.vec(e)
	ids := append(ctx.nbIDs[:0], id)
	for i := 1; i <= n; i++ {
		if x := l[i]; !ix.isDeleted(x) {
			ids = append(ids, x)
		}
	}
	ctx.nbIDs = ids
	ds := ix.distGather(ctx, ev, ids)
	cs := ctx.shrink[:0]
	for i, x := range ids {
		cs = append(cs, cand{ds[i], x})
	}
	ctx.shrink = cs
	sortCands(cs)
	sel := ix.selectNeighbors(ctx, ev, cs, ix.mmax(lc), lc, false, e)
	for i, c := range sel {
		atomic.StoreUint32(&l[1+i], c.id)
	}
	atomic.StoreUint32(&l[0], uint32(len(sel)))
}

// selectNeighbors is the heuristic of paper Alg. 4. cs must be sorted by
// ascending distance to base and is not modified (unless extend, when
// the candidates are copied first). self is excluded from the output. The
// result aliases ctx.sel.
func (ix *Index) selectNeighbors(ctx *searchCtx, base []float32, cs []cand, m int, lc int, extend bool, self uint32) []cand {
	if extend {
		ext := append(ctx.ext[:0], cs...)
		ctx.vis.next(len(ix.levels))
		ctx.vis.visit(self)
		for _, c := range cs {
			ctx.vis.visit(c.id)
		}
		for _, c := range cs {
			l := ix.links(c.id, lc)
			n := min(int(atomic.LoadUint32(&l[0])), len(l)-1)
			for i := 1; i <= n; i++ {
				nb := atomic.LoadUint32(&l[i])
				if ctx.vis.visit(nb) || ix.isDeleted(nb) {
					continue
				}
				ext = append(ext, cand{ix.dist(base, nb), nb})
			}
		}
		sortCands(ext)
		ctx.ext = ext
		cs = ext
	}
	r := ctx.sel[:0]
	pruned := ctx.pruned[:0]
	for _, c := range cs {
		if len(r) >= m {
			break
		}
		if c.id == self {
			continue
		}
		cv := ix.vec(c.id)
		good := true
		for _, s := range r {
			if ix.dist(cv, s.id) < c.d {
				good = false
				break
			}
		}
		if good {
			r = append(r, c)
		} else if ix.opts.KeepPrunedConnections {
			pruned = append(pruned, c)
		}
	}
	for _, c := range pruned {
		if len(r) >= m {
			break
		}
		r = append(r, c)
	}
	ctx.sel, ctx.pruned = r, pruned
	return r
}

// sortCands sorts by ascending distance, ties by id (insertion sort for
// the short lists HNSW produces, heap-sort-free and allocation-free).
func sortCands(a []cand) {
	if len(a) > 48 {
		sortCandsLarge(a)
		return
	}
	for i := 1; i < len(a); i++ {
		c := a[i]
		j := i
		for j > 0 && less(c, a[j-1]) {
			a[j] = a[j-1]
			j--
		}
		a[j] = c
	}
}

func less(a, b cand) bool { return a.d < b.d || (a.d == b.d && a.id < b.id) }

// sortCandsLarge is an in-place heapsort (no allocation).
func sortCandsLarge(a []cand) {
	n := len(a)
	down := func(i, n int) {
		for {
			l := 2*i + 1
			if l >= n {
				return
			}
			m := l
			if r := l + 1; r < n && less(a[l], a[r]) {
				m = r
			}
			if !less(a[i], a[m]) {
				return
			}
			a[i], a[m] = a[m], a[i]
			i = m
		}
	}
	for i := n/2 - 1; i >= 0; i-- {
		down(i, n)
	}
	for e := n - 1; e > 0; e-- {
		a[0], a[e] = a[e], a[0]
		down(0, e)
	}
}

// MemoryBytes returns the bytes the index's arrays use for its Len()
// nodes (used) and the bytes allocated including growth headroom
// (allocated). used = n·(4d + 4(1+2M) + 1 + 4 + 8) + slots·4(1+M) +
// 8⌈n/32⌉, where slots, the number of upper-layer lists, averages
// n/(M-1) (see doc.go). Fixed costs (lock stripes, pooled search
// scratch of 1 byte per node per concurrent search) are excluded.
func (ix *Index) MemoryBytes() (used, allocated int64) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	ix.allocMu.Lock()
	n, slots := int64(ix.next), int64(ix.upperUsed)
	ix.allocMu.Unlock()
	perNode := int64(4*ix.dim + 4*ix.stride0 + 1 + 4 + 8)
	used = n*perNode + slots*4*int64(ix.strideU) + 8*((n+31)/32)
	allocated = int64(len(ix.vecs))*4 + int64(len(ix.level0))*4 + int64(len(ix.levels)) +
		int64(len(ix.upperOff))*4 + int64(len(ix.upper))*4 + int64(len(ix.labels))*8 +
		int64(len(ix.present)+len(ix.deleted))*4
	return used, allocated
}
