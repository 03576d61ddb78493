package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/stratasearch/strata/datasets"
	"github.com/stratasearch/strata/engine/hnsw"
	"github.com/stratasearch/strata/eval"
)

// ANN data set names accepted by Config.Datasets.
const (
	DatasetVaswani = "vaswani-use512"
	DatasetFashion = "fashion-mnist-784"
	DatasetGloVe   = "glove-6b-100-angular"
)

// ANNDatasets lists the real data sets of the ann suite, in run order.
var ANNDatasets = []string{DatasetVaswani, DatasetFashion, DatasetGloVe}

// Quick-mode subsampling: QuickBase base vectors spread evenly over the
// base (strideSubset) and the first QuickQueries queries; the ground truth
// is recomputed by brute force.
const (
	QuickBase    = 10000
	QuickQueries = 500
)

// FullQueries caps the query set of a full run at its first 2,000
// queries, as ../shared/REFERENCE.md's peer figures are measured; the
// cached ground truth is cut to match.
const FullQueries = 2000

// RecallTargets are the recall@10 values QPS is interpolated at.
var RecallTargets = []float64{0.90, 0.95, 0.99}

// Peer engine names of the ann suite.
const (
	EngineStrata        = "strata-hnsw"
	EngineStrataIVFPQ8  = "strata-ivfpq8"   // engine/ivfpq, 8-bit ADC + refine
	EngineStrataIVFPQ4  = "strata-ivfpq4fs" // engine/ivfpq, 4-bit fast-scan + refine
	PeerFAISSIVFPQ8     = "faiss-ivfpq8"    // IndexRefineFlat(IVF{nlist},PQ{M})
	PeerFAISSIVFPQ4     = "faiss-ivfpq4fs"  // IndexRefineFlat(IVF{nlist},PQ{M}x4fs)
	PeerHnswlibNative   = "hnswlib-native"
	PeerHnswlibPython   = "hnswlib-python"
	PeerUSearch         = "usearch"
	PeerFAISSHNSW       = "faiss-hnswflat"
	USearchNPMVersion   = "2.26.2"
	annK                = 10
	annSuiteName        = "ann"
	systemPython        = "/usr/bin/python3"
	hnswlibInclude      = "/usr/include/hnswlib/hnswlib.h"
	peerDirRelative     = "bench/peers/ann"
	hnswlibServerSource = "hnswlib_server.cc"
)

// ANNParts are the parts of the ann suite, in run order (Config.ANNParts).
var ANNParts = []string{"hnsw", "ivf", "flat"}

// ANNPeers is the HNSW peer list of the ann suite, in run order.
var ANNPeers = []string{PeerHnswlibNative, PeerUSearch, PeerFAISSHNSW, PeerHnswlibPython}

// ANNIVFPeers are the IVF-PQ peers, each compared with the Strata engine
// ivfPairs names.
var ANNIVFPeers = []string{PeerFAISSIVFPQ8, PeerFAISSIVFPQ4}

// ivfPairs maps an IVF-PQ peer to the Strata engine it is compared with.
var ivfPairs = map[string]string{PeerFAISSIVFPQ8: EngineStrataIVFPQ8, PeerFAISSIVFPQ4: EngineStrataIVFPQ4,
	PeerFAISSAVX2IVFPQ8: EngineStrataIVFPQ8, PeerFAISSAVX2IVFPQ4: EngineStrataIVFPQ4}

// strataFor is the Strata engine a peer's ratios are computed against.
func strataFor(peer string) string {
	if s, ok := ivfPairs[peer]; ok {
		return s
	}
	if isFlatPeer(peer) {
		return EngineStrataFlat
	}
	return EngineStrata
}

type annSuite struct{}

func init() { Register(annSuite{}) }

func (annSuite) Name() string { return annSuiteName }

// annData is one data set as every engine sees it.
type annData struct {
	info                DatasetInfo
	metric              datasets.Metric
	base                datasets.Matrix[float32]
	queries             datasets.Matrix[float32]
	gt                  datasets.GroundTruth
	efs                 []int
	minTime             time.Duration // per search point and round
	rounds              int           // sweeps over all engines; best kept
	basePath, queryPath string
	ivf                 ivfSetup
}

// engine is one participant of a data set's comparison. The search
// parameter is efSearch for HNSW engines and nprobe for IVF-PQ engines.
type annEngine interface {
	name() string
	params() ANNParams
	build() (ANNRun, error)
	search(param int, minTime time.Duration) (ANNPoint, []int64, error)
	close()
}

