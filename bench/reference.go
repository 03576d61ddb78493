package bench

import "math"

// referenceAnchor is a peer's QPS at recall@10 = 0.90 / 0.95 / 0.99 as
// ../shared/REFERENCE.md gives it for a full run (every base vector, the
// first 2,000 queries, one thread). 0 means the reference gives no figure;
// AtLeast marks a "≥" figure (the peer's curve starts above the target).
type referenceAnchor struct {
	Dataset, Engine, Source string
	QPS                     [3]float64
	AtLeast                 [3]bool
}

// referenceAnchors are the REFERENCE.md rows for the HNSW-family peers
// measured with the same builds and parameters as ours: hnswlib 0.6.2
// compiled with -O3 -march=native (our hnswlib-native driver), Debian's
// python3-hnswlib (hnswlib-python), and the USearch npm binary. The FAISS
// rows are left out: the strong anchors are a source build with AVX-512
// (ours is Debian's 1.7.3), and the Debian floors used the reference BLAS
// (our run has OpenBLAS, which speeds up the flat and IVF engines) without
// stating the IVF or HNSW build settings behind each figure.
var referenceAnchors = []referenceAnchor{
	{Dataset: DatasetFashion, Engine: "hnswlib-native", Source: "strong anchors, M=16", QPS: [3]float64{16480, 14610, 8680}, AtLeast: [3]bool{true}},
	{Dataset: DatasetGloVe, Engine: "hnswlib-native", Source: "strong anchors, best of M=16/32", QPS: [3]float64{6130, 3310, 1160}},
	{Dataset: DatasetFashion, Engine: "usearch", Source: "strong anchors", QPS: [3]float64{7000, 6100, 3910}, AtLeast: [3]bool{true}},
	{Dataset: DatasetGloVe, Engine: "usearch", Source: "strong anchors", QPS: [3]float64{2870, 1550, 0}},
	{Dataset: DatasetFashion, Engine: "hnswlib-python", Source: "Debian floors, M=16, efC=200", QPS: [3]float64{10100, 8550, 4800}, AtLeast: [3]bool{true}},
	{Dataset: DatasetGloVe, Engine: "hnswlib-python", Source: "Debian floors, M=16 and 32 combined", QPS: [3]float64{4590, 2530, 900}},
	{Dataset: DatasetVaswani, Engine: "hnswlib-python", Source: "Debian floors, M=16, efC=200", QPS: [3]float64{17650, 12860, 7430}},
}

// referenceTolerance is the factor beyond which a peer's measured QPS is
// flagged: REFERENCE.md says its speeds are noisy (±15%) and come from
// another machine of the same class, so only a gross difference points at
// the harness (data, query sample, ground truth) rather than the machine.
const referenceTolerance = 2.0

// referenceCheck is one peer figure measured here against REFERENCE.md.
type referenceCheck struct {
	Dataset, Engine, Source string
	Recall                  float64
	Measured, Reference     float64
	Ratio                   float64 // Measured / Reference
	Flag                    bool    // Ratio outside [1/referenceTolerance, referenceTolerance]
}

// referenceChecks compares every peer run of a full (not quick, not
// emulated, not subsampled) ANN run with its REFERENCE.md anchor, at each
// target recall the reference gives a figure for. Lower-bound figures
// (either side's curve starting above the target) are skipped: they are
// not comparable. A peer whose curve never reaches a recall the reference
// reaches is reported as a flagged check with Measured 0: a wrong ground
// truth or query set looks exactly like that.
func referenceChecks(res *Results) []referenceCheck {
	if res.Quick || res.Emulated {
		return nil
	}
	full := map[string]bool{}
	for _, ds := range res.Datasets {
		full[ds.Name] = ds.N == ds.FullN && ds.NQ == min(ds.FullNQ, FullQueries)
	}
	var out []referenceCheck
	for _, a := range referenceAnchors {
		if !full[a.Dataset] {
			continue
		}
		for _, r := range res.ANN {
			if r.Dataset != a.Dataset || r.Engine != a.Engine {
				continue
			}
			for i, at := range r.At {
				if i >= len(a.QPS) || a.QPS[i] == 0 || a.AtLeast[i] || at.AboveStart {
					continue
				}
				if !at.Reached {
					out = append(out, referenceCheck{Dataset: a.Dataset, Engine: a.Engine, Source: a.Source, Recall: at.Recall,
						Reference: a.QPS[i], Flag: true})
					continue
				}
				ratio := at.QPSCPU / a.QPS[i]
				out = append(out, referenceCheck{Dataset: a.Dataset, Engine: a.Engine, Source: a.Source, Recall: at.Recall,
					Measured: at.QPSCPU, Reference: a.QPS[i], Ratio: ratio,
					Flag: ratio > referenceTolerance || ratio < 1/referenceTolerance || math.IsNaN(ratio)})
			}
		}
	}
	return out
}

// reportReferenceChecks writes the sanity-check table: the peers' absolute
// QPS here against REFERENCE.md's, so that a harness fault (a biased query
// sample, wrong ground truth) shows up as a peer running far from its
// reference speed.
func reportReferenceChecks(w func(string, ...any), res *Results) {
	cs := referenceChecks(res)
	if len(cs) == 0 {
		return
	}
	w("### Harness sanity check: peers against ../shared/REFERENCE.md\n\n")
	w("The peers' CPU QPS measured here against the figures REFERENCE.md gives for the same builds on the same data (another machine of this class; ±15%% noise). A ratio outside %.1f× either way is flagged: it points at the harness (data, query sample, ground truth) before the engines.\n\n", referenceTolerance)
	w("| data set | peer | reference row | recall@10 | QPS here | REFERENCE.md | here / reference | |\n|---|---|---|---|---|---|---|---|\n")
	for _, c := range cs {
		flag := "ok"
		if c.Flag {
			flag = "**check the harness**"
		}
		if c.Measured == 0 {
			w("| %s | %s | %s | %.2f | not reached | %.0f | – | %s |\n", c.Dataset, c.Engine, c.Source, c.Recall, c.Reference, flag)
			continue
		}
		w("| %s | %s | %s | %.2f | %.0f | %.0f | %.2f× | %s |\n", c.Dataset, c.Engine, c.Source, c.Recall, c.Measured, c.Reference, c.Ratio, flag)
	}
	w("\n")
}
