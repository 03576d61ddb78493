// Command strata-lexbench runs the lexical benchmark (package
// bench/lexical): Strata's BM25 against Xapian (C++ driver) and SQLite
// FTS5 (C driver) on Cranfield, Vaswani and the Go standard library, and
// writes results.json and report.md into --out.
//
//	go run ./bench/lexical/cmd/strata-lexbench [--quick] --out DIR
//
// Peers: ./scripts/ensure-apt.sh libxapian-dev libsqlite3-dev g++.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/stratasearch/strata/bench/lexical"
)

func main() {
	var o lexical.Options
	out := flag.String("out", "", "output directory for results.json and report.md (required)")
	flag.BoolVar(&o.Quick, "quick", false, "quick mode: 1 round of 1 timed pass")
	flag.IntVar(&o.Rounds, "rounds", 0, "rounds alternating the engines (default 3, quick 1)")
	flag.IntVar(&o.Passes, "passes", 0, "timed passes per engine per round (default 3, quick 1)")
	flag.StringVar(&o.WorkDir, "work", "", "work directory (default: temporary, removed)")
	flag.BoolVar(&o.SkipQuality, "skip-quality", false, "skip the quality part")
	flag.BoolVar(&o.SkipSpeed, "skip-speed", false, "skip the speed part")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "strata-lexbench: --out is required")
		os.Exit(2)
	}
	o.Log = os.Stderr
	o.Command = "go run ./bench/lexical/cmd/strata-lexbench " + strings.Join(os.Args[1:], " ")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := lexical.Run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "strata-lexbench:", err)
		os.Exit(1)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "strata-lexbench:", err)
		os.Exit(1)
	}
	js, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		fmt.Fprintln(os.Stderr, "strata-lexbench:", err)
		os.Exit(1)
	}
	md := res.Markdown()
	for name, data := range map[string][]byte{"results.json": append(js, '\n'), "report.md": []byte(md)} {
		if err := os.WriteFile(filepath.Join(*out, name), data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "strata-lexbench:", err)
			os.Exit(1)
		}
	}
	fmt.Print(md)
}