// Run builds every engine on every data set, alternating engines: builds
// in a rotated order, then each efSearch point is measured on all engines
// before the next (rotated again), so that the load of other processes on
// a shared machine falls on all of them alike.
func (annSuite) Run(ctx context.Context, cfg Config, res *Results) error {
	if cfg.Threads != 1 {
		return fmt.Errorf("the ann suite compares single-thread search only (got --threads %d)", cfg.Threads)
	}
	// Every peer is required: fail before any data is loaded. Only an
	// emulated run may go without (Config.NoPeers, checked by Validate).
	var drivers []peerDriver
	if !cfg.NoPeers {
		var err error
		if drivers, err = preparePeers(ctx, cfg); err != nil {
			return err
		}
		// The strong FAISS peers are optional (make peers-strong).
		dir := cfg.FAISSAVX2Dir
		if dir == "" {
			if dir, err = FAISSAVX2Dir(); err != nil {
				return err
			}
		}
		strong, note, err := prepareStrongPeers(ctx, cfg, dir)
		if err != nil {
			return err
		}
		if note != "" {
			cfg.logf("%s", note)
			res.Notes = append(res.Notes, note)
		}
		drivers = append(drivers, selectPeers(cfg, strong)...)
	}
	var sets []func() (*annData, error)
	if cfg.Synthetic != nil {
		sets = append(sets, func() (*annData, error) { return syntheticData(ctx, cfg) })
	} else {
		names := cfg.Datasets
		if len(names) == 0 {
			names = ANNDatasets
		}
		for _, n := range names {
			n := n
			if !contains(ANNDatasets, n) {
				return fmt.Errorf("unknown data set %q (have %s)", n, strings.Join(ANNDatasets, ", "))
			}
			sets = append(sets, func() (*annData, error) { return loadANNData(ctx, cfg, n) })
		}
	}
	for _, load := range sets {
		d, err := load()
		if err != nil {
			return err
		}
		if err := runANNDataset(ctx, cfg, res, d, drivers); err != nil {
			return err
		}
	}
	if cfg.Emulated && cfg.Synthetic != nil {
		// The emulated smoke run is a correctness check: at the widest
		// sweep point every engine must find nearly all true neighbours of
		// the clustered synthetic set (the harness test asks ≥ 0.95 natively).
		for _, r := range res.ANN {
			if n := len(r.Points); n == 0 || r.Points[n-1].Recall < 0.9 {
				return fmt.Errorf("emulated smoke: %s on %s: recall@10 at the last sweep point below 0.9 (%+v)", r.Engine, r.Dataset, r.Points)
			}
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// peerDriver starts one peer on a data set.
type peerDriver struct {
	name  string
	argv  []string // before the data arguments
	env   []string
	ivf   bool // an IVF-PQ peer (ANNIVFPeers, the strong IVF-PQ peers)
	nbits int  // IVF-PQ peers: the PQ code width they serve (8 or 4)
	flat  bool // a flat peer (isFlatPeer)
}

// preparePeers checks every peer, builds the C++ driver and installs the
// USearch npm package when missing. A missing peer is an error.
func preparePeers(ctx context.Context, cfg Config) ([]peerDriver, error) {
	dir := filepath.Join(cfg.RepoRoot, peerDirRelative)
	var errs []string
	// hnswlib C++ driver, built here with -march=native (without AVX-512
	// when cfg.PeersAVX2).
	bin := filepath.Join(cfg.WorkDir, "hnswlib_server")
	march := hnswlibFlags(cfg)
	if _, err := os.Stat(hnswlibInclude); err != nil {
		errs = append(errs, fmt.Sprintf("%s: %s missing (apt-get install libhnswlib-dev, or make peers)", PeerHnswlibNative, hnswlibInclude))
	} else {
		args := append([]string{"-O3"}, march...)
		args = append(args, "-std=c++17", `-DHNSWLIB_FLAGS="g++ -O3 `+strings.Join(march, " ")+`"`, "-o", bin, filepath.Join(dir, hnswlibServerSource))
		cmd := exec.CommandContext(ctx, "g++", args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			errs = append(errs, fmt.Sprintf("%s: g++ failed: %v: %s", PeerHnswlibNative, err, out))
		}
	}
	// Python peers: Debian's interpreter sees dist-packages.
	for _, p := range []struct{ engine, module, pkg string }{
		{PeerFAISSHNSW, "faiss", "python3-faiss"}, {PeerHnswlibPython, "hnswlib", "python3-hnswlib"}} {
		if out, err := exec.CommandContext(ctx, systemPython, "-c", "import numpy, "+p.module).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %s cannot import %s (apt-get install %s python3-numpy, or make peers): %v %s", p.engine, systemPython, p.module, p.pkg, err, strings.TrimSpace(string(out))))
		}
	}
	// USearch from npm, installed once into a cache directory.
	nm := cfg.NodeModules
	if nm == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			c = os.TempDir()
		}
		nm = filepath.Join(c, "strata", "bench-npm")
	}
	if _, err := exec.LookPath("node"); err != nil {
		errs = append(errs, fmt.Sprintf("%s: node not found", PeerUSearch))
	} else if err := ensureUSearch(ctx, cfg, nm); err != nil {
		errs = append(errs, fmt.Sprintf("%s: %v", PeerUSearch, err))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("missing peers:\n  %s", strings.Join(errs, "\n  "))
	}
	py := filepath.Join(dir, "py_server.py")
	return selectPeers(cfg, []peerDriver{
		{name: PeerHnswlibNative, argv: []string{bin}},
		{name: PeerUSearch, argv: []string{"node", filepath.Join(dir, "usearch_server.js")}, env: []string{"NODE_PATH=" + filepath.Join(nm, "node_modules")}},
		{name: PeerFAISSHNSW, argv: []string{systemPython, py, PeerFAISSHNSW}, env: []string{"OMP_NUM_THREADS=1"}},
		{name: PeerHnswlibPython, argv: []string{systemPython, py, PeerHnswlibPython}},
		// One OpenMP and one OpenBLAS thread: FAISS's k-means calls BLAS.
		{name: PeerFAISSIVFPQ8, argv: []string{systemPython, py, PeerFAISSIVFPQ8}, env: []string{"OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1"}, ivf: true, nbits: 8},
		{name: PeerFAISSIVFPQ4, argv: []string{systemPython, py, PeerFAISSIVFPQ4}, env: []string{"OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1"}, ivf: true, nbits: 4},
		// IndexFlat's batch search is one OpenBLAS sgemm: one thread.
		{name: PeerFAISSFlat, argv: []string{systemPython, py, PeerFAISSFlat}, env: []string{"OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1"}, flat: true},
	}), nil
}

