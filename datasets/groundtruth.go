package datasets

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/internal/base"
)

// Metric is the similarity used for ground truth (base.Metric, shared by
// every package). Ground truth supports L2 and InnerProduct; the cache
// files record it by name ("l2", "ip").
type Metric = base.Metric

const (
	// L2 ranks by squared Euclidean distance, ascending.
	L2 = base.L2
	// InnerProduct ranks by inner product, descending (for unit vectors
	// this is cosine / angular order).
	InnerProduct = base.IP
)

// GroundTruth holds the exact top-K neighbours of each query.
type GroundTruth struct {
	Metric Metric
	K      int
	// IDs is nq×K: row q holds base row indices, best first; ties in
	// distance are broken by lower id first. ivecs-compatible.
	IDs Matrix[int32]
	// Dists is nq×K, aligned with IDs: squared L2 distance (ascending) for
	// L2, inner product (descending) for InnerProduct.
	Dists Matrix[float32]
}

// ComputeGroundTruth finds the exact top-opt.K base rows of every query by
// brute force (asm.L2SqBatch / asm.DotBatch), in parallel over opt.Workers
// goroutines. base is n×d, queries nq×d, K <= n. Cost: n·nq·d
// multiply-adds; the base is scanned in L2-cache-sized blocks shared by a
// group of queries so it streams from memory once per group, not per query.
// It returns ctx.Err() if ctx is cancelled.
func ComputeGroundTruth(ctx context.Context, base, queries Matrix[float32], metric Metric, opt Options) (GroundTruth, error) {
	opt.EnsureDefaults()
	if err := opt.Validate(); err != nil {
		return GroundTruth{}, err
	}
	if metric != L2 && metric != InnerProduct {
		return GroundTruth{}, fmt.Errorf("datasets: unknown metric %v", metric)
	}
	if base.D != queries.D || base.D <= 0 || len(base.Data) != base.N*base.D || len(queries.Data) != queries.N*queries.D {
		return GroundTruth{}, fmt.Errorf("datasets: ground truth: bad shapes base %d×%d (%d values), queries %d×%d (%d values)",
			base.N, base.D, len(base.Data), queries.N, queries.D, len(queries.Data))
	}
	k := opt.K
	if k > base.N {
		return GroundTruth{}, fmt.Errorf("datasets: ground truth: K = %d > %d base vectors", k, base.N)
	}
	nq, d := queries.N, base.D
	gt := GroundTruth{Metric: metric, K: k,
		IDs:   Matrix[int32]{N: nq, D: k, Data: make([]int32, nq*k)},
		Dists: Matrix[float32]{N: nq, D: k, Data: make([]float32, nq*k)},
	}
	const queryGroup = 16
	blockRows := max(64, (128<<10)/(4*d)) // ~128 KiB of base per block
	var next atomic.Int64
	var wg sync.WaitGroup
	var cancelled atomic.Bool
	for range min(opt.Workers, (nq+queryGroup-1)/queryGroup) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			heaps := make([]topK, queryGroup)
			for i := range heaps {
				heaps[i] = topK{key: make([]float32, 0, k), id: make([]int32, 0, k)}
			}
			out := make([]float32, blockRows)
			for {
				g0 := int(next.Add(queryGroup)) - queryGroup
				if g0 >= nq || cancelled.Load() {
					return
				}
				if ctx.Err() != nil {
					cancelled.Store(true)
					return
				}
				g1 := min(g0+queryGroup, nq)
				for i := range heaps {
					heaps[i].reset(k)
				}
				for b0 := 0; b0 < base.N; b0 += blockRows {
					b1 := min(b0+blockRows, base.N)
					blk := base.Data[b0*d : b1*d]
					o := out[:b1-b0]
					for qi := g0; qi < g1; qi++ {
						q := queries.Row(qi)
						h := &heaps[qi-g0]
						sign := float32(1) // keys are "smaller is better"
						if metric == L2 {
							asm.L2SqBatch(q, blk, o)
						} else {
							asm.DotBatch(q, blk, o)
							sign = -1
						}
						j := 0
						for ; j < len(o) && len(h.key) < k; j++ {
							h.push(sign*o[j], int32(b0+j))
						}
						// Heap full: ids only grow, so an equal key never
						// displaces the current worst; a strict < test
						// filters almost every candidate without a call.
						if j == len(o) {
							continue // heap not full (tiny block or NaNs)
						}
						for thr := h.key[0]; j < len(o); j++ {
							if s := sign * o[j]; s < thr {
								h.push(s, int32(b0+j))
								thr = h.key[0]
							}
						}
					}
				}
				for qi := g0; qi < g1; qi++ {
					heaps[qi-g0].sorted(gt.IDs.Row(qi), gt.Dists.Row(qi))
					if metric == InnerProduct {
						for j, v := range gt.Dists.Row(qi) {
							gt.Dists.Row(qi)[j] = -v
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return GroundTruth{}, err
	}
	return gt, nil
}

// topK keeps the k smallest (key, id) pairs in a max-heap (worst on top).
// Order: smaller key first, equal keys by smaller id.
type topK struct {
	k   int
	key []float32
	id  []int32
}

func (h *topK) reset(k int) { h.k, h.key, h.id = k, h.key[:0], h.id[:0] }

func worse(ka float32, ia int32, kb float32, ib int32) bool {
	return ka > kb || (ka == kb && ia > ib)
}

func (h *topK) push(key float32, id int32) {
	if key != key { // NaN never ranks
		return
	}
	if len(h.key) < h.k {
		h.key = append(h.key, key)
		h.id = append(h.id, id)
		for i := len(h.key) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(h.key[i], h.id[i], h.key[p], h.id[p]) {
				break
			}
			h.key[i], h.key[p] = h.key[p], h.key[i]
			h.id[i], h.id[p] = h.id[p], h.id[i]
			i = p
		}
		return
	}
	if !worse(h.key[0], h.id[0], key, id) {
		return
	}
	h.key[0], h.id[0] = key, id
	n := len(h.key)
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && worse(h.key[r], h.id[r], h.key[l], h.id[l]) {
			c = r
		}
		if !worse(h.key[c], h.id[c], h.key[i], h.id[i]) {
			break
		}
		h.key[i], h.key[c] = h.key[c], h.key[i]
		h.id[i], h.id[c] = h.id[c], h.id[i]
		i = c
	}
}

// sorted writes the heap best-first into ids/keys. Slots left unfilled
// (only possible when NaN distances were skipped) get id -1 and key 0.
func (h *topK) sorted(ids []int32, keys []float32) {
	idx := make([]int, len(h.key))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if worse(h.key[a], h.id[a], h.key[b], h.id[b]) {
			return 1
		}
		if worse(h.key[b], h.id[b], h.key[a], h.id[a]) {
			return -1
		}
		return 0
	})
	for j := range ids {
		if j < len(idx) {
			ids[j], keys[j] = h.id[idx[j]], h.key[idx[j]]
		} else {
			ids[j], keys[j] = -1, 0
		}
	}
}

