package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/ingest/codegraph"
)

// runLang builds the graph of a tree in the tree-sitter languages and
// prints a seeded sample of resolved calls, each with its call-site line
// and the callee's definition line, for judging precision by hand.
func runLang(args []string) error {
	fs := newFlags("lang")
	root := fs.String("root", "/usr/lib/python3.11", "tree to graph")
	n := fs.Int("sample", 40, "calls to print")
	seed := fs.Uint64("seed", 1, "sample seed")
	tsv := fs.String("tsv", "", "also write the sample (drawn without replacement) to this TSV file, with empty verdict and note columns to fill in by hand")
	score := fs.String("score", "", "read a judged TSV (verdict y or n per row), print the precision and exit")
	fs.Parse(args)
	if *score != "" {
		return scoreJudged(*score)
	}
	files, _, err := ingest.Walk(*root, ingest.Options{})
	if err != nil {
		return err
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	t0 := time.Now()
	r := codegraph.BuildLang(paths, ingest.Options{})
	el := time.Since(t0)
	g := graph.FromFragments(r.Fragments)
	b := graph.AppendEncoded(nil, g)
	how := map[string]int{}
	for _, s := range r.Sites {
		how[s.How]++
	}
	fmt.Printf("%s: %d files, %.1f MB, built in %.1f s; %d references, %d resolved (%.1f%%); CALLS by rule %v\n",
		*root, r.Files, float64(r.Bytes)/1e6, el.Seconds(), r.Refs, r.Resolved, 100*float64(r.Resolved)/float64(max(r.Refs, 1)), how)
	fmt.Printf("graph %s; encoded %d bytes, β = %.3f; %d parse errors\n", g.Stats(), len(b), float64(len(b))/float64(r.Bytes), len(r.Errors))
	rng := rand.New(rand.NewPCG(*seed, 3))
	line := func(file string, l int) string {
		src, err := os.ReadFile(file)
		if err != nil {
			return "?"
		}
		ls := strings.Split(string(src), "\n")
		if l < 1 || l > len(ls) {
			return "?"
		}
		return strings.TrimSpace(ls[l-1])
	}
	if *tsv != "" {
		return writeSample(*tsv, *root, r.Sites, g, *n, rng, line)
	}
	for i := 0; i < *n && len(r.Sites) > 0; i++ {
		s := r.Sites[rng.IntN(len(r.Sites))]
		to := g.Node(g.Lookup(s.Callee))
		fmt.Printf("%2d [%s] %s:%d  %q\n     -> %s:%d  %q\n", i, s.How, strings.TrimPrefix(s.File, *root+"/"), s.Line, clip(line(s.File, s.Line), 110),
			strings.TrimPrefix(to.File, *root+"/"), to.Line, clip(line(to.File, to.Line), 90))
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// sampleHeader is the judged sample's TSV header.
const sampleHeader = "n\trule\tcaller\tsite\tsite_text\tcallee\tdefinition\tdefinition_text\tverdict\tnote"

// writeSample writes n resolved calls drawn without replacement.
func writeSample(path, root string, sites []codegraph.LangSite, g *graph.Graph, n int, rng *rand.Rand, line func(string, int) string) error {
	var b strings.Builder
	b.WriteString(sampleHeader + "\n")
	clean := func(s string) string { return strings.NewReplacer("\t", " ", "\n", " ").Replace(s) }
	rel := func(p string) string { return strings.TrimPrefix(p, root+"/") }
	perm := rng.Perm(len(sites))
	for i := 0; i < n && i < len(perm); i++ {
		s := sites[perm[i]]
		to := g.Node(g.Lookup(s.Callee))
		fmt.Fprintf(&b, "%d\t%s\t%s\t%s:%d\t%s\t%s\t%s:%d\t%s\t\t\n", i, s.How, clean(strings.TrimPrefix(s.Caller, "lang:"+root+"/")),
			rel(s.File), s.Line, clean(clip(line(s.File, s.Line), 140)), clean(strings.TrimPrefix(s.Callee, "lang:"+root+"/")),
			rel(to.File), to.Line, clean(clip(line(to.File, to.Line), 110)))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// scoreJudged prints the precision of a judged sample, overall and per
// resolution rule.
func scoreJudged(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) == 0 || lines[0] != sampleHeader {
		return fmt.Errorf("%s: not a judged sample (header %q)", path, sampleHeader)
	}
	type tally struct{ yes, all int }
	by := map[string]*tally{}
	var tot tally
	for i, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if len(f) != 10 || (f[8] != "y" && f[8] != "n") {
			return fmt.Errorf("%s:%d: want 10 columns with verdict y or n", path, i+2)
		}
		t := by[f[1]]
		if t == nil {
			t = &tally{}
			by[f[1]] = t
		}
		t.all++
		tot.all++
		if f[8] == "y" {
			t.yes++
			tot.yes++
		}
	}
	fmt.Printf("%s: precision %d/%d = %.3f\n", path, tot.yes, tot.all, float64(tot.yes)/float64(max(tot.all, 1)))
	for _, rule := range []string{"member", "file", "import", "module", "directory", "unique"} {
		if t := by[rule]; t != nil {
			fmt.Printf("  %-9s %d/%d\n", rule, t.yes, t.all)
		}
	}
	return nil
}
