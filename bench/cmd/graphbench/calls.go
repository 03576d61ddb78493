package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/callgraph/static"
	"golang.org/x/tools/go/callgraph/vta"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"

	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/ingest/codegraph"
)

type pairSet map[string]bool

// pr returns precision and recall of got against want, and the counts.
func pr(got, want pairSet) (p, r float64, tp, ng, nw int) {
	for e := range got {
		if want[e] {
			tp++
		}
	}
	ng, nw = len(got), len(want)
	if ng > 0 {
		p = float64(tp) / float64(ng)
	}
	if nw > 0 {
		r = float64(tp) / float64(nw)
	}
	return
}

// ourCalls returns the CALLS edges of g between functions whose caller is
// in one of pkgs, as "caller -> callee" keys.
func ourCalls(g *graph.Graph, in func(key string) bool) pairSet {
	s := pairSet{}
	for i := 0; i < g.N(); i++ {
		n := g.Node(graph.NodeID(i))
		if n.Kind != graph.Func || !in(n.Key) {
			continue
		}
		for _, e := range g.Out(graph.NodeID(i)) {
			if e.Kind == graph.Calls && g.Node(e.To).Kind == graph.Func && e.To != e.From {
				s[n.Key+" -> "+g.Node(e.To).Key] = true
			}
		}
	}
	return s
}

// refCalls collapses a callgraph to top-level definitions.
func refCalls(cg *callgraph.Graph, in func(string) bool) pairSet {
	s := pairSet{}
	callgraph.GraphVisitEdges(cg, func(e *callgraph.Edge) error {
		a, b := codegraph.SSAFuncKey(e.Caller.Func), codegraph.SSAFuncKey(e.Callee.Func)
		if a != "" && b != "" && a != b && in(a) {
			s[a+" -> "+b] = true
		}
		return nil
	})
	return s
}

func runCalls(args []string) error {
	fs := newFlags("calls")
	pkgList := fs.String("pkgs", "bufio,encoding/json,go/printer,net/url,text/template", "comma-separated std packages")
	showMiss := fs.Int("show", 5, "print this many misses and extras per comparison")
	fs.Parse(args)
	pkgs := strings.Split(*pkgList, ",")
	dir := filepath.Join(goroot(), "src")
	inSet := func(key string) bool {
		for _, p := range pkgs {
			if strings.HasPrefix(key, p+".") {
				rest := key[len(p)+1:]
				if !strings.Contains(rest, "/") {
					return true
				}
			}
		}
		return false
	}
	// Reference: callgraph over SSA of the same packages.
	t0 := time.Now()
	cfg := &packages.Config{Dir: dir, Mode: packages.LoadAllSyntax}
	lp, err := packages.Load(cfg, pkgs...)
	if err != nil {
		return err
	}
	prog, _ := ssautil.Packages(lp, ssa.InstantiateGenerics)
	prog.Build()
	tLoad := time.Since(t0)
	t1 := time.Now()
	st := static.CallGraph(prog)
	st.DeleteSyntheticNodes()
	tStatic := time.Since(t1)
	t1 = time.Now()
	ch := cha.CallGraph(prog)
	tCHA := time.Since(t1)
	t1 = time.Now()
	vt := vta.CallGraph(ssautil.AllFunctions(prog), cha.CallGraph(prog))
	tVTA := time.Since(t1)
	ch.DeleteSyntheticNodes()
	vt.DeleteSyntheticNodes()
	refs := map[string]pairSet{"static": refCalls(st, inSet), "cha": refCalls(ch, inSet), "vta": refCalls(vt, inSet)}
	fmt.Printf("packages %v\nreference: load+SSA %.1f s; static %.2f s, cha %.2f s, vta %.2f s (each over the SSA of the packages above)\n",
		pkgs, tLoad.Seconds(), tStatic.Seconds(), tCHA.Seconds(), tVTA.Seconds())
	report := func(name string, got, want pairSet) {
		p, r, tp, ng, nw := pr(got, want)
		fmt.Printf("  %-34s precision %.4f recall %.4f  (%d common, %d ours, %d reference)\n", name, p, r, tp, ng, nw)
		var extra, miss []string
		for e := range got {
			if !want[e] {
				extra = append(extra, e)
			}
		}
		for e := range want {
			if !got[e] {
				miss = append(miss, e)
			}
		}
		sort.Strings(extra)
		sort.Strings(miss)
		for i := 0; i < len(extra) && i < *showMiss; i++ {
			fmt.Printf("      ours only: %s\n", extra[i])
		}
		for i := 0; i < len(miss) && i < *showMiss; i++ {
			fmt.Printf("      reference only: %s\n", miss[i])
		}
	}
	var typed *codegraph.GoResult
	for _, d := range []codegraph.Dynamic{codegraph.DynamicNone, codegraph.DynamicCHA, codegraph.DynamicVTA} {
		t := time.Now()
		r, err := codegraph.BuildGo(context.Background(), dir, pkgs, codegraph.GoOptions{Dynamic: d})
		if err != nil {
			return err
		}
		el := time.Since(t)
		g := r.Graph()
		ref := map[codegraph.Dynamic]string{codegraph.DynamicNone: "static", codegraph.DynamicCHA: "cha", codegraph.DynamicVTA: "vta"}[d]
		fmt.Printf("ours, dynamic=%s (BuildGo %.1f s) vs callgraph/%s:\n", d, el.Seconds(), ref)
		report("CALLS", ourCalls(g, inSet), refs[ref])
		if d == codegraph.DynamicCHA {
			typed = r
		}
	}
	// The fast path: syntax-level fragments against the typed graph.
	g := typed.Graph()
	v := graph.NewView(g)
	typedAll, synAll := pairSet{}, pairSet{}
	typedCalls, synCalls := pairSet{}, pairSet{}
	var tSyn time.Duration
	for _, fr := range typed.Fragments {
		src, err := os.ReadFile(fr.File)
		if err != nil {
			return err
		}
		t := time.Now()
		sf, err := codegraph.SyntaxFragment(fr.File, src, fr.Nodes[0].Name, v, ingest.Options{})
		tSyn += time.Since(t)
		if err != nil {
			return err
		}
		collect := func(f *graph.Fragment, all, calls pairSet) {
			for _, e := range f.Edges {
				k := e.From + " " + e.Kind.String() + " " + e.To
				if g.Lookup(e.To) == graph.None || g.Lookup(e.From) == graph.None {
					continue
				}
				all[k] = true
				if e.Kind == graph.Calls {
					calls[k] = true
				}
			}
		}
		collect(fr, typedAll, typedCalls)
		collect(sf, synAll, synCalls)
	}
	fmt.Printf("syntax-level fast path (SyntaxFragment, %d files, %.1f ms total, %.2f ms/file) vs the typed graph (CHA):\n",
		len(typed.Fragments), float64(tSyn.Microseconds())/1e3, float64(tSyn.Microseconds())/1e3/float64(len(typed.Fragments)))
	report("CALLS", synCalls, typedCalls)
	report("all edge kinds", synAll, typedAll)
	return nil
}