// hnswlibFlags are the g++ target flags of the hnswlib-native driver.
func hnswlibFlags(cfg Config) []string {
	if cfg.PeersAVX2 {
		return []string{"-march=native", "-mno-avx512f"}
	}
	return []string{"-march=native"}
}

// selectPeers keeps the drivers cfg.Peers names (all when it is empty),
// with OPENBLAS_CORETYPE=Haswell added to the environment of the peers
// linked to OpenBLAS (the Python ones and the strong FAISS build) when
// cfg.PeersAVX2.
func selectPeers(cfg Config, all []peerDriver) []peerDriver {
	var out []peerDriver
	for _, pd := range all {
		if len(cfg.Peers) > 0 && !contains(cfg.Peers, pd.name) {
			continue
		}
		if cfg.PeersAVX2 && (len(pd.argv) > 0 && pd.argv[0] == systemPython || contains(ANNStrongPeers, pd.name)) {
			pd.env = append(append([]string(nil), pd.env...), "OPENBLAS_CORETYPE=Haswell")
		}
		out = append(out, pd)
	}
	return out
}

// anyPeer reports whether drivers has a peer that want accepts.
func anyPeer(drivers []peerDriver, want func(peerDriver) bool) bool {
	for _, pd := range drivers {
		if want(pd) {
			return true
		}
	}
	return false
}

func ensureUSearch(ctx context.Context, cfg Config, dir string) error {
	pj := filepath.Join(dir, "node_modules", "usearch", "package.json")
	if b, err := os.ReadFile(pj); err == nil && strings.Contains(string(b), `"version": "`+USearchNPMVersion+`"`) {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cfg.logf("installing usearch@%s into %s", USearchNPMVersion, dir)
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-save", "--no-audit", "--no-fund", "--prefix", dir, "usearch@"+USearchNPMVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm install usearch@%s: %v: %s", USearchNPMVersion, err, out)
	}
	return nil
}

// loadANNData reads a real data set, subsamples it in quick mode, and
// obtains the ground truth.
func loadANNData(ctx context.Context, cfg Config, name string) (*annData, error) {
	d := &annData{}
	var base, queries datasets.Matrix[float32]
	var gt datasets.GroundTruth
	haveGT := false
	switch name {
	case DatasetVaswani:
		dir, err := datasets.Dir()
		if err != nil {
			return nil, err
		}
		bp, qp := filepath.Join(dir, "vaswani", "use512-docs.fvecs"), filepath.Join(dir, "vaswani", "use512-queries.fvecs")
		if base, err = datasets.ReadFvecs(bp); err != nil {
			return nil, err
		}
		if queries, err = datasets.ReadFvecs(qp); err != nil {
			return nil, err
		}
		d.metric = datasets.InnerProduct
		d.info.Source = bp + ", " + qp
		d.info.M, d.info.EfConst = 16, 200
		d.ivf = ivfSetup{nlist: 64, m8: 64, m4: 128}
	case DatasetFashion, DatasetGloVe:
		cache, err := datasets.CacheDir()
		if err != nil {
			return nil, err
		}
		cname := datasets.FashionMNIST
		d.info.M, d.info.EfConst = 16, 200
		d.ivf = ivfSetup{nlist: 256, m8: 56, m4: 56}
		if name == DatasetGloVe {
			cname = datasets.GloVe6B100
			d.info.M = 32
			d.ivf = ivfSetup{nlist: 1024, m8: 50, m4: 50}
		}
		a, err := datasets.LoadANN(cache, cname, datasets.DefaultK)
		if err != nil {
			return nil, err
		}
		base, queries, d.metric = a.Base, a.Queries, a.Metric
		gt, haveGT = a.GT, true
		d.info.Source = filepath.Join(cache, cname) + " (make datasets)"
	}
	d.info.Name = name
	d.info.FullN, d.info.FullNQ = base.N, queries.N
	if cfg.Quick {
		baseDesc := fmt.Sprintf("all %d base vectors", base.N)
		if base.N > QuickBase {
			base, baseDesc = strideSubset(base, QuickBase)
			haveGT = false
		}
		if queries.N > QuickQueries {
			queries = datasets.Matrix[float32]{Data: queries.Data[:QuickQueries*queries.D], N: QuickQueries, D: queries.D}
			if haveGT {
				gt.IDs.N, gt.IDs.Data = QuickQueries, gt.IDs.Data[:QuickQueries*gt.IDs.D]
				gt.Dists.N, gt.Dists.Data = QuickQueries, gt.Dists.Data[:QuickQueries*gt.Dists.D]
			}
		}
		if base.N < d.info.FullN || queries.N < d.info.FullNQ {
			d.info.Subset = fmt.Sprintf("quick: %s, first %d of %d queries; ground truth recomputed by brute force on the subset", baseDesc, queries.N, d.info.FullNQ)
		}
	} else if queries.N > FullQueries {
		queries = datasets.Matrix[float32]{Data: queries.Data[:FullQueries*queries.D], N: FullQueries, D: queries.D}
		if haveGT {
			gt.IDs.N, gt.IDs.Data = FullQueries, gt.IDs.Data[:FullQueries*gt.IDs.D]
			gt.Dists.N, gt.Dists.Data = FullQueries, gt.Dists.Data[:FullQueries*gt.Dists.D]
		}
		d.info.Subset = fmt.Sprintf("all %d base vectors, first %d of %d queries (as REFERENCE.md)", base.N, queries.N, d.info.FullNQ)
	}
	if haveGT {
		d.info.GTNote = fmt.Sprintf("cached exact top-%d from make datasets (datasets.LoadANN)", gt.K)
	} else {
		cfg.logf("%s: brute-force ground truth for %d queries over %d vectors", name, queries.N, base.N)
		var err error
		gt, err = datasets.ComputeGroundTruth(ctx, base, queries, d.metric, datasets.Options{K: annK})
		if err != nil {
			return nil, err
		}
		d.info.GTNote = fmt.Sprintf("exact top-%d by brute force (datasets.ComputeGroundTruth)", annK)
	}
	d.base, d.queries, d.gt = base, queries, gt
	d.efs = []int{10, 16, 24, 32, 48, 64, 96, 128, 256, 512}
	d.minTime, d.rounds = 200*time.Millisecond, 3
	if cfg.Quick {
		d.efs = []int{10, 16, 32, 64, 128, 256}
		d.minTime, d.rounds = 100*time.Millisecond, 2
	}
	d.ivf.finish(d.base.N, d.base.D, d.metric, cfg.Quick)
	return d, finishData(cfg, d)
}

