package ivfpq

import (
	"math"
	"math/rand/v2"
	"slices"
)

// gaussianBlobs returns n points in d dimensions around nc centres drawn
// uniformly in [-spread, spread]^d, with unit-variance noise·sigma, and the
// centre index of each point.
func gaussianBlobs(seed uint64, n, d, nc int, spread, sigma float64) (x []float32, centres []float32, label []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	centres = make([]float32, nc*d)
	for i := range centres {
		centres[i] = float32((rng.Float64()*2 - 1) * spread)
	}
	x = make([]float32, n*d)
	label = make([]int, n)
	for i := 0; i < n; i++ {
		c := i % nc
		label[i] = c
		for j := 0; j < d; j++ {
			x[i*d+j] = centres[c*d+j] + float32(rng.NormFloat64()*sigma)
		}
	}
	return
}

// randVecs returns n×d standard normal vectors (optionally unit-normalised).
func randVecs(seed uint64, n, d int, normalise bool) []float32 {
	rng := rand.New(rand.NewPCG(seed, 2))
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	if normalise {
		for i := 0; i < n; i++ {
			var s float64
			for _, v := range x[i*d : (i+1)*d] {
				s += float64(v) * float64(v)
			}
			inv := float32(1 / math.Sqrt(s))
			for j := i * d; j < (i+1)*d; j++ {
				x[j] *= inv
			}
		}
	}
	return x
}

// bruteForce returns, per query, the k nearest ids and exact float64
// distances (L2²or −ip) over the rows of x for which keep(id) is true.
func bruteForce(x, qs []float32, d, k int, metric Metric, keep func(uint32) bool) ([][]uint32, [][]float32) {
	n, nq := len(x)/d, len(qs)/d
	ids := make([][]uint32, nq)
	dists := make([][]float32, nq)
	for qi := 0; qi < nq; qi++ {
		q := qs[qi*d : (qi+1)*d]
		type c struct {
			d  float64
			id uint32
		}
		all := make([]c, 0, n)
		for i := 0; i < n; i++ {
			if keep != nil && !keep(uint32(i)) {
				continue
			}
			all = append(all, c{exactDist(q, x[i*d:(i+1)*d], metric), uint32(i)})
		}
		slices.SortFunc(all, func(a, b c) int {
			if a.d != b.d {
				if a.d < b.d {
					return -1
				}
				return 1
			}
			return int(a.id) - int(b.id)
		})
		for _, e := range all[:min(k, len(all))] {
			ids[qi] = append(ids[qi], e.id)
			dists[qi] = append(dists[qi], float32(e.d))
		}
	}
	return ids, dists
}

func exactDist(q, v []float32, metric Metric) float64 {
	var s float64
	for j := range q {
		if metric == IP {
			s -= float64(q[j]) * float64(v[j])
		} else {
			t := float64(q[j]) - float64(v[j])
			s += t * t
		}
	}
	return s
}

// recallAt returns the mean fraction of the true top-k ids found in the
// returned top-k (id intersection).
func recallAt(got [][]Result, gt [][]uint32, k int) float64 {
	var sum float64
	for qi := range got {
		truth := map[uint32]bool{}
		for _, id := range gt[qi][:k] {
			truth[id] = true
		}
		hit := 0
		for _, r := range got[qi][:min(k, len(got[qi]))] {
			if truth[r.ID] {
				hit++
			}
		}
		sum += float64(hit) / float64(k)
	}
	return sum / float64(len(got))
}
