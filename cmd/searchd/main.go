// Command searchd is Strata's server and command-line tool.
//
// Subcommands:
//
//	searchd index PATH... [--data DIR] [--collection C] [--embedder builtin|none|URL] [--graph] [--watch]   walk, chunk and index trees (incremental)
//	searchd search "query" [--data DIR] [--top-k 5] [--mode lexical|dense|hybrid] [--fusion METHOD] [--scope PREFIX] [--json] [--syntax text|operators] [--priors=false] [--definitions auto|always|off] [--expand]
//	searchd serve [--data DIR] [--addr 127.0.0.1:7700] [--api-keys FILE] [--embedder URL]   the HTTP/JSON API (and MCP at /mcp)
//	searchd mcp [--data DIR] [--root DIR] [--principal NAME] [--describe]   the MCP tools over stdio
//	searchd loadtest [--duration 30s] [--clients 8] [--url URL]   loopback load test of the API
//	searchd inspect [--json] FILE|DIR...                header, sections and checksums of Strata files; a store under DIR is validated as opening it would
//	searchd version
//	searchd demo [-skip-code] [-skip-ir]                quality demo on real input
//
// Every subcommand works on the embedded engine (package engine) in --data
// DIR, default ./strata-data; index and search need no service. Indexing
// writes BM25 postings and, by default, a vector per chunk from the
// built-in static embedder (engine/embed/static, in-process); --embedder
// none is lexical-only, --embedder URL names an OpenAI-compatible
// embeddings server (make embed-server starts the bundled one). search is
// hybrid by default when the collection has vectors and their embedder is
// at hand (the built-in one needs no flag), lexical otherwise. The
// store is opened by one process at a time (an exclusive lock): while
// `serve` (or `index --watch`) runs, other processes use the HTTP API
// (server documents the resources; GET /v1/openapi.json serves
// the spec). demo runs code search over the Go standard library with the
// bare BM25 index and its code-aware analyzer, then loads the judged
// Cranfield and Vaswani collections into the engine and runs lexical,
// dense (exact cosine over the USE-512 sentence vectors) and hybrid
// retrieval, printing nDCG@10, MAP and R@100.
//
// Object storage (engine/remote; endpoint and credentials from
// STRATA_S3_ENDPOINT, STRATA_S3_ACCESS_KEY, STRATA_S3_SECRET_KEY):
// `serve --object-store s3://bucket/prefix` publishes --data's flushed
// state there under a lease; `serve --object-store s3://bucket/prefix
// --read-only --cache-dir DIR [--cache-bytes N] [--poll-interval 1s]` is
// a stateless replica that serves searches from the newest published
// manifest (SIGHUP: refresh now).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

func usage() {
	fmt.Fprintf(os.Stderr, `usage: searchd <command> [flags]

commands:
  index    index a directory tree into the embedded store (--data DIR, default ./strata-data)
  search   search it: searchd search "query" [--top-k 5] [--scope PREFIX] [--json]
  inspect  header, sections and checksums of Strata files, stores under DIR validated as opening them would: searchd inspect [--json] FILE|DIR...
  serve    serve the HTTP/JSON API (and MCP at /mcp): searchd serve [--data DIR] [--addr 127.0.0.1:7700] [--api-keys FILE]
  mcp      serve the MCP tools over stdio: searchd mcp [--data DIR] [--root DIR] [--describe]
  loadtest loopback load test of the API: searchd loadtest [--duration 30s] [--clients 8] [--url URL]
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
	case "serve":
		err = runServe(os.Args[2:])
	case "mcp":
		err = runMCP(os.Args[2:])
	case "loadtest":
		err = runLoadtest(os.Args[2:])
	case "inspect":
		err = runInspect(os.Args[2:])
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
	if errors.Is(err, flag.ErrHelp) {
		return // -h printed the command's usage: not an error
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "searchd:", err)
		os.Exit(1)
	}
}
