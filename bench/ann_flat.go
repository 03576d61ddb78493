package bench

import (
	"container/heap"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/datasets"
)

// Flat (exact, exhaustive) part of the ann suite: Strata's blocked
// many-to-many asm kernel asm.DotMany (for L2 too, ranking by
// ‖c‖² − 2·q·c as FAISS does) plus a bounded top-k heap per query, against FAISS
// IndexFlatL2 / IndexFlatIP (python3-faiss, one thread; its batch search
// uses OpenBLAS sgemm for nq ≥ 20). Both search the whole query set in one
// call; recall is 1 up to ties, so the figure is QPS alone.

// Flat engine names.
const (
	EngineStrataFlat = "strata-flat"
	PeerFAISSFlat    = "faiss-flat" // IndexFlatL2 / IndexFlatIP
)

// ANNFlatPeers are the flat peers, each compared with EngineStrataFlat.
var ANNFlatPeers = []string{PeerFAISSFlat}

// flatQueryBlock × flatBaseBlock distances are computed per kernel call
// (64 × 4096 float32 = 1 MiB of output), with fewer base rows for long
// vectors (flatBaseRows).
const (
	flatQueryBlock = 64
	flatBaseBlock  = 4096
	// flatBaseBytes caps a base block's bytes: at d = 784 a 4,096-row
	// block (12.8 MB) ran 7% slower than 512- or 1,024-row ones
	// (BenchmarkFlatSearch's shapes at the AVX2 level), while at d = 100
	// the block size made no difference.
	flatBaseBytes = 2 << 20
)

// flatBaseRows is the base block of dimension d: flatBaseBlock rows, or
// fewer to stay within flatBaseBytes; a multiple of 192 (whole
// asm.PanelRows groups and 64-row steps), at least 384.
func flatBaseRows(d int) int {
	return max(384, min(flatBaseBlock, flatBaseBytes/(4*d))/192*192)
}

// flatPanels reports whether flat search runs the packed-panel kernel
// (asm.DotPanels) at the current asm level: at AVX2, where it beat
// DotMany's row-major tiles by 6–15% (BenchmarkDotPanels); at AVX-512
// DotMany's ZMM tiles are faster.
func flatPanels() bool { return asm.CurrentLevel() == asm.AVX2 }

const flatBytesMethod = "the float32 vectors (4·d bytes), both engines"

// flatParams are the ANNParams of a flat run: no build or search knobs.
func flatParams() ANNParams { return ANNParams{K: annK, Threads: 1} }

// strataFlatEngine is exact search over the base matrix, one goroutine.
type strataFlatEngine struct {
	d      *annData
	packed []float32 // the base in asm.PackPanels layout when flatPanels
}

func (e *strataFlatEngine) name() string      { return EngineStrataFlat }
func (e *strataFlatEngine) params() ANNParams { return flatParams() }

