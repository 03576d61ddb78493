package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/stratasearch/strata/datasets"
)

// Strong FAISS peers of the ann suite: FAISS 1.7.3 compiled from Debian's
// source package with FAISS_OPT_LEVEL=avx2 and OpenBLAS
// (scripts/peers-strong.sh, `make peers-strong`), driven by the C++ server
// bench/peers/ann/faiss_server.cc. They run beside the generic Debian
// python3-faiss rows with the same index specs and parameters: HNSWFlat,
// IVF-PQ 8-bit + refine, IVF-PQ 4-bit fast-scan + refine, flat. They are
// optional: when the library is not built the suite runs without them and
// says so in the report's notes.

// Strong peer engine names.
const (
	PeerFAISSAVX2HNSW    = "faiss-avx2-hnswflat"
	PeerFAISSAVX2IVFPQ8  = "faiss-avx2-ivfpq8"
	PeerFAISSAVX2IVFPQ4  = "faiss-avx2-ivfpq4fs"
	PeerFAISSAVX2Flat    = "faiss-avx2-flat"
	FAISSAVX2Version     = "1.7.3"
	faissServerSource    = "faiss_server.cc"
	faissAVX2LibRelative = "build/faiss/libfaiss_avx2.so"
)

// ANNStrongPeers lists the strong peers, in the order of the ann suite's
// HNSW, IVF-PQ (8-bit, 4-bit) and flat parts.
var ANNStrongPeers = []string{PeerFAISSAVX2HNSW, PeerFAISSAVX2IVFPQ8, PeerFAISSAVX2IVFPQ4, PeerFAISSAVX2Flat}

// isFlatPeer reports whether peer is compared with EngineStrataFlat.
func isFlatPeer(peer string) bool {
	return contains(ANNFlatPeers, peer) || peer == PeerFAISSAVX2Flat
}

// FAISSAVX2Dir is where scripts/peers-strong.sh builds FAISS:
// $STRATA_CACHE/faiss-1.7.3-avx2 (default ~/.cache/strata/faiss-1.7.3-avx2).
func FAISSAVX2Dir() (string, error) {
	c, err := datasets.CacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(c, "faiss-"+FAISSAVX2Version+"-avx2"), nil
}

// faissAVX2Built reports whether dir holds a complete peers-strong.sh
// build (its STAMP, the library and the headers), or why not.
func faissAVX2Built(dir string) (bool, string) {
	for _, p := range []string{"STAMP", faissAVX2LibRelative, "include/faiss/IndexRefine.h"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return false, fmt.Sprintf("%s missing", filepath.Join(dir, p))
		}
	}
	return true, ""
}

// prepareStrongPeers returns the strong peers' drivers, building the C++
// driver once per source version into dir/driver. When dir holds no
// complete build it returns no drivers and a note saying why (the strong
// peers are optional); a build that is present but whose driver does not
// compile is an error.
func prepareStrongPeers(ctx context.Context, cfg Config, dir string) ([]peerDriver, string, error) {
	if ok, why := faissAVX2Built(dir); !ok {
		return nil, fmt.Sprintf("Strong FAISS peers (%s) not run: %s (build them with make peers-strong).", PeerFAISSAVX2HNSW+", "+PeerFAISSAVX2IVFPQ8+", "+PeerFAISSAVX2IVFPQ4+", "+PeerFAISSAVX2Flat, why), nil
	}
	src := filepath.Join(cfg.RepoRoot, peerDirRelative, faissServerSource)
	b, err := os.ReadFile(src)
	if err != nil {
		return nil, "", fmt.Errorf("faiss-avx2 peers: %w", err)
	}
	stamp, err := os.ReadFile(filepath.Join(dir, "STAMP"))
	if err != nil {
		return nil, "", fmt.Errorf("faiss-avx2 peers: %w", err)
	}
	h := sha256.New()
	h.Write(b)
	h.Write(stamp)
	bin := filepath.Join(dir, "driver", "faiss_server-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(bin); err != nil {
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			return nil, "", fmt.Errorf("faiss-avx2 peers: %w", err)
		}
		libDir := filepath.Dir(filepath.Join(dir, faissAVX2LibRelative))
		tmp := bin + ".tmp"
		cfg.logf("compiling %s against %s", src, libDir)
		// The library's own SIMD flags (FAISS_OPT_LEVEL=avx2), so that the
		// inline header code matches it.
		cmd := exec.CommandContext(ctx, "g++", "-O2", "-std=c++17", "-mavx2", "-mfma", "-mf16c", "-mpopcnt", "-fopenmp",
			"-I", filepath.Join(dir, "include"), "-o", tmp, src,
			"-L", libDir, "-lfaiss_avx2", "-Wl,-rpath,"+libDir)
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, "", fmt.Errorf("faiss-avx2 peers: g++ failed: %v: %s", err, out)
		}
		if err := os.Rename(tmp, bin); err != nil {
			return nil, "", fmt.Errorf("faiss-avx2 peers: %w", err)
		}
	}
	// One OpenMP and one OpenBLAS thread, as the python3-faiss peers.
	env := []string{"OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1"}
	return []peerDriver{
		{name: PeerFAISSAVX2HNSW, argv: []string{bin, PeerFAISSAVX2HNSW}, env: env},
		{name: PeerFAISSAVX2IVFPQ8, argv: []string{bin, PeerFAISSAVX2IVFPQ8}, env: env, ivf: true, nbits: 8},
		{name: PeerFAISSAVX2IVFPQ4, argv: []string{bin, PeerFAISSAVX2IVFPQ4}, env: env, ivf: true, nbits: 4},
		{name: PeerFAISSAVX2Flat, argv: []string{bin, PeerFAISSAVX2Flat}, env: env, flat: true},
	}, "", nil
}