// syntheticData is a seeded Gaussian-mixture data set for the harness test.
func syntheticData(ctx context.Context, cfg Config) (*annData, error) {
	s := cfg.Synthetic
	r := rand.New(rand.NewPCG(s.Seed, 99))
	centres := make([]float32, 16*s.D)
	for i := range centres {
		centres[i] = float32(r.NormFloat64())
	}
	gen := func(n int) datasets.Matrix[float32] {
		m := datasets.Matrix[float32]{Data: make([]float32, n*s.D), N: n, D: s.D}
		for i := 0; i < n; i++ {
			c := r.IntN(16)
			row := m.Data[i*s.D : (i+1)*s.D]
			for j := range row {
				row[j] = centres[c*s.D+j] + 0.5*float32(r.NormFloat64())
			}
			if s.Metric == "ip" {
				normalise(row)
			}
		}
		return m
	}
	d := &annData{base: gen(s.N), queries: gen(s.NQ)}
	d.metric = datasets.L2
	if s.Metric == "ip" {
		d.metric = datasets.InnerProduct
	}
	d.info = DatasetInfo{Name: fmt.Sprintf("synthetic-%d", s.D), FullN: s.N, FullNQ: s.NQ, Source: fmt.Sprintf("generated: 16-centre Gaussian mixture, seed %d", s.Seed), M: 16, EfConst: 200}
	var err error
	d.gt, err = datasets.ComputeGroundTruth(ctx, d.base, d.queries, d.metric, datasets.Options{K: annK})
	if err != nil {
		return nil, err
	}
	d.info.GTNote = fmt.Sprintf("exact top-%d by brute force (datasets.ComputeGroundTruth)", annK)
	d.efs = []int{10, 20, 40, 80}
	d.minTime, d.rounds = 20*time.Millisecond, 2
	d.ivf = ivfSetup{nlist: 16, m8: s.D / 2, m4: s.D / 2}
	d.ivf.finish(d.base.N, d.base.D, d.metric, false)
	return d, finishData(cfg, d)
}

func normalise(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	r := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= r
	}
}

// finishData writes the files every peer reads and fills the info fields.
func finishData(cfg Config, d *annData) error {
	d.info.Metric = d.metric.String()
	d.info.N, d.info.NQ, d.info.D = d.base.N, d.queries.N, d.base.D
	d.info.IVF = d.ivf.note
	dir := filepath.Join(cfg.WorkDir, d.info.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	d.basePath, d.queryPath = filepath.Join(dir, "base.fvecs"), filepath.Join(dir, "queries.fvecs")
	if err := datasets.WriteFvecs(d.basePath, d.base); err != nil {
		return err
	}
	if err := datasets.WriteFvecs(d.queryPath, d.queries); err != nil {
		return err
	}
	var sums []string
	for _, p := range []string{d.basePath, d.queryPath} {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return err
		}
		sums = append(sums, hex.EncodeToString(h.Sum(nil))[:16])
	}
	d.info.SHA256 = strings.Join(sums, "+")
	return nil
}

