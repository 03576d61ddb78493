// Command strata-bench runs Strata's benchmark suites against peer engines
// and writes results.json, report.md and PNG plots.
//
//	go run ./bench/cmd/strata-bench SUITE... [--quick] [--threads N] [--out DIR] [--datasets a,b]
//	go run ./bench/cmd/strata-bench --report-only --out DIR
//
// Suites: kernels, ann (more register themselves as they land). Flags may
// come before or after the suite names. See package bench for the schema.
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
	dsets := fs.String("datasets", "", "comma-separated ann data sets (default all: "+strings.Join(bench.ANNDatasets, ",")+")")
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
	cfg := bench.Config{Quick: *quick, Threads: *threads, OutDir: *out, Log: os.Stderr,
		Command: "go run ./bench/cmd/strata-bench " + strings.Join(os.Args[1:], " ")}
	if *dsets != "" {
		cfg.Datasets = strings.Split(*dsets, ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := bench.Run(ctx, cfg, suites); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "wrote %s/results.json, report.md and plots\n", *out)
}
