//go:build linux

package hnsw

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratasearch/strata/datasets"
	"golang.org/x/sys/unix"
)

func threadCPU() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)*1e-6
}

type curvePoint struct {
	ef          int
	recall, qps float64
}

// qpsAt linearly interpolates QPS at the given recall on a curve sorted
// by ef (recall rising); 0 if the curve never reaches it.
func qpsAt(c []curvePoint, r float64) float64 {
	for i, p := range c {
		if p.recall >= r {
			if i == 0 {
				return p.qps
			}
			q := c[i-1]
			if p.recall == q.recall {
				return p.qps
			}
			f := (r - q.recall) / (p.recall - q.recall)
			return q.qps + f*(p.qps-q.qps)
		}
	}
	return 0
}

// TestPeerHnswlib compares this index with hnswlib side by side: same
// data, same M / efConstruction, k=10, one thread, each query set looped
// for ≥ 0.5 s per efSearch. It runs only when STRATA_HNSWLIB_BENCH names
// the driver built from bench/peers/hnswlib/main.cc. QPS is per second of
// the thread's CPU time (wall-clock figures on a shared machine depend on
// the other jobs); build time is CPU seconds too.
func TestPeerHnswlib(t *testing.T) {
	bin := os.Getenv("STRATA_HNSWLIB_BENCH")
	if bin == "" {
		t.Skip("STRATA_HNSWLIB_BENCH not set")
	}
	tmp := t.TempDir()
	type ds struct {
		name    string
		metric  Metric
		base    datasets.Matrix[float32]
		queries datasets.Matrix[float32]
	}
	var sets []ds
	set := loadUSE(t, "vaswani")
	sets = append(sets, ds{"vaswani", Cosine,
		datasets.Matrix[float32]{Data: set.docs, N: len(set.docs) / set.d, D: set.d},
		datasets.Matrix[float32]{Data: set.queries, N: len(set.queries) / set.d, D: set.d}})
	if os.Getenv("STRATA_PEER_FASHION") != "" {
		const dir = "/usr/share/datasets/fashion-mnist"
		train, err1 := datasets.ReadIDXImages(filepath.Join(dir, "train-images-idx3-ubyte.gz"))
		test, err2 := datasets.ReadIDXImages(filepath.Join(dir, "t10k-images-idx3-ubyte.gz"))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		const nq = 200
		sets = append(sets, ds{"fashion-mnist", L2, train.Matrix,
			datasets.Matrix[float32]{Data: test.Data[:nq*test.D], N: nq, D: test.D}})
	}
	efs := []int{10, 16, 24, 32, 48, 64, 96, 128, 192, 256}
	var efArg []string
	for _, e := range efs {
		efArg = append(efArg, strconv.Itoa(e))
	}
	for _, s := range sets {
		bp, qp := filepath.Join(tmp, s.name+"-base.fvecs"), filepath.Join(tmp, s.name+"-q.fvecs")
		if err := datasets.WriteFvecs(bp, s.base); err != nil {
			t.Fatal(err)
		}
		if err := datasets.WriteFvecs(qp, s.queries); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, bp, qp, s.metric.String(), "16", "200", "10", strings.Join(efArg, ",")).Output()
		if err != nil {
			t.Fatal(err)
		}
		var peer []curvePoint
		var peerBuild float64
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Split(line, "\t")
			var p curvePoint
			fmt.Sscan(f[3], &p.ef)
			fmt.Sscan(f[4], &p.recall)
			fmt.Sscan(f[6], &p.qps)
			fmt.Sscan(f[8], &peerBuild)
			peer = append(peer, p)
		}
		d := s.base.D
		qs := rows(s.queries.Data, d)
		truth := make([]gt, len(qs))
		for i, q := range qs {
			truth[i] = bruteForce(s.metric, s.base.Data, d, q, 10, nil)
		}
		for _, st := range []Storage{Float32, SQ8} {
			runtime.LockOSThread()
			c0 := threadCPU()
			ix := build(t, Options{Dim: d, Metric: s.metric, M: 16, EfConstruction: 200, Seed: 42, Storage: st}, s.base.Data)
			bc := threadCPU() - c0
			var ours []curvePoint
			dst := make([]Result, 0, 10)
			for _, ef := range efs {
				p := SearchParams{EfSearch: ef}
				r := meanRecall(t, s.metric, s.base.Data, d, qs, truth, 10, func(q []float32) []Result {
					res, _ := ix.Search(q, 10, p)
					return res
				})
				rounds := 0
				w0, c0 := time.Now(), threadCPU()
				for time.Since(w0) < 500*time.Millisecond {
					for _, q := range qs {
						dst, _ = ix.SearchInto(dst, q, 10, p)
					}
					rounds++
				}
				ours = append(ours, curvePoint{ef, r, float64(rounds*len(qs)) / (threadCPU() - c0)})
			}
			runtime.UnlockOSThread()
			t.Logf("%s %v M=16 efc=200: build %.2f cpu-s vs hnswlib %.2f (%.2f×)", s.name, st, bc, peerBuild, bc/peerBuild)
			for i := range efs {
				t.Logf("  ef=%-3d strata recall %.4f qps %7.0f | hnswlib recall %.4f qps %7.0f", efs[i], ours[i].recall, ours[i].qps, peer[i].recall, peer[i].qps)
			}
			for _, r := range []float64{0.90, 0.95, 0.99} {
				a, b := qpsAt(ours, r), qpsAt(peer, r)
				ratio := 0.0
				if b > 0 {
					ratio = a / b
				}
				t.Logf("  recall@10=%.2f: strata %.0f qps, hnswlib %.0f qps: %.2f×", r, a, b, ratio)
			}
		}
	}
}