// runANNDataset runs all engines on one data set and appends runs and
// ratios: first the HNSW engines over the efSearch sweep, then the IVF-PQ
// engines (Strata's two paths and their FAISS peers) over the nprobe sweep,
// then the flat engines; parts not in a non-empty cfg.ANNParts are left out.
func runANNDataset(ctx context.Context, cfg Config, res *Results, d *annData, drivers []peerDriver) error {
	m := d.info.M
	params := ANNParams{M: m, EfConstruction: d.info.EfConst, K: annK, EfSearch: d.efs, Threads: 1}
	cfg.logf("%s: n=%d nq=%d d=%d metric=%s M=%d efC=%d", d.info.Name, d.base.N, d.queries.N, d.base.D, d.info.Metric, m, d.info.EfConst)
	engines := []annEngine{&strataEngine{d: d, p: params}}
	defer func() {
		for _, e := range engines {
			e.close()
		}
	}()
	part := func(p string) bool { return len(cfg.ANNParts) == 0 || contains(cfg.ANNParts, p) }
	if !part("hnsw") {
		engines = nil
	}
	for _, pd := range drivers {
		if pd.ivf || pd.flat || !part("hnsw") {
			continue
		}
		argv := append(append([]string(nil), pd.argv...), d.basePath, d.queryPath, d.info.Metric,
			strconv.Itoa(m), strconv.Itoa(d.info.EfConst), strconv.Itoa(annK))
		e, err := startPeerEngine(res, d, pd, argv, params)
		if err != nil {
			return err
		}
		engines = append(engines, e)
	}
	rot := len(res.Datasets)
	first := len(res.ANN)
	// With cfg.Peers naming no HNSW peer, the HNSW part is skipped.
	if len(cfg.Peers) == 0 || len(engines) > 1 {
		runs, err := runEngines(ctx, cfg, d, engines, d.efs, rot)
		if err != nil {
			return err
		}
		res.ANN = append(res.ANN, runs...)
	}
	if len(cfg.Peers) > 0 && !anyPeer(drivers, func(pd peerDriver) bool { return pd.ivf }) {
		return runANNFlat(ctx, cfg, res, d, drivers, first, rot)
	}
	// IVF-PQ: Strata 8-bit, FAISS 8-bit, Strata 4-bit, FAISS 4-bit.
	v := d.ivf
	cfg.logf("%s: IVF-PQ %s", d.info.Name, v.note)
	var ivf []annEngine
	defer func() {
		for _, e := range ivf {
			e.close()
		}
	}()
	for _, nbits := range []int{8, 4} {
		if !part("ivf") {
			break
		}
		p := v.params(nbits)
		ivf = append(ivf, &strataIVFEngine{d: d, p: p})
		for _, pd := range drivers {
			if !pd.ivf || pd.nbits != nbits {
				continue
			}
			argv := append(append([]string(nil), pd.argv...), d.basePath, d.queryPath, d.info.Metric,
				strconv.Itoa(p.M), strconv.Itoa(p.Nlist), strconv.Itoa(annK),
				strconv.Itoa(p.Nbits), strconv.Itoa(p.KFactor), strconv.Itoa(b2i(p.ByResidual)))
			e, err := startPeerEngine(res, d, pd, argv, p)
			if err != nil {
				return err
			}
			ivf = append(ivf, e)
		}
	}
	runs, err := runEngines(ctx, cfg, d, ivf, v.nprobe, rot)
	if err != nil {
		return err
	}
	res.ANN = append(res.ANN, runs...)
	return runANNFlat(ctx, cfg, res, d, drivers, first, rot)
}

