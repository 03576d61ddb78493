package bench

// SchemaVersion identifies the layout of results.json. Bump it when a field
// changes meaning; adding fields keeps the version.
const SchemaVersion = "strata-bench/v1"

// Results is the whole of results.json. Every figure is per machine: the
// Machine header says where it was measured. Ratios are the headline; they
// are computed from the runs in the same file (RatioRef points at them).
type Results struct {
	Schema   string   `json:"schema"`  // SchemaVersion
	Command  string   `json:"command"` // the command line that produced the file
	Started  string   `json:"started"` // RFC 3339, UTC
	Finished string   `json:"finished"`
	Suites   []string `json:"suites"`
	Quick    bool     `json:"quick"`
	Threads  int      `json:"threads"` // threads per engine (the ann suite runs 1)
	Machine  Machine  `json:"machine"`
	// Peers lists every peer engine that ran, with its version.
	Peers    []PeerInfo    `json:"peers"`
	Datasets []DatasetInfo `json:"datasets"`
	Kernels  []KernelPoint `json:"kernels,omitempty"`
	ANN      []ANNRun      `json:"ann,omitempty"`
	Ratios   []Ratio       `json:"ratios"`
	// Ingest and Staleness are the runs of the ingest and staleness
	// suites (ingest.go, staleness.go).
	Ingest    []IngestRun    `json:"ingest,omitempty"`
	Staleness []StalenessRun `json:"staleness,omitempty"`
	// Ripgrep holds the ripgrep suite's runs (ripgrep.go).
	Ripgrep []RipgrepRun `json:"ripgrep,omitempty"`
	// LanceDB holds the lancedb suite's runs (lancedb.go).
	LanceDB []LanceDBRun `json:"lancedb,omitempty"`
	// Server holds the server suite's `searchd loadtest` runs.
	Server []ServerRun `json:"server,omitempty"`
	// Emulated is set when the run was under an emulator: no timing in
	// the file is a performance figure.
	Emulated bool     `json:"emulated,omitempty"`
	Notes    []string `json:"notes,omitempty"`
	// SuiteSeconds is each finished suite's wall time (the quick-mode
	// budget is checked against it).
	SuiteSeconds []SuiteTime `json:"suite_seconds,omitempty"`
	// Errors lists suites that failed (the run stopped there; the command
	// exits non-zero). Empty on success.
	Errors []string `json:"errors,omitempty"`
}

// SuiteTime is one suite's wall time in seconds.
type SuiteTime struct {
	Suite   string  `json:"suite"`
	Seconds float64 `json:"seconds"`
}

// Machine is the header every report carries.
type Machine struct {
	CPUModel     string   `json:"cpu_model"`
	CPUFlags     []string `json:"cpu_flags"` // SIMD-relevant subset of /proc/cpuinfo flags
	Cores        int      `json:"cores"`     // runtime.NumCPU
	MemoryBytes  int64    `json:"memory_bytes"`
	GoVersion    string   `json:"go_version"`
	GOOS         string   `json:"goos"`
	GOARCH       string   `json:"goarch"`
	Kernel       string   `json:"kernel"` // uname -r
	AsmLevel     string   `json:"asm_level"`
	AsmLevels    []string `json:"asm_levels"`
	BandwidthGBs float64  `json:"bandwidth_gbps,omitempty"` // asm.Bandwidth, single thread, 10⁹ B/s
	LoadAvg      string   `json:"loadavg"`                  // /proc/loadavg at start: the machine may be shared
}

// PeerInfo names one peer engine and how it was driven.
type PeerInfo struct {
	Engine  string `json:"engine"`
	Version string `json:"version"`
	Driver  string `json:"driver"` // the command the harness ran
}

// DatasetInfo describes one data set as the engines saw it.
type DatasetInfo struct {
	Name    string `json:"name"`
	Metric  string `json:"metric"` // l2 (squared Euclidean) or ip
	N       int    `json:"n"`      // base vectors used
	NQ      int    `json:"nq"`     // queries used
	D       int    `json:"d"`
	FullN   int    `json:"full_n"`
	FullNQ  int    `json:"full_nq"`
	Subset  string `json:"subset,omitempty"` // how it was subsampled; empty = full
	Source  string `json:"source"`           // files read
	SHA256  string `json:"sha256"`           // of the base and query fvecs files as written for the engines, "base+queries"
	GTNote  string `json:"ground_truth"`     // how the ground truth was obtained
	M       int    `json:"M"`
	EfConst int    `json:"efConstruction"`
	// IVF describes the IVF-PQ parameters of the data set (nlist, M per
	// path, refine k_factor, residual encoding, how nlist was chosen).
	IVF string `json:"ivf,omitempty"`
}

// KernelPoint is one asm kernel at one dispatch level.
type KernelPoint struct {
	Kernel string  `json:"kernel"`
	Shape  string  `json:"shape"` // e.g. "d=128 n=65536"
	Level  string  `json:"level"`
	NsOp   float64 `json:"ns_per_op"`
	// Work rates; zero when not meaningful for the kernel.
	GFLOPs float64 `json:"gflops,omitempty"` // 10⁹ floating-point (or integer multiply-add) ops per second
	CodesS float64 `json:"codes_per_s,omitempty"`
	GBs    float64 `json:"gbps"` // bytes of input streamed per second, 10⁹ B/s
	// BandwidthFraction is GBs / Machine.BandwidthGBs.
	BandwidthFraction float64 `json:"bandwidth_fraction"`
	// SpeedupVsGeneric is ns/op(generic) / ns/op(this level).
	SpeedupVsGeneric float64 `json:"speedup_vs_generic"`
}

