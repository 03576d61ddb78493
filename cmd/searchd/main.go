// Command searchd is Strata's server and command-line tool.
//
// Today it has one subcommand, demo, which runs the main job on real input
// with the parts of the engine that exist: code search over the Go standard
// library with the BM25 engine and its code-aware analyzer, and lexical,
// dense (HNSW over USE-512 sentence vectors) and hybrid (RRF) retrieval on
// the judged Cranfield and Vaswani collections, with their quality measured.
// The server (serve), ingestion (index) and search subcommands come with the
// engine API.
package main

import (
	"fmt"
	"os"
)

func usage() {
	fmt.Fprintf(os.Stderr, `usage: searchd <command> [flags]

commands:
  demo    index real input (Go stdlib source, Cranfield, Vaswani) and answer queries

Run 'searchd <command> -h' for a command's flags.
`)
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "demo":
		err = runDemo(os.Args[2:])
	case "-h", "-help", "--help", "help":
		usage()
		return
	default:
		fmt.Fprintf(os.Stderr, "searchd: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "searchd:", err)
		os.Exit(1)
	}
}