// runANNFlat is runANNDataset's last part: the flat engines (skipped when
// cfg.Peers names no flat peer), then the data set's ratios over
// res.ANN[first:].
func runANNFlat(ctx context.Context, cfg Config, res *Results, d *annData, drivers []peerDriver, first, rot int) error {
	part := func(p string) bool { return len(cfg.ANNParts) == 0 || contains(cfg.ANNParts, p) }
	if len(cfg.Peers) > 0 && !anyPeer(drivers, func(pd peerDriver) bool { return pd.flat }) {
		res.Datasets = append(res.Datasets, d.info)
		res.Ratios = append(res.Ratios, annRatios(res.ANN, first, len(res.ANN)-first)...)
		return nil
	}
	// Flat: exact search, one point.
	var flat []annEngine
	if part("flat") {
		flat = append(flat, &strataFlatEngine{d: d})
	}
	defer func() {
		for _, e := range flat {
			e.close()
		}
	}()
	for _, pd := range drivers {
		if !pd.flat || !part("flat") {
			continue
		}
		argv := append(append([]string(nil), pd.argv...), d.basePath, d.queryPath, d.info.Metric, "0", "0", strconv.Itoa(annK))
		e, err := startPeerEngine(res, d, pd, argv, flatParams())
		if err != nil {
			return err
		}
		flat = append(flat, e)
	}
	runs, err := runEngines(ctx, cfg, d, flat, []int{0}, rot)
	if err != nil {
		return err
	}
	res.ANN = append(res.ANN, runs...)
	res.Datasets = append(res.Datasets, d.info)
	res.Ratios = append(res.Ratios, annRatios(res.ANN, first, len(res.ANN)-first)...)
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// startPeerEngine starts a peer process on d and records its version.
func startPeerEngine(res *Results, d *annData, pd peerDriver, argv []string, params ANNParams) (*peerEngine, error) {
	p, err := startPeer(pd.name, argv, pd.env)
	if err != nil {
		return nil, err
	}
	if p.hello.N != d.base.N || p.hello.NQ != d.queries.N || p.hello.D != d.base.D {
		p.kill()
		return nil, fmt.Errorf("peer %s read %d×%d, %d queries; want %d×%d, %d", pd.name, p.hello.N, p.hello.D, p.hello.NQ, d.base.N, d.base.D, d.queries.N)
	}
	driver := strings.Join(pd.argv, " ")
	if len(pd.env) > 0 {
		driver = strings.Join(pd.env, " ") + " " + driver
	}
	addPeerInfo(res, PeerInfo{Engine: pd.name, Version: p.hello.Version, Driver: driver})
	return &peerEngine{p: p, d: d, p2: params, ivf: pd.ivf, flat: pd.flat}, nil
}

// runEngines builds engines in an order rotated by rot, then measures the
// sweep (efSearch or nprobe values) point by point, engines alternating,
// d.rounds times; each point keeps its best wall and best CPU throughput
// (ann-benchmarks keeps the best of several runs too). Recall is taken
// from the first round (searches are deterministic). Alternating spreads
// the load of other processes on a shared machine over all engines alike.
func runEngines(ctx context.Context, cfg Config, d *annData, engines []annEngine, sweep []int, rot int) ([]ANNRun, error) {
	runs := make([]ANNRun, len(engines))
	for i := range engines {
		j := (i + rot) % len(engines)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := engines[j].build()
		if err != nil {
			return nil, err
		}
		if r.TrainCPUS > 0 {
			cfg.logf("  %-16s build %.2f s wall, %.2f s cpu (train %.2f s cpu, add %.2f s cpu), %.0f B/vector", engines[j].name(), r.BuildWallS, r.BuildCPUS, r.TrainCPUS, r.AddCPUS, r.BytesPerVector)
		} else {
			cfg.logf("  %-16s build %.2f s wall, %.2f s cpu, %.0f B/vector", engines[j].name(), r.BuildWallS, r.BuildCPUS, r.BytesPerVector)
		}
		runs[j] = r
	}
	for j := range runs {
		runs[j].Points = make([]ANNPoint, len(sweep))
	}
	for round := 0; round < d.rounds; round++ {
		for pi, param := range sweep {
			for i := range engines {
				j := (i + pi + rot + round) % len(engines)
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				pt, ids, err := engines[j].search(param, d.minTime)
				if err != nil {
					return nil, err
				}
				pt.Rounds = 1
				prev := &runs[j].Points[pi]
				if round == 0 {
					if pt.Recall, err = recallOf(d, ids); err != nil {
						return nil, fmt.Errorf("%s: %w", engines[j].name(), err)
					}
					*prev = pt
					continue
				}
				if pt.QPSWall > prev.QPSWall {
					prev.Reps, prev.WallS, prev.CPUS, prev.QPSWall = pt.Reps, pt.WallS, pt.CPUS, pt.QPSWall
				}
				prev.QPSCPU = max(prev.QPSCPU, pt.QPSCPU)
				prev.Rounds++
			}
		}
	}
	for j, r := range runs {
		r.Dataset = d.info.Name
		r.Params = engines[j].params()
		r.At = qpsAtTargets(r.Points)
		for _, pt := range r.Points {
			if pt.Nprobe > 0 {
				cfg.logf("  %-16s nprobe=%-4d recall %.4f  qps wall %8.0f cpu %8.0f", r.Engine, pt.Nprobe, pt.Recall, pt.QPSWall, pt.QPSCPU)
			} else {
				cfg.logf("  %-16s ef=%-4d recall %.4f  qps wall %8.0f cpu %8.0f", r.Engine, pt.EfSearch, pt.Recall, pt.QPSWall, pt.QPSCPU)
			}
		}
		runs[j] = r
	}
	return runs, nil
}

func addPeerInfo(res *Results, p PeerInfo) {
	for _, q := range res.Peers {
		if q.Engine == p.Engine {
			return
		}
	}
	res.Peers = append(res.Peers, p)
}

// recallOf is mean recall@k of flat nq×k ids against the data set's ground
// truth, with exact distances recomputed for eval's tie rule.
func recallOf(d *annData, ids []int64) (float64, error) {
	nq, dim := d.queries.N, d.base.D
	got := make([][]int64, nq)
	gotD := make([][]float32, nq)
	gtIDs := make([][]int32, nq)
	gtD := make([][]float32, nq)
	order := eval.SmallerIsBetter
	if d.metric == datasets.InnerProduct {
		order = eval.LargerIsBetter
	}
	for q := 0; q < nq; q++ {
		got[q] = ids[q*annK : (q+1)*annK]
		gotD[q] = make([]float32, annK)
		qv := d.queries.Data[q*dim : (q+1)*dim]
		for j, id := range got[q] {
			if id < 0 || int(id) >= d.base.N {
				if id >= 0 {
					return 0, fmt.Errorf("query %d: id %d out of range [0, %d)", q, id, d.base.N)
				}
				continue
			}
			gotD[q][j] = exactScore(d.metric, qv, d.base.Data[int(id)*dim:(int(id)+1)*dim])
		}
		gtIDs[q] = d.gt.IDs.Data[q*d.gt.K : q*d.gt.K+annK]
		gtD[q] = d.gt.Dists.Data[q*d.gt.K : q*d.gt.K+annK]
	}
	return eval.MeanRecall(got, gotD, gtIDs, gtD, annK, order)
}

// exactScore is squared L2 or the inner product, in float64.
func exactScore(m datasets.Metric, a, b []float32) float32 {
	var s float64
	if m == datasets.L2 {
		for i := range a {
			t := float64(a[i]) - float64(b[i])
			s += t * t
		}
	} else {
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
	}
	return float32(s)
}

// qpsAt linearly interpolates QPS at recall r on points sorted by efSearch;
// between two points the QPS is interpolated linearly in recall. A curve
// that starts above r gives its first point's QPS.
func qpsAt(pts []ANNPoint, r float64, qps func(ANNPoint) float64) (float64, bool) {
	for i, p := range pts {
		if p.Recall >= r {
			if i == 0 || p.Recall == pts[i-1].Recall {
				return qps(p), true
			}
			q := pts[i-1]
			f := (r - q.Recall) / (p.Recall - q.Recall)
			return qps(q) + f*(qps(p)-qps(q)), true
		}
	}
	return 0, false
}

func qpsAtTargets(pts []ANNPoint) []QPSAtRecall {
	var out []QPSAtRecall
	for _, r := range RecallTargets {
		w, ok := qpsAt(pts, r, func(p ANNPoint) float64 { return p.QPSWall })
		c, _ := qpsAt(pts, r, func(p ANNPoint) float64 { return p.QPSCPU })
		above := len(pts) > 0 && pts[0].Recall > r
		out = append(out, QPSAtRecall{Recall: r, Reached: ok, AboveStart: above, QPSWall: w, QPSCPU: c})
	}
	return out
}

// annRatios computes Strata / peer for every peer run among
// runs[first:first+n], against the Strata engine strataFor names.
func annRatios(runs []ANNRun, first, n int) []Ratio {
	var out []Ratio
	for pi := first; pi < first+n; pi++ {
		p := runs[pi]
		if !p.Peer {
			continue
		}
		si := -1
		for i := first; i < first+n; i++ {
			if !runs[i].Peer && runs[i].Engine == strataFor(p.Engine) {
				si = i
			}
		}
		if si < 0 {
			continue
		}
		s := runs[si]
		add := func(fig string, a, b float64, note string) {
			if a > 0 && b > 0 {
				out = append(out, Ratio{Suite: annSuiteName, Dataset: s.Dataset, Figure: fig, Peer: p.Engine, StrataEngine: s.Engine,
					Strata: a, PeerVal: b, Value: a / b, StrataRun: si, PeerRun: pi, Note: note})
			}
		}
		for t := range RecallTargets {
			if s.At[t].Reached && p.At[t].Reached {
				note := ""
				if s.At[t].AboveStart || p.At[t].AboveStart {
					note = "a curve starts above this recall: its first point (smallest efSearch / nprobe) is used"
				}
				add(fmt.Sprintf("qps_wall@recall=%.2f", RecallTargets[t]), s.At[t].QPSWall, p.At[t].QPSWall, note)
				add(fmt.Sprintf("qps_cpu@recall=%.2f", RecallTargets[t]), s.At[t].QPSCPU, p.At[t].QPSCPU, note)
			}
		}
		add("build_wall_s", s.BuildWallS, p.BuildWallS, "")
		add("build_cpu_s", s.BuildCPUS, p.BuildCPUS, "")
		add("train_wall_s", s.TrainWallS, p.TrainWallS, "")
		add("train_cpu_s", s.TrainCPUS, p.TrainCPUS, "")
		add("add_wall_s", s.AddWallS, p.AddWallS, "")
		add("add_cpu_s", s.AddCPUS, p.AddCPUS, "")
		add("bytes_per_vector", s.BytesPerVector, p.BytesPerVector, "")
	}
	return out
}

// strataEngine runs engine/hnsw in this process, on one goroutine.
type strataEngine struct {
	d  *annData
	p  ANNParams
	ix *hnsw.Index
}

func (e *strataEngine) name() string { return EngineStrata }

func (e *strataEngine) params() ANNParams { return e.p }

func (e *strataEngine) build() (ANNRun, error) {
	metric := hnsw.L2
	if e.d.metric == datasets.InnerProduct {
		metric = hnsw.IP
	}
	dim := e.d.base.D
	runtime.GC()
	w0, c0 := time.Now(), processCPU()
	ix, err := hnsw.New(hnsw.Options{Dim: dim, Metric: metric, M: e.p.M, EfConstruction: e.p.EfConstruction, Seed: 42, InitialCapacity: e.d.base.N})
	if err != nil {
		return ANNRun{}, err
	}
	for i := 0; i < e.d.base.N; i++ {
		if _, err := ix.Add(uint64(i), e.d.base.Data[i*dim:(i+1)*dim]); err != nil {
			return ANNRun{}, err
		}
	}
	wall, cpu := time.Since(w0).Seconds(), processCPU()-c0
	e.ix = ix
	used, _ := ix.MemoryBytes()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ANNRun{Engine: EngineStrata, Version: "this tree (" + runtime.Version() + ")", PID: os.Getpid(),
		BuildWallS: wall, BuildCPUS: cpu, BytesPerVector: float64(used) / float64(e.d.base.N),
		BytesMethod: "hnsw.Index.MemoryBytes (used) / n", RSSBytes: int64(ms.Sys)}, nil
}

func (e *strataEngine) search(ef int, minTime time.Duration) (ANNPoint, []int64, error) {
	nq, dim := e.d.queries.N, e.d.base.D
	ids := make([]int64, nq*annK)
	for i := range ids {
		ids[i] = -1
	}
	p := hnsw.SearchParams{EfSearch: ef}
	dst := make([]hnsw.Result, 0, annK)
	reps := 0
	var err error
	w0, c0 := time.Now(), processCPU()
	for {
		for q := 0; q < nq; q++ {
			dst, err = e.ix.SearchInto(dst[:0], e.d.queries.Data[q*dim:(q+1)*dim], annK, p)
			if err != nil {
				return ANNPoint{}, nil, err
			}
			if reps == 0 {
				for j, r := range dst {
					ids[q*annK+j] = int64(r.Label)
				}
			}
		}
		reps++
		if time.Since(w0) >= minTime {
			break
		}
	}
	wall, cpu := time.Since(w0).Seconds(), processCPU()-c0
	return point(ef, reps, nq, wall, cpu), ids, nil
}

func (e *strataEngine) close() {
	if e.ix != nil {
		e.ix.Close()
	}
}

func point(ef, reps, nq int, wall, cpu float64) ANNPoint {
	pt := ANNPoint{EfSearch: ef, Reps: reps, WallS: wall, CPUS: cpu}
	if wall > 0 {
		pt.QPSWall = float64(reps*nq) / wall
	}
	if cpu > 0 {
		pt.QPSCPU = float64(reps*nq) / cpu
	}
	return pt
}

// peerEngine is a peer process.
type peerEngine struct {
	p    *peerProc
	d    *annData
	p2   ANNParams
	ivf  bool // IVF-PQ peer: the search parameter is nprobe
	flat bool // flat peer: no search parameter
}

func (e *peerEngine) name() string { return e.p.name }

func (e *peerEngine) params() ANNParams { return e.p2 }

func (e *peerEngine) build() (ANNRun, error) {
	b, err := e.p.build()
	if err != nil {
		return ANNRun{}, err
	}
	r := ANNRun{Engine: e.p.name, Version: e.p.hello.Version, Peer: true, PID: e.p.cmd.Process.Pid,
		BuildWallS: b.WallS, BuildCPUS: b.CPUS, BytesPerVector: float64(b.RSSAfter-b.RSSBefore) / float64(e.d.base.N),
		BytesMethod: "process RSS growth over the build / n", RSSBytes: b.RSSAfter}
	if e.ivf {
		if b.BytesPerVector <= 0 || b.TrainCPUS < 0 || b.AddCPUS < 0 {
			return ANNRun{}, fmt.Errorf("bench: peer %s: build reply lacks the IVF-PQ fields (bytes_per_vector %g)", e.p.name, b.BytesPerVector)
		}
		r.TrainWallS, r.TrainCPUS, r.AddWallS, r.AddCPUS = b.TrainWallS, b.TrainCPUS, b.AddWallS, b.AddCPUS
		r.BytesPerVector, r.Index = b.BytesPerVector, b.IndexDesc
		r.BytesMethod = ivfBytesMethod
	}
	if e.flat {
		if b.BytesPerVector <= 0 {
			return ANNRun{}, fmt.Errorf("bench: peer %s: build reply lacks bytes_per_vector", e.p.name)
		}
		r.BytesPerVector, r.Index, r.BytesMethod = b.BytesPerVector, b.IndexDesc, flatBytesMethod
	}
	return r, nil
}

func (e *peerEngine) search(param int, minTime time.Duration) (ANNPoint, []int64, error) {
	s, err := e.p.search(param, minTime, e.d.queries.N, annK)
	if err != nil {
		return ANNPoint{}, nil, err
	}
	pt := point(param, s.Reps, e.d.queries.N, s.WallS, s.CPUS)
	if e.ivf {
		pt.EfSearch, pt.Nprobe = 0, param
	}
	return pt, s.IDs, nil
}

func (e *peerEngine) close() { e.p.close() }

// strideSubset returns n rows of m spread evenly over it (row ⌊i·N/n⌋ for
// i < n, N = m.N) and a description of the sample. A prefix would be biased
// wherever the file is ordered: glove-6b-100's words are sorted by corpus
// frequency, so its first 10,000 rows are the 10,000 most frequent words.
// Even spacing keeps every frequency band in proportion, the tail
// included. n = N returns m itself. Requires 0 < n <= m.N.
func strideSubset(m datasets.Matrix[float32], n int) (datasets.Matrix[float32], string) {
	if n >= m.N {
		return m, fmt.Sprintf("all %d base vectors", m.N)
	}
	out := datasets.Matrix[float32]{Data: make([]float32, n*m.D), N: n, D: m.D}
	for i := 0; i < n; i++ {
		copy(out.Row(i), m.Row(int(int64(i)*int64(m.N)/int64(n))))
	}
	return out, fmt.Sprintf("%d of %d base vectors, evenly spaced (row ⌊i·%d/%d⌋)", n, m.N, m.N, n)
}
