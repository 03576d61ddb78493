// Command strata-hybridbench runs the hybrid-fusion quality study on
// Cranfield and Vaswani and writes results.json and report.md.
//
//	go run ./bench/hybrid/cmd/strata-hybridbench --out bench/results/hybrid
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/stratasearch/strata/bench/hybrid"
	"github.com/stratasearch/strata/engine/embed/static"
)

func main() {
	out := flag.String("out", "", "output directory for results.json and report.md (required)")
	dir := flag.String("datasets", "", "directory with cranfield/ and vaswani/ (default $STRATA_DATASETS or ../shared/datasets)")
	resamples := flag.Int("resamples", 10000, "paired bootstrap resamples")
	seed := flag.Uint64("seed", 1, "bootstrap and fold seed")
	folds := flag.Int("folds", 5, "cross-validation folds")
	embedder := flag.String("embedder", "use512", "dense vectors: use512 (the collections' USE-Lite fvecs) or builtin (engine/embed/static's shipped table, embedding the texts)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "strata-hybridbench: --out is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := hybrid.Config{DatasetsDir: *dir, Resamples: *resamples, Seed: *seed, Folds: *folds,
		Log: os.Stderr, Command: "strata-hybridbench " + strings.Join(os.Args[1:], " ")}
	switch *embedder {
	case "use512":
	case "builtin":
		e, err := static.Builtin()
		if err != nil {
			fmt.Fprintln(os.Stderr, "strata-hybridbench:", err)
			os.Exit(1)
		}
		cfg.Embedder = e
	default:
		fmt.Fprintf(os.Stderr, "strata-hybridbench: unknown --embedder %q (want use512 or builtin)\n", *embedder)
		os.Exit(2)
	}
	r, err := hybrid.Run(ctx, cfg)
	if err == nil {
		err = hybrid.WriteFiles(*out, r)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "strata-hybridbench:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "wrote %s/results.json and report.md; default %s, goal met: %v\n", *out, r.Default.Spec, r.Default.GoalMet)
}
