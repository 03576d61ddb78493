package bench

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"time"

	"github.com/stratasearch/strata/datasets"
	"github.com/stratasearch/strata/engine/ivfpq"
)

// IVF-PQ part of the ann suite: per data set, Strata's engine/ivfpq 8-bit
// ADC and 4-bit fast-scan paths, each with refinement by exact vectors,
// against FAISS IndexRefineFlat(IVF{nlist},PQ{M}) and
// IndexRefineFlat(IVF{nlist},PQ{M}x4fs) (python3-faiss, one thread), with
// the same nlist, M, nbits, refine k_factor, residual choice, training
// data (the whole base; both subsample to 256 points per centroid) and
// nprobe sweep.

// Refine k_factor of the two paths (the engine/ivfpq Vaswani acceptance
// settings: 8-bit ×4, 4-bit ×10).
const (
	ivfKFactor8 = 4
	ivfKFactor4 = 10
)

// ivfNprobe is the nprobe sweep; values above nlist are dropped, and 128
// and 256 are added for nlist ≥ 512.
var ivfNprobe = []int{1, 2, 4, 8, 16, 32, 64}

// ivfBytesMethod says how IVF-PQ bytes per vector are counted, for both sides.
const ivfBytesMethod = "PQ code bytes + id bytes per vector in the inverted lists (Strata: ivfpq.Index.BytesPerVector, 4-byte ids; FAISS: code_size + 8-byte idx_t); the exact vectors kept for refinement (4·d bytes, both engines) and the centroid tables are not counted"

// ivfSetup is the IVF-PQ configuration of one data set.
type ivfSetup struct {
	nlist    int // as used (after quick-mode scaling)
	refNlist int // from REFERENCE.md
	m8, m4   int // PQ sub-quantizers of the 8-bit and 4-bit paths
	residual bool
	nprobe   []int
	note     string
}

// finish scales nlist in quick mode (nlist = min(reference, round(4·√n)))
// and sets the residual choice, the sweep and the description. Residual
// encoding follows engine/ivfpq's default (on for L2, off for IP) and is
// imposed on FAISS too (by_residual), so both engines index the same way.
func (v *ivfSetup) finish(n, d int, metric datasets.Metric, quick bool) {
	v.refNlist = v.nlist
	how := "as in REFERENCE.md"
	if quick {
		if s := int(math.Round(4 * math.Sqrt(float64(n)))); s < v.nlist {
			v.nlist = s
			how = fmt.Sprintf("quick mode: scaled down from %d to round(4·√n) for n = %d", v.refNlist, n)
		}
	}
	for _, m := range []*int{&v.m8, &v.m4} {
		if *m <= 0 || d%*m != 0 {
			*m = d
		}
	}
	v.residual = metric == datasets.L2
	v.nprobe = nil
	sweep := append([]int(nil), ivfNprobe...)
	if v.nlist >= 512 {
		sweep = append(sweep, 128, 256)
	}
	for _, p := range sweep {
		if p <= v.nlist {
			v.nprobe = append(v.nprobe, p)
		}
	}
	if len(v.nprobe) == 0 || v.nprobe[len(v.nprobe)-1] < v.nlist && v.nlist <= 64 {
		v.nprobe = append(v.nprobe, v.nlist)
	}
	v.note = fmt.Sprintf("nlist=%d (%s); 8-bit: IVF%d,PQ%d, refine k_factor %d; 4-bit fast-scan: IVF%d,PQ%dx4fs, refine k_factor %d; by_residual=%v; nprobe %v; trained on the whole base",
		v.nlist, how, v.nlist, v.m8, ivfKFactor8, v.nlist, v.m4, ivfKFactor4, v.residual, v.nprobe)
}

// params are the ANNParams of the nbits path.
func (v *ivfSetup) params(nbits int) ANNParams {
	p := ANNParams{K: annK, Threads: 1, Nlist: v.nlist, Nbits: nbits, ByResidual: v.residual, Nprobe: v.nprobe}
	if nbits == 8 {
		p.M, p.KFactor = v.m8, ivfKFactor8
	} else {
		p.M, p.KFactor = v.m4, ivfKFactor4
	}
	return p
}

