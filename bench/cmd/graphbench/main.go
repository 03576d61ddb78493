// Command graphbench measures the code graph (engine/graph,
// ingest/codegraph) on GOROOT/src:
//
//	graphbench build   [-dynamic cha|vta|none] [-pattern std] [-out FILE]
//	    go/packages + go/types (+ callgraph) build time and throughput,
//	    node and edge counts, encoded bytes and β = graph bytes / source bytes
//	graphbench calls   [-pkgs a,b,c,d,e]
//	    CALLS precision/recall against x/tools/go/callgraph's own graphs,
//	    and the syntax-level fast path's against the typed graph
//	graphbench update  [-rounds N]
//	    edit 15 files in 3 packages; time until search and expansion see it
//	graphbench lang    [-root DIR] [-sample N] [-seed S]
//	    the tree-sitter languages' graph of a tree, and a seeded sample of
//	    resolved calls with their source lines, to judge precision
//	graphbench multihop [-pkgs ...] [-n N] [-seed S]
//	    the seeded multi-hop benchmark: flat top-k vs BFS-1/2/3 vs PPR at
//	    2k/4k/8k tokens, and expand latency p50/p99
//
// go/packages on all of std is heavy (minutes, GBs): run it with nice.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: graphbench build|calls|update|multihop|lang [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = runBuild(os.Args[2:])
	case "calls":
		err = runCalls(os.Args[2:])
	case "update":
		err = runUpdate(os.Args[2:])
	case "multihop":
		err = runMultihop(os.Args[2:])
	case "lang":
		err = runLang(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "graphbench:", err)
		os.Exit(1)
	}
}

func newFlags(name string) *flag.FlagSet {
	return flag.NewFlagSet("graphbench "+name, flag.ExitOnError)
}
