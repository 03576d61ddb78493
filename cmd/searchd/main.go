// Command searchd is Strata's server and command-line tool.
//
// Subcommands:
//
//	searchd index PATH [--data DIR] [--collection C]   walk, chunk and index a tree (incremental)
//	searchd search "query" [--data DIR] [--top-k 5] [--mode lexical] [--scope PREFIX] [--json]
//	searchd version
//	searchd demo [-skip-code] [-skip-ir]                quality demo on real input
//
// index and search use the embedded engine (package engine) in --data DIR,
// default ./strata-data; no service is needed. Indexing is lexical-only
// (BM25) until an embedder exists. The store is opened by one process at a
// time (an exclusive lock): a running `index --watch` and a `search` cannot
// share it until `serve` exists. demo runs code search over the Go standard
// library with the bare BM25 index and its code-aware analyzer, then loads
// the judged Cranfield and Vaswani collections into the engine and runs
// lexical, dense (exact cosine over the USE-512 sentence vectors) and hybrid
// retrieval, printing nDCG@10, MAP and R@100. The server (serve) is not
// written yet.
package main

import (
	"fmt"
	"os"
)

func usage() {
	fmt.Fprintf(os.Stderr, `usage: searchd <command> [flags]

commands:
  index    index a directory tree into the embedded store (--data DIR, default ./strata-data)
  search   search it: searchd search "query" [--top-k 5] [--scope PREFIX] [--json]
  version  print the version
  demo     index real input (Go stdlib source, Cranfield, Vaswani) and answer queries

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
	case "index":
		err = runIndex(os.Args[2:])
	case "search":
		err = runSearch(os.Args[2:])
	case "version", "-version", "--version":
		err = runVersion(os.Args[2:])
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
