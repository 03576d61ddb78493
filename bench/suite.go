package bench

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Config is what every suite receives. Zero values get the defaults below
// (see EnsureDefaults).
type Config struct {
	// Quick selects the subsampled mode (under 5 minutes on 2 cores).
	Quick bool
	// Threads is the thread count per engine. The ann suite supports 1
	// only (the single-thread comparison of issue 4). Default 1.
	Threads int
	// OutDir receives results.json, report.md and the PNG plots. Required.
	OutDir string
	// Datasets restricts the ann suite (see ANNDatasets) and the lancedb
	// suite (DatasetVaswani, DatasetGloVe) to these names; empty = all.
	Datasets []string
	// RepoRoot is the module root (to find bench/peers). Default: found
	// from the working directory.
	RepoRoot string
	// WorkDir holds temporary data files and peer builds. Default: a new
	// temporary directory, removed at the end.
	WorkDir string
	// NodeModules is a directory with node_modules/usearch installed.
	// Default: <user cache>/strata/bench-npm (installed there with
	// `npm install usearch@2.26.2` when missing).
	NodeModules string
	// ANNParts restricts the ann suite to some of its parts: "hnsw"
	// (efSearch sweep), "ivf" (IVF-PQ 8-bit and 4-bit) and "flat"; empty =
	// all. Every peer is still required.
	ANNParts []string
	// FAISSAVX2Dir is the scripts/peers-strong.sh build of FAISS for the
	// optional strong FAISS peers (ann_strong.go). Default: FAISSAVX2Dir().
	FAISSAVX2Dir string
	// Synthetic, when set, replaces the real data sets of the ann suite
	// with this generated one (used by the harness's own test).
	Synthetic *SyntheticSpec
	// IngestRoot, when set, is the tree the ingest suite indexes instead
	// of $(go env GOROOT)/src (tests).
	IngestRoot string
	// Staleness, when set, sizes the staleness suite (tests); default
	// stalenessParams.
	Staleness *StalenessParams
	// Ripgrep, when set, replaces the ripgrep suite's tree
	// ($(go env GOROOT)/src) and queries (tests).
	Ripgrep *RipgrepParams
	// LanceDB, when set, replaces the lancedb suite's data (Vaswani)
	// (tests).
	LanceDB *LanceDBParams
	// Server, when set, sizes the server suite (tests); default
	// serverParams (quick: 5 s, full: 30 s; 8 clients).
	Server *ServerParams
	// Emulated marks a run under an emulator (qemu-user): every timing is
	// labelled "emulated, not a performance figure". Default: detected
	// (DetectEmulation), or forced by STRATA_BENCH_EMULATED=1.
	Emulated bool
	// NoPeers runs the suites without peer engines (only allowed together
	// with Emulated: peers are not available emulated). Suites that need
	// a peer then measure Strata alone and say so.
	NoPeers bool
	// PeersAVX2 caps the ann suite's native peers at AVX2, for a run whose
	// Strata dispatch is capped at AVX2 (STRATA_ASM_MAX_LEVEL=avx2) on an
	// AVX-512 host: the hnswlib-native driver is built with g++
	// -march=native -mno-avx512f (hnswlib 0.6.2 then takes its AVX path),
	// and the FAISS peers run with OPENBLAS_CORETYPE=Haswell (OpenBLAS's
	// AVX2 sgemm, which faiss-flat's batch search is). The flags are
	// recorded in the peers' version / driver. Default: -march=native and
	// OpenBLAS's own CPU choice.
	PeersAVX2 bool
	// Peers, when non-empty, restricts the ann suite to these peers (names
	// of ANNPeers, ANNIVFPeers, ANNFlatPeers); the HNSW, IVF-PQ and flat
	// parts run only when one of their peers is named. Default: every peer.
	Peers []string
	// Log receives progress lines. Default io.Discard.
	Log io.Writer
	// Command is recorded in results.json.
	Command string
}

// SyntheticSpec is a generated data set: N base and NQ query vectors of
// dimension D from a seeded Gaussian mixture.
type SyntheticSpec struct {
	N, NQ, D int
	Metric   string // "l2" or "ip" (vectors normalised)
	Seed     uint64
}

// Validate reports every problem with c, joined.
func (c Config) Validate() error {
	var errs []string
	if c.OutDir == "" {
		errs = append(errs, "bench: Config.OutDir is empty")
	}
	if c.Threads < 0 {
		errs = append(errs, fmt.Sprintf("bench: Config.Threads = %d, want ≥ 1", c.Threads))
	}
	if c.NoPeers && !c.Emulated {
		errs = append(errs, "bench: Config.NoPeers is only allowed for emulated runs (a missing peer is an error)")
	}
	for _, p := range c.ANNParts {
		if !contains(ANNParts, p) {
			errs = append(errs, fmt.Sprintf("bench: Config.ANNParts: unknown part %q (have %s)", p, strings.Join(ANNParts, ", ")))
		}
	}
	if s := c.Staleness; s != nil && (s.Docs < 1 || s.Writers < 1 || s.Readers < 1 || s.Writers > s.Docs || s.Duration <= 0 || s.Edits < 1) {
		errs = append(errs, fmt.Sprintf("bench: Staleness %+v: want Docs ≥ Writers ≥ 1, Readers ≥ 1, Duration > 0, Edits ≥ 1", *s))
	}
	if s := c.Synthetic; s != nil {
		if s.N < 20 || s.NQ < 1 || s.D < 1 {
			errs = append(errs, fmt.Sprintf("bench: Synthetic %d×%d with %d queries, want N ≥ 20, NQ ≥ 1, D ≥ 1", s.N, s.D, s.NQ))
		}
		if s.Metric != "l2" && s.Metric != "ip" {
			errs = append(errs, fmt.Sprintf("bench: Synthetic.Metric = %q, want l2 or ip", s.Metric))
		}
	}
	for _, p := range c.Peers {
		if !contains(ANNPeers, p) && !contains(ANNIVFPeers, p) && !contains(ANNFlatPeers, p) && !contains(ANNStrongPeers, p) {
			errs = append(errs, fmt.Sprintf("bench: Config.Peers: unknown peer %q", p))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// EnsureDefaults fills zero fields with their defaults.
func (c Config) EnsureDefaults() Config {
	if c.Threads == 0 {
		c.Threads = 1
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	return c
}

func (c Config) logf(format string, args ...any) {
	fmt.Fprintf(c.Log, format+"\n", args...)
}

// Suite is one benchmark family. Run appends its runs and ratios to res;
// an error aborts the whole invocation (a missing peer is an error).
type Suite interface {
	Name() string
	Run(ctx context.Context, cfg Config, res *Results) error
}

var registry = map[string]Suite{}

// Register adds a suite; later suites (lexical, hybrid, ingest, staleness,
// server) register themselves from their own files with an init function.
// It panics on a duplicate name (a programming error at init time).
func Register(s Suite) {
	if _, dup := registry[s.Name()]; dup {
		panic("bench: duplicate suite " + s.Name())
	}
	registry[s.Name()] = s
}

// Suites lists the registered suite names, sorted.
func Suites() []string {
	var names []string
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func lookup(names []string) ([]Suite, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("bench: no suite given (have %s)", strings.Join(Suites(), ", "))
	}
	var out []Suite
	for _, n := range names {
		s, ok := registry[n]
		if !ok {
			return nil, fmt.Errorf("bench: unknown suite %q (have %s)", n, strings.Join(Suites(), ", "))
		}
		out = append(out, s)
	}
	return out, nil
}