// gtMeta is the sidecar that keys a cached ground truth to its inputs.
type gtMeta struct {
	Name     string `json:"name"`
	Metric   string `json:"metric"`
	K        int    `json:"k"`
	N        int    `json:"n"`
	NQ       int    `json:"nq"`
	D        int    `json:"d"`
	BaseCRC  uint32 `json:"base_crc32c"`
	QueryCRC uint32 `json:"query_crc32c"`
}

func fingerprint(m Matrix[float32]) uint32 {
	if len(m.Data) == 0 {
		return 0
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&m.Data[0])), 4*len(m.Data))
	return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))
}

// GroundTruthPaths returns the cache files for (name, metric, k) under
// cacheDir: <cacheDir>/groundtruth/<name>.<metric>.k<k>.{ivecs,dist.fvecs,json}.
func GroundTruthPaths(cacheDir, name string, metric Metric, k int) (ids, dists, meta string) {
	p := filepath.Join(cacheDir, "groundtruth", fmt.Sprintf("%s.%s.k%d", name, metric, k))
	return p + ".ivecs", p + ".dist.fvecs", p + ".json"
}

// CachedGroundTruth returns the ground truth of (base, queries, metric,
// opt.K) from cacheDir if a cached copy keyed by name, metric and K exists
// and its sidecar matches the inputs' shapes and CRC-32C fingerprints;
// otherwise it computes it with ComputeGroundTruth and stores it (each file
// written atomically, the sidecar last). fromCache tells which happened.
func CachedGroundTruth(ctx context.Context, cacheDir, name string, base, queries Matrix[float32], metric Metric, opt Options) (gt GroundTruth, fromCache bool, err error) {
	opt.EnsureDefaults()
	ip, dp, mp := GroundTruthPaths(cacheDir, name, metric, opt.K)
	want := gtMeta{Name: name, Metric: metric.String(), K: opt.K, N: base.N, NQ: queries.N, D: base.D,
		BaseCRC: fingerprint(base), QueryCRC: fingerprint(queries)}
	if b, err := os.ReadFile(mp); err == nil {
		var have gtMeta
		if json.Unmarshal(b, &have) == nil && have == want {
			ids, err1 := ReadIvecs(ip)
			ds, err2 := ReadFvecs(dp)
			if err1 == nil && err2 == nil && ids.N == queries.N && ids.D == opt.K && ds.N == ids.N && ds.D == ids.D {
				return GroundTruth{Metric: metric, K: opt.K, IDs: ids, Dists: ds}, true, nil
			}
		}
	}
	gt, err = ComputeGroundTruth(ctx, base, queries, metric, opt)
	if err != nil {
		return gt, false, err
	}
	if err := os.MkdirAll(filepath.Dir(ip), 0o755); err != nil {
		return gt, false, fmt.Errorf("datasets: %w", err)
	}
	os.Remove(mp) // invalidate before replacing the data files
	if err := WriteIvecs(ip, gt.IDs); err != nil {
		return gt, false, err
	}
	if err := WriteFvecs(dp, gt.Dists); err != nil {
		return gt, false, err
	}
	err = WriteFileAtomic(mp, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(want)
	})
	return gt, false, err
}