// ANNRun is one engine on one data set: a build and an efSearch sweep
// (HNSW) or an nprobe sweep (IVF-PQ).
type ANNRun struct {
	Engine  string    `json:"engine"` // "strata-hnsw" or a peer
	Version string    `json:"version"`
	Peer    bool      `json:"peer"`
	PID     int       `json:"pid"` // process that ran it (the harness itself for Strata)
	Dataset string    `json:"dataset"`
	Params  ANNParams `json:"params"`
	// Build: wall and CPU seconds of the single-threaded build.
	BuildWallS float64 `json:"build_wall_s"`
	BuildCPUS  float64 `json:"build_cpu_s"`
	// BytesPerVector: index memory / n. For Strata, hnsw.Index.MemoryBytes
	// (used); for peers, the growth of the process RSS over the build.
	// IVF-PQ runs (both sides): code + id bytes per list entry, refine
	// vectors excluded (BytesMethod says so).
	BytesPerVector float64 `json:"bytes_per_vector"`
	BytesMethod    string  `json:"bytes_method"`
	RSSBytes       int64   `json:"rss_bytes"` // process RSS after the build
	// IVF-PQ runs only: the build split into training (k-means of the
	// coarse quantizer and the PQ codebooks) and adding (assignment and
	// encoding of the base vectors), wall and CPU seconds, one thread.
	TrainWallS float64 `json:"train_wall_s,omitempty"`
	TrainCPUS  float64 `json:"train_cpu_s,omitempty"`
	AddWallS   float64 `json:"add_wall_s,omitempty"`
	AddCPUS    float64 `json:"add_cpu_s,omitempty"`
	// Index names the index structure for IVF-PQ runs, e.g.
	// "IndexRefineFlat(IVF256,PQ56x4fs, k_factor=10, by_residual=True)".
	Index  string        `json:"index,omitempty"`
	Points []ANNPoint    `json:"points"`
	At     []QPSAtRecall `json:"qps_at_recall"`
}

// ANNParams are the build and search parameters shared by all engines of
// one comparison. HNSW runs set M, EfConstruction and EfSearch; IVF-PQ runs
// set M (PQ sub-quantizers), Nlist, Nbits, KFactor (refine), ByResidual and
// Nprobe (the sweep), and leave EfConstruction and EfSearch empty.
type ANNParams struct {
	M              int   `json:"M"`
	EfConstruction int   `json:"efConstruction"`
	K              int   `json:"k"`
	EfSearch       []int `json:"efSearch"`
	Threads        int   `json:"threads"`
	Nlist          int   `json:"nlist,omitempty"`
	Nbits          int   `json:"nbits,omitempty"`
	KFactor        int   `json:"k_factor,omitempty"`
	ByResidual     bool  `json:"by_residual,omitempty"`
	Nprobe         []int `json:"nprobe,omitempty"`
}

// ANNPoint is one efSearch: recall@k against the shared ground truth, and
// throughput over Reps passes of the whole query set (each pass one batch
// call for the peers, a loop of Search calls for Strata, one thread). The
// point is measured Rounds times (alternating with the other engines);
// QPSWall and QPSCPU are the best of the rounds, Reps/WallS/CPUS belong to
// the round with the best QPSWall.
type ANNPoint struct {
	EfSearch int     `json:"efSearch"`         // HNSW runs; 0 for IVF-PQ
	Nprobe   int     `json:"nprobe,omitempty"` // IVF-PQ runs
	Recall   float64 `json:"recall"`           // recall@k with eval's tie rule
	Rounds   int     `json:"rounds"`
	Reps     int     `json:"reps"`
	WallS    float64 `json:"wall_s"`
	CPUS     float64 `json:"cpu_s"`
	QPSWall  float64 `json:"qps_wall"` // best over rounds of Reps·nq / WallS
	QPSCPU   float64 `json:"qps_cpu"`  // best over rounds of Reps·nq / CPUS
}

// QPSAtRecall is QPS linearly interpolated at a target recall on the curve
// (points sorted by efSearch); Reached is false (QPS 0) when the curve
// never gets there. AboveStart is true when the curve's first point
// already exceeds the target: the figure is then that first point's QPS
// (efSearch cannot go below k), a lower bound of the QPS at the target.
type QPSAtRecall struct {
	Recall     float64 `json:"recall"`
	Reached    bool    `json:"reached"`
	AboveStart bool    `json:"above_start"`
	QPSWall    float64 `json:"qps_wall"`
	QPSCPU     float64 `json:"qps_cpu"`
}

// Ratio is Strata / peer for one figure. For QPS above 1 means Strata is
// faster; for build time below 1 means Strata is faster.
type Ratio struct {
	Suite   string `json:"suite"`
	Dataset string `json:"dataset"`
	Figure  string `json:"figure"` // e.g. "qps_cpu@recall=0.95", "build_cpu_s", "train_cpu_s"
	Peer    string `json:"peer"`
	// StrataEngine is the Strata engine compared (strata-hnsw,
	// strata-ivfpq8 or strata-ivfpq4fs); empty in files written before the
	// IVF-PQ engines existed, meaning strata-hnsw.
	StrataEngine string  `json:"strata_engine,omitempty"`
	Strata       float64 `json:"strata"`
	PeerVal      float64 `json:"peer_value"`
	Value        float64 `json:"ratio"`
	// StrataRun and PeerRun index Results.ANN: the runs the two figures
	// were taken from.
	StrataRun int `json:"strata_run"`
	PeerRun   int `json:"peer_run"`
	// Note qualifies the ratio, e.g. when a curve starts above the target
	// recall (see QPSAtRecall.AboveStart). Empty for a plain ratio.
	Note string `json:"note,omitempty"`
}
