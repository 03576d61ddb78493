// Command strata-bench runs Strata's benchmark suites against peer engines
// and writes results.json, report.md and PNG plots.
//
//	go run ./bench/cmd/strata-bench SUITE... [--quick] [--threads N] [--out DIR] [--datasets a,b] [--ann-parts hnsw,ivf,flat] [--emulated --no-peers]
//	go run ./bench/cmd/strata-bench --report-only --out DIR
//
// Suites: kernels, ann, lexical, hybrid, ingest, staleness. Flags may come
// before or after the suite names. See package bench for the schema.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/stratasearch/strata/bench"
)

func main() {
	fs := flag.NewFlagSet("strata-bench", flag.ContinueOnError)
	quick := fs.Bool("quick", false, "subsampled data sets, short timings (under 5 minutes on 2 cores)")
	threads := fs.Int("threads", 1, "threads per engine (the ann suite supports 1)")
	out := fs.String("out", "bench/results/latest", "output directory")
	reportOnly := fs.Bool("report-only", false, "rewrite report.md and the plots from --out DIR/results.json, measuring nothing")
	noPeers := fs.Bool("no-peers", false, "run without peer engines (emulated runs only: peers are not available under qemu)")
	emulated := fs.Bool("emulated", false, "label every timing \""+bench.EmulatedLabel+"\" (also detected from /proc/cpuinfo vs GOARCH, or STRATA_BENCH_EMULATED=1)")
	synth := fs.String("synthetic", "", "N,NQ,D: run the ann suite on a seeded synthetic L2 data set of N base and NQ query vectors of dimension D instead of the real ones (emulated smoke runs)")
	dsets := fs.String("datasets", "", "comma-separated data sets: of the ann suite (default all: "+strings.Join(bench.ANNDatasets, ",")+") and of the lancedb suite (default both: "+bench.DatasetVaswani+","+bench.DatasetGloVe+")")
	peersAVX2 := fs.Bool("peers-avx2", false, "cap the native peers at AVX2 (hnswlib-native: g++ -march=native -mno-avx512f; FAISS: OPENBLAS_CORETYPE=Haswell), to compare with STRATA_ASM_MAX_LEVEL=avx2")
	peers := fs.String("peers", "", "comma-separated ann peers to run (default all); HNSW / IVF-PQ / flat parts run only when one of their peers is named")
	parts := fs.String("ann-parts", "", "comma-separated parts of the ann suite to run (default all: "+strings.Join(bench.ANNParts, ",")+")")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: strata-bench SUITE... [--quick] [--threads N] [--out DIR] [--datasets a,b]\nsuites: %s\n", strings.Join(bench.Suites(), ", "))
		fs.PrintDefaults()
	}
	// Accept flags interleaved with suite names.
	var suites []string
	args := os.Args[1:]
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			os.Exit(2)
		}
		args = fs.Args()
		if len(args) > 0 {
			suites = append(suites, args[0])
			args = args[1:]
		}
	}
	if *reportOnly {
		if err := bench.Rewrite(*out); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	cfg := bench.Config{Quick: *quick, Threads: *threads, OutDir: *out, Log: os.Stderr, NoPeers: *noPeers, Emulated: *emulated,
		Command: "go run ./bench/cmd/strata-bench " + strings.Join(os.Args[1:], " ")}
	if *noPeers && !*emulated {
		// NoPeers is allowed for emulated runs only; detect one here so
		// that Validate sees it.
		cfg.Emulated, _ = bench.DetectEmulation()
	}
	if *synth != "" {
		var n, nq, d int
		if _, err := fmt.Sscanf(*synth, "%d,%d,%d", &n, &nq, &d); err != nil {
			fmt.Fprintf(os.Stderr, "strata-bench: --synthetic %q: want N,NQ,D\n", *synth)
			os.Exit(2)
		}
		cfg.Synthetic = &bench.SyntheticSpec{N: n, NQ: nq, D: d, Metric: "l2", Seed: 3}
	}
	cfg.PeersAVX2 = *peersAVX2
	if *peers != "" {
		cfg.Peers = strings.Split(*peers, ",")
	}
	if *dsets != "" {
		cfg.Datasets = strings.Split(*dsets, ",")
	}
	if *parts != "" {
		cfg.ANNParts = strings.Split(*parts, ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := bench.Run(ctx, cfg, suites); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "wrote %s/results.json, report.md and plots\n", *out)
}
