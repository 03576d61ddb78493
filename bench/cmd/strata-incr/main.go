// Command strata-incr measures how soon an edit becomes searchable in a
// store that already holds a large tree: each round appends a new
// function with a fresh marker word to FILES non-test Go files in each of
// the PKGS packages, runs one incremental ingest pass per package
// (ingest.Indexer.Index, the pass `searchd index PKG...` and --watch run)
// and then one lexical search for the marker, which must return every
// edited file. It prints p50 / p90 / max of the pass and of pass + search
// over the rounds (the first round is a warm-up) and restores the files
// and the store at the end. The tree is edited in place, so index a copy:
//
//	cp -r "$(go env GOROOT)/src" /tmp/gosrc
//	searchd index /tmp/gosrc --data /tmp/st-inc --embedder none --bridge=false
//	go run ./bench/cmd/strata-incr --src /tmp/gosrc --data /tmp/st-inc
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/ingest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "strata-incr:", err)
		os.Exit(1)
	}
}

func run() error {
	src := flag.String("src", "", "the indexed tree (edited in place and restored)")
	data := flag.String("data", "", "the store `searchd index SRC --data DATA` made")
	col := flag.String("collection", "code", "collection name")
	pkgList := flag.String("pkgs", "strings,strconv,fmt", "packages (directories under SRC) to edit")
	perPkg := flag.Int("files", 5, "non-test .go files edited per package")
	rounds := flag.Int("rounds", 20, "timed rounds")
	flag.Parse()
	if *src == "" || *data == "" || *rounds < 1 || *perPkg < 1 {
		flag.Usage()
		return fmt.Errorf("want --src and --data, --rounds ≥ 1 and --files ≥ 1")
	}
	root, err := filepath.Abs(*src)
	if err != nil {
		return err
	}
	ctx := context.Background()
	db, err := engine.Open(*data, engine.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	c, err := db.Collection(*col)
	if err != nil {
		return err
	}
	o := ingest.Options{ExcludePaths: []string{*data}}
	o.EnsureDefaults()
	ix, err := ingest.NewIndexer(c, filepath.Join(*data, "ingest", *col+".manifest.json"), o)
	if err != nil {
		return err
	}
	pkgs := strings.Split(*pkgList, ",")
	var files []string
	for _, p := range pkgs {
		ents, err := os.ReadDir(filepath.Join(root, p))
		if err != nil {
			return err
		}
		n := 0
		for _, e := range ents {
			if n < *perPkg && strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
				files = append(files, filepath.Join(root, p, e.Name()))
				n++
			}
		}
		if n < *perPkg {
			return fmt.Errorf("%s has %d non-test Go files, fewer than %d", p, n, *perPkg)
		}
	}
	orig := map[string][]byte{}
	info := map[string]os.FileInfo{}
	for _, f := range files {
		if orig[f], err = os.ReadFile(f); err != nil {
			return err
		}
		if info[f], err = os.Stat(f); err != nil {
			return err
		}
	}
	pass := func() error {
		for _, p := range pkgs {
			if _, err := ix.Index(ctx, filepath.Join(root, p), ingest.Progress{}); err != nil {
				return err
			}
		}
		return nil
	}
	defer func() {
		for f, b := range orig {
			fi := info[f]
			if err := os.WriteFile(f, b, fi.Mode().Perm()); err != nil {
				fmt.Fprintln(os.Stderr, "strata-incr: restoring", f+":", err)
			}
			os.Chtimes(f, fi.ModTime(), fi.ModTime())
		}
		if err := pass(); err != nil {
			fmt.Fprintln(os.Stderr, "strata-incr: restoring the store:", err)
		}
	}()
	var passes, visible []time.Duration
	for round := -1; round < *rounds; round++ {
		marker := fmt.Sprintf("zqincrmarker%d", round+1)
		for i, f := range files {
			b := append(slices.Clip(orig[f]), fmt.Sprintf("\n// %s marks an edit.\nfunc %s_%d() {}\n", marker, marker, i)...)
			if err := os.WriteFile(f, b, info[f].Mode().Perm()); err != nil {
				return err
			}
		}
		t0 := time.Now()
		if err := pass(); err != nil {
			return err
		}
		tp := time.Since(t0)
		res, err := c.Search(ctx, contract.Query{Text: marker, Mode: contract.Lexical, TopK: 2 * len(files)})
		if err != nil {
			return err
		}
		tv := time.Since(t0)
		hit := map[string]bool{}
		for _, h := range res.Hits {
			hit[strings.SplitN(h.DocID, "#", 2)[0]] = true
		}
		for _, f := range files {
			if !hit[f] {
				return fmt.Errorf("round %d: the search for %s did not return %s", round, marker, f)
			}
		}
		if round >= 0 {
			passes, visible = append(passes, tp), append(visible, tv)
		}
	}
	slices.Sort(passes)
	slices.Sort(visible)
	q := func(d []time.Duration, p float64) string {
		return fmt.Sprintf("%.1f", float64(d[min(len(d)-1, int(p*float64(len(d))))].Microseconds())/1000)
	}
	fmt.Printf("edit of %d files in %d packages, %d rounds (ms): p50 / p90 / max\n", len(files), len(pkgs), *rounds)
	fmt.Printf("  incremental pass (one Index a package)   %s / %s / %s\n", q(passes, 0.5), q(passes, 0.9), q(passes, 1))
	fmt.Printf("  visible to search (pass + first search)  %s / %s / %s\n", q(visible, 0.5), q(visible, 0.9), q(visible, 1))
	return nil
}