// strataIVFEngine runs engine/ivfpq in this process, one thread (training,
// adding and SearchBatch with threads = 1).
type strataIVFEngine struct {
	d  *annData
	p  ANNParams
	ix *ivfpq.Index
}

func (e *strataIVFEngine) name() string {
	if e.p.Nbits == 4 {
		return EngineStrataIVFPQ4
	}
	return EngineStrataIVFPQ8
}

func (e *strataIVFEngine) params() ANNParams { return e.p }

func (e *strataIVFEngine) build() (ANNRun, error) {
	metric := ivfpq.L2
	if e.d.metric == datasets.InnerProduct {
		metric = ivfpq.IP
	}
	res := ivfpq.ResidualOff
	if e.p.ByResidual {
		res = ivfpq.ResidualOn
	}
	runtime.GC()
	w0, c0 := time.Now(), processCPU()
	// Spherical coarse k-means for inner product, as the FAISS peer's
	// IndexIVF (cp.spherical is set for METRIC_INNER_PRODUCT): the same
	// clustering on both sides (ivfpq doc.go "Coarse clustering").
	ix, err := ivfpq.New(ivfpq.Options{Dim: e.d.base.D, Metric: metric, Nlist: e.p.Nlist, M: e.p.M, Nbits: e.p.Nbits,
		Residual: res, Seed: 42, Threads: 1, SphericalCoarse: metric == ivfpq.IP})
	if err != nil {
		return ANNRun{}, err
	}
	if err := ix.Train(e.d.base.Data); err != nil {
		return ANNRun{}, err
	}
	tw, tc := time.Since(w0).Seconds(), processCPU()-c0
	if _, err := ix.Add(nil, e.d.base.Data); err != nil {
		return ANNRun{}, err
	}
	if err := ix.SetRefineVectors(e.d.base.Data); err != nil {
		return ANNRun{}, err
	}
	wall, cpu := time.Since(w0).Seconds(), processCPU()-c0
	e.ix = ix
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	spec := fmt.Sprintf("IVF%d,PQ%d", e.p.Nlist, e.p.M)
	if e.p.Nbits == 4 {
		spec += "x4fs"
	}
	return ANNRun{Engine: e.name(), Version: "this tree (" + runtime.Version() + ")", PID: os.Getpid(),
		BuildWallS: wall, BuildCPUS: cpu, TrainWallS: tw, TrainCPUS: tc, AddWallS: wall - tw, AddCPUS: cpu - tc,
		BytesPerVector: ix.BytesPerVector(), BytesMethod: ivfBytesMethod, RSSBytes: int64(ms.Sys),
		Index: fmt.Sprintf("ivfpq refine(%s, k_factor=%d, by_residual=%v, spherical=%v)", spec, e.p.KFactor, e.p.ByResidual, metric == ivfpq.IP)}, nil
}

// search runs the whole query set through one SearchBatch call per pass
// (threads = 1), as the peers make one batch call.
func (e *strataIVFEngine) search(nprobe int, minTime time.Duration) (ANNPoint, []int64, error) {
	nq := e.d.queries.N
	ids := make([]int64, nq*annK)
	for i := range ids {
		ids[i] = -1
	}
	p := ivfpq.SearchParams{Nprobe: nprobe, KFactor: e.p.KFactor}
	reps := 0
	w0, c0 := time.Now(), processCPU()
	for {
		out, err := e.ix.SearchBatch(e.d.queries.Data, annK, p, 1)
		if err != nil {
			return ANNPoint{}, nil, err
		}
		if reps == 0 {
			for q, rs := range out {
				for j, r := range rs {
					if j < annK {
						ids[q*annK+j] = int64(r.ID)
					}
				}
			}
		}
		reps++
		if time.Since(w0) >= minTime {
			break
		}
	}
	wall, cpu := time.Since(w0).Seconds(), processCPU()-c0
	pt := point(0, reps, nq, wall, cpu)
	pt.Nprobe = nprobe
	return pt, ids, nil
}

func (e *strataIVFEngine) close() {
	if e.ix != nil {
		e.ix.Close()
	}
}