func (e *strataFlatEngine) build() (ANNRun, error) {
	// The index is the row-major base matrix itself, or at AVX2 the same
	// rows packed for the panel kernel (the copy is the build; without it
	// the build time is 0, so no build ratio is computed).
	w0, c0 := time.Now(), processCPU()
	kernel := "many-to-many"
	if flatPanels() {
		e.packed = asm.PackPanels(nil, e.d.base.Data, e.d.base.D)
		kernel = "packed panels"
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ANNRun{Engine: e.name(), Version: "this tree (" + runtime.Version() + ")", PID: os.Getpid(),
		BuildWallS: time.Since(w0).Seconds(), BuildCPUS: processCPU() - c0,
		BytesPerVector: float64(4 * e.d.base.D), BytesMethod: flatBytesMethod,
		RSSBytes: int64(ms.Sys), Index: fmt.Sprintf("flat exact (asm %s %s, %d×%d blocks, top-k heap)", asm.CurrentLevel(), kernel, flatQueryBlock, flatBaseRows(e.d.base.D))}, nil
}

func (e *strataFlatEngine) search(_ int, minTime time.Duration) (ANNPoint, []int64, error) {
	nq := e.d.queries.N
	var ids []int64
	reps := 0
	w0, c0 := time.Now(), processCPU()
	for {
		got := flatSearchBlocks(e.d.queries.Data, e.d.base.Data, e.packed, e.d.base.D, annK, e.d.metric == datasets.InnerProduct, flatQueryBlock, flatBaseRows(e.d.base.D))
		if reps == 0 {
			ids = got
		}
		reps++
		if time.Since(w0) >= minTime {
			break
		}
	}
	wall, cpu := time.Since(w0).Seconds(), processCPU()-c0
	return point(0, reps, nq, wall, cpu), ids, nil
}

func (e *strataFlatEngine) close() {}

// flatSearch returns the k nearest rows of base (n×d) for each row of q
// (nq×d), nq×k ids, best first (ties by smaller id; -1 pads when n < k).
// ip ranks by the larger inner product, else by the smaller squared L2.
func flatSearch(q, base []float32, d, k int, ip bool) []int64 {
	var packed []float32
	if flatPanels() {
		packed = asm.PackPanels(nil, base, d)
	}
	return flatSearchBlocks(q, base, packed, d, k, ip, flatQueryBlock, flatBaseRows(d))
}

// flatSearchBlocks is flatSearch with qb × bb distance blocks (bb a
// multiple of asm.PanelRows), through asm.DotPanels over packed (base in
// asm.PackPanels layout) when it is non-nil, else asm.DotMany.
func flatSearchBlocks(q, base, packed []float32, d, k int, ip bool, qb, bb int) []int64 {
	nq, n := len(q)/d, len(base)/d
	hs := make([]flatHeap, nq)
	for i := range hs {
		hs[i] = make(flatHeap, 0, k+1)
	}
	out := make([]float32, qb*bb)
	// L2 ranks by ‖c‖² − 2·q·c (‖q‖² is the same for every base row of a
	// query), so both metrics run the inner-product kernel, as FAISS's
	// IndexFlatL2 does (sgemm plus norms).
	var norms []float32
	if !ip {
		norms = make([]float32, n)
		for j := range norms {
			r := base[j*d : (j+1)*d]
			norms[j] = asm.Dot(r, r)
		}
	}
	// Base blocks outer: a block (bb rows, 1.6 MB at d = 100)
	// is read from memory once and stays in cache for every query block,
	// where the query-blocks-outer order streamed the whole base once per
	// query block; each query still sees the blocks in order.
	for b0 := 0; b0 < n; b0 += bb {
		b1 := min(b0+bb, n)
		m := b1 - b0
		cb := base[b0*d : b1*d]
		var bn []float32
		if !ip {
			bn = norms[b0:b1]
		}
		// ld is the output's row stride: m, or with panels the block's
		// rows rounded up to whole groups (the padding rows' products
		// are computed and ignored).
		ld := m
		var pb []float32
		if packed != nil {
			ld = (m + asm.PanelRows - 1) / asm.PanelRows * asm.PanelRows
			pb = packed[b0*d : (b0+ld)*d]
		}
		for q0 := 0; q0 < nq; q0 += qb {
			q1 := min(q0+qb, nq)
			o := out[:(q1-q0)*ld]
			if pb != nil {
				asm.DotPanels(q[q0*d:q1*d], pb, d, o, ld)
			} else {
				asm.DotMany(q[q0*d:q1*d], cb, d, o)
			}
			for i := q0; i < q1; i++ {
				selectRow(&hs[i], o[(i-q0)*ld:(i-q0)*ld+m], bn, int64(b0), k)
			}
		}
	}
	ids := make([]int64, nq*k)
	for i := range ids {
		ids[i] = -1
	}
	for i := range hs {
		h := &hs[i]
		for j := len(*h) - 1; j >= 0; j-- {
			ids[i*k+j] = heap.Pop(h).(flatItem).id
		}
	}
	return ids
}

// selectRow offers h (at most k kept) the distances of one block row:
// -row[j] (inner product, norms nil) or norms[j] − 2·row[j] (L2), for
// ids base+j. Once h holds k hits, a distance enters only if it is below
// the root's (ties keep the earlier id): inner-product rows are scanned
// for the next score above the threshold by asm.IndexAbove, L2 rows
// compared one by one; the heap is touched only for an entering hit.
func selectRow(h *flatHeap, row, norms []float32, base int64, k int) {
	j := 0
	for ; j < len(row) && len(*h) < k; j++ {
		dist := -row[j]
		if norms != nil {
			dist = norms[j] - 2*row[j]
		}
		heap.Push(h, flatItem{dist, base + int64(j)})
	}
	if j == len(row) {
		return
	}
	thr := (*h)[0].dist
	if norms == nil {
		neg := -thr // -s < thr exactly when s > -thr (negation is exact)
		for {
			j += asm.IndexAbove(row[j:], neg)
			if j == len(row) {
				break
			}
			h.replaceTop(flatItem{-row[j], base + int64(j)})
			neg = -(*h)[0].dist
			j++
		}
		return
	}
	norms = norms[:len(row)]
	for ; j < len(row); j++ {
		if dist := norms[j] - 2*row[j]; dist < thr {
			h.replaceTop(flatItem{dist, base + int64(j)})
			thr = (*h)[0].dist
		}
	}
}

type flatItem struct {
	dist float32
	id   int64
}

// flatHeap is a max-heap on (dist, id): the root is the worst kept hit.
type flatHeap []flatItem

func (h flatHeap) Len() int { return len(h) }
func (h flatHeap) Less(i, j int) bool {
	if h[i].dist != h[j].dist {
		return h[i].dist > h[j].dist
	}
	return h[i].id > h[j].id
}
func (h flatHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *flatHeap) Push(x any)   { *h = append(*h, x.(flatItem)) }

// replaceTop puts x in place of the root (the worst kept hit) and sifts
// it down: heap.Fix(h, 0) without the interface calls, the hot path of
// selectRow.
func (h flatHeap) replaceTop(x flatItem) {
	n := len(h)
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h.Less(r, c) {
			c = r
		}
		if !(h[c].dist > x.dist || h[c].dist == x.dist && h[c].id > x.id) {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = x
}

func (h *flatHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
