package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest/codegraph"
)

func goroot() string { return runtime.GOROOT() }

func runBuild(args []string) error {
	fs := newFlags("build")
	dyn := fs.String("dynamic", "vta", "dynamic call resolution: none, cha or vta")
	pattern := fs.String("pattern", "std", "go/packages patterns (comma-separated), in GOROOT/src")
	out := fs.String("out", "", "write the graph file here")
	fs.Parse(args)
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	t0 := time.Now()
	r, err := codegraph.BuildGo(context.Background(), filepath.Join(goroot(), "src"), strings.Split(*pattern, ","), codegraph.GoOptions{Dynamic: codegraph.Dynamic(*dyn)})
	if err != nil {
		return err
	}
	tBuild := time.Since(t0)
	t1 := time.Now()
	g := r.Graph()
	tFreeze := time.Since(t1)
	b := graph.AppendEncoded(nil, g)
	t2 := time.Now()
	if _, err := graph.Decode(b, "mem"); err != nil {
		return err
	}
	tDecode := time.Since(t2)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st := g.Stats()
	fmt.Printf("pattern %s dynamic %s: %d files, %.1f MB Go source, %d load/type errors\n", *pattern, *dyn, r.Files, float64(r.SourceBytes)/1e6, len(r.Errors))
	fmt.Printf("build (go/packages + types + edges%s) %.1f s = %.2f MB/s, %.0f files/s; fragments→graph %.2f s; decode %.3f s\n",
		map[bool]string{true: " + callgraph"}[*dyn != "none"], tBuild.Seconds(), float64(r.SourceBytes)/1e6/tBuild.Seconds(), float64(r.Files)/tBuild.Seconds(), tFreeze.Seconds(), tDecode.Seconds())
	fmt.Printf("graph: %s\n", st)
	fmt.Printf("encoded %d bytes (%.2f MB): β = %.3f of the graph's own source; %.2f bytes/edge overall\n", len(b), float64(len(b))/1e6, float64(len(b))/float64(r.SourceBytes), float64(len(b))/float64(st.Edges))
	src := dirBytes(filepath.Join(goroot(), "src"))
	fmt.Printf("GOROOT/src total %.1f MB (all files): β = %.3f\n", float64(src)/1e6, float64(len(b))/float64(src))
	fmt.Printf("heap: total alloc %.1f GB, sys %.1f GB\n", float64(ms.TotalAlloc-ms0.TotalAlloc)/1e9, float64(ms.Sys)/1e9)
	if len(r.Errors) > 0 {
		fmt.Printf("first error: %s\n", r.Errors[0])
	}
	if *out != "" {
		if _, err := graph.WriteFile(*out, g); err != nil {
			return err
		}
	}
	return nil
}
