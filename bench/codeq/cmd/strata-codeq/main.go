// Command strata-codeq measures code-search ranking defaults on a store
// of a Go source tree indexed by `searchd index` (doc-sentence,
// identifier and intent queries; package codeq), and the query syntax on
// Cranfield and Vaswani. It prints Markdown tables.
//
//	searchd index $(go env GOROOT)/src --data /tmp/store --sync none
//	go run ./bench/codeq/cmd/strata-codeq --data /tmp/store
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/stratasearch/strata/bench/codeq"
	"github.com/stratasearch/strata/datasets"
	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/ingest"
)

func main() {
	data := flag.String("data", "", "store directory holding the indexed tree (required)")
	colName := flag.String("collection", "code", "collection name")
	root := flag.String("root", filepath.Join(runtime.GOROOT(), "src"), "the indexed tree (queries are generated from it)")
	n := flag.Int("n", 200, "doc-sentence and identifier queries each")
	seed := flag.Uint64("seed", 1, "query sampling seed")
	prose := flag.Bool("prose", true, "also measure the query syntax on Cranfield and Vaswani")
	list := flag.Bool("list-intent", false, "list each intent query's answer rank and top hit under the new default (no tables)")
	flag.Parse()
	if *list {
		if err := listIntent(*data, *colName, *root); err != nil {
			fmt.Fprintln(os.Stderr, "strata-codeq:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*data, *colName, *root, *n, *seed, *prose); err != nil {
		fmt.Fprintln(os.Stderr, "strata-codeq:", err)
		os.Exit(1)
	}
}

func run(data, colName, root string, n int, seed uint64, prose bool) error {
	if data == "" {
		return fmt.Errorf("--data is required")
	}
	ds, id, err := codeq.Sets(root, n, seed)
	if err != nil {
		return err
	}
	in, err := codeq.Intent(root)
	if err != nil {
		return err
	}
	db, err := engine.Open(data, engine.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	col, err := db.Collection(colName)
	if err != nil {
		return err
	}
	t0 := time.Now()
	br, bst, err := ingest.BuildBridge(context.Background(), col)
	if err != nil {
		return err
	}
	enc, _ := br.MarshalBinary()
	fmt.Printf("bridge: %d chunks read, %d declarations, %d words, %d associations, %d bytes, built in %v\n",
		bst.Chunks, bst.Decls, bst.Words, bst.Assocs, len(enc), time.Since(t0).Round(time.Millisecond))
	for _, w := range []string{"capital", "letter", "whitespace", "checksum", "pause", "environment", "serialize", "sleep"} {
		fmt.Printf("  %s → %v\n", w, br.Lookup(w))
	}
	loose, lst, err := ingest.BuildBridgeWith(context.Background(), col, ingest.BridgeOptions{MinSupport: 2, MinNPMI: 0.1})
	if err != nil {
		return err
	}
	fmt.Printf("loose bridge: %d words, %d associations\n", lst.Words, lst.Assocs)
	ops, txt := contract.SyntaxOperators, contract.SyntaxText
	always := ingest.SearchOptions{Definitions: ingest.DefsAlways, NoPriors: true}
	auto := ingest.SearchOptions{NoPriors: true}
	vs := []codeq.Variant{
		{Name: "plain BM25, operators, no generated", Syntax: ops, Plain: true, DropGenerated: true},
		{Name: "A: old CLI default (operators, definitions-first always, no generated)", Syntax: ops, Opts: always, DropGenerated: true},
		{Name: "B: A + plain-text syntax", Syntax: txt, Opts: always, DropGenerated: true},
		{Name: "C: B + generated files indexed", Syntax: txt, Opts: always},
		{Name: "D: C + definitions-first only for identifier queries", Syntax: txt, Opts: auto},
		{Name: "E: D + path priors (new default)", Syntax: txt, Opts: ingest.SearchOptions{}},
		{Name: "F: E + vocabulary bridging", Syntax: txt, Opts: ingest.SearchOptions{Bridge: br}},
		{Name: "F, bridge weight 0.15", Syntax: txt, Opts: ingest.SearchOptions{Bridge: withWeight(br, 0.15)}},
		{Name: "F, bridge weight 0.6", Syntax: txt, Opts: ingest.SearchOptions{Bridge: withWeight(br, 0.6)}},
		{Name: "F, loose table (support 2, npmi 0.1), weight 0.3", Syntax: txt, Opts: ingest.SearchOptions{Bridge: loose}},
		{Name: "plain BM25, text", Syntax: txt, Plain: true},
	}
	split := func(name string, qs []codeq.Query) []codeq.NamedSet {
		var hand, gen []codeq.Query
		for _, q := range qs {
			if q.Generated {
				gen = append(gen, q)
			} else {
				hand = append(hand, q)
			}
		}
		return []codeq.NamedSet{{Name: name + ", hand-written answers", Queries: hand}, {Name: name + ", answers in generated files", Queries: gen}}
	}
	sets := append(append(split("doc-sentence", ds), split("identifier", id)...), codeq.NamedSet{Name: "intent", Queries: in})
	ctx := context.Background()
	if err := codeq.Report(ctx, os.Stdout, col, sets, vs); err != nil {
		return err
	}
	if prose {
		dir, err := datasets.Dir()
		if err != nil {
			return err
		}
		return codeq.ProseSyntax(os.Stdout, dir)
	}
	return nil
}

// withWeight is a copy of b with Expand weight w.
func withWeight(b *ingest.Bridge, w float64) *ingest.Bridge {
	c := *b
	c.Weight = w
	return &c
}

// listIntent prints, per intent query, the answer's rank under the
// default search options (0 = not in the top 10) and the top hit.
func listIntent(data, colName, root string) error {
	in, err := codeq.Intent(root)
	if err != nil {
		return err
	}
	db, err := engine.Open(data, engine.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	col, err := db.Collection(colName)
	if err != nil {
		return err
	}
	rs, err := codeq.Ranks(context.Background(), col, in, codeq.Variant{Name: "default", Syntax: contract.SyntaxText})
	if err != nil {
		return err
	}
	for i, q := range in {
		fmt.Printf("%2d  %-62q want %-28s top %s %s\n", rs[i].Rank, q.Text, q.File+" "+q.Symbol, rs[i].TopPath, rs[i].TopSy)
	}
	return nil
}
