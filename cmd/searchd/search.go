package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/embed"
	"github.com/stratasearch/strata/ingest"
)

func runSearch(args []string) error {
	fl := flag.NewFlagSet("search", flag.ContinueOnError)
	data := fl.String("data", defaultData, "data directory (embedded store)")
	colName := fl.String("collection", "code", "collection name")
	topK := fl.Int("top-k", 5, "number of hits (1..1000)")
	mode := fl.String("mode", "", "lexical | dense | hybrid; default hybrid when the collection has vectors and its embedder is available (the built-in one, or --embedder URL), else lexical")
	fusionFlag := fl.String("fusion", "", "hybrid fusion: rrf | minmax | zscore | maxnorm | rerank-maxnorm (default: the collection's hybrid default)")
	fusionK := fl.Float64("fusion-k", 0, "RRF constant k (0 = 60)")
	fusionWindow := fl.Int("fusion-window", 0, "candidates per retriever; for rerank-maxnorm the lexical top N re-ranked (0 = the default: max(100, top-k), or 20)")
	fusionWeights := fl.String("fusion-weights", "", "retriever weights, e.g. lexical=0.65,dense=0.35 (a missing one weighs 1)")
	scope := fl.String("scope", "", "only sources under this path or file:// URI prefix")
	asJSON := fl.Bool("json", false, "print the result as JSON envelopes (contract.Result)")
	verify := fl.Bool("verify", true, "re-read every hit's source span and drop stale hits (--verify=false to skip)")
	budget := fl.Duration("budget", 0, "search deadline (0 = none)")
	batch := fl.Bool("batch", false, "each argument is a separate query, answered from one store opening (--json: an array of results)")
	plain := fl.Bool("plain", false, "the engine's order: no definitions-first, no path priors")
	defs := fl.String("definitions", "auto", "definitions first: auto (only when the query looks like an identifier: EqualFold, strings.EqualFold, read_full) | always (any identifier-like word) | off")
	expand := fl.Bool("expand", false, "vocabulary bridging: add down-weighted identifier terms associated with the query's prose words (the table index learns; shown by --explain)")
	priors := fl.Bool("priors", true, "path priors: rank tests, testdata, examples, .txt, generated files, cmd/ and internal/ copies and unexported declarations below the public implementation (--priors=false: off)")
	explain := fl.Bool("explain", false, "print each hit's retriever ranks (lexical rank, dense rank, fused score)")
	syntax := fl.String("syntax", "text", `query syntax: text (quotes and +/- are plain characters) | operators ("phrase", +required, -excluded, prefix*)`)
	embFlags := addEmbedderFlags(fl) // embedder.go
	fl.Usage = func() {
		fmt.Fprintf(fl.Output(), "usage: searchd search \"query\" [flags]\n       searchd search --batch \"query 1\" \"query 2\" ... [flags]\n\n")
		fl.PrintDefaults()
	}
	pos, err := parseArgs(fl, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		fl.Usage()
		return errors.New("search: want a query")
	}
	texts := []string{strings.Join(pos, " ")}
	if *batch {
		texts = pos
	}
	t0 := time.Now()
	// Without --embedder, a collection indexed with the built-in embedder
	// uses it (openStore always registers it); --embedder URL or none is
	// checked against the collection.
	var emb embed.Embedder
	if embFlags.explicit() && !embFlags.builtin() {
		if emb, err = embFlags.embedder(context.Background()); err != nil {
			return fmt.Errorf("search: %w", err)
		}
	}
	var db *engine.DB
	var col *engine.Collection
	if emb != nil {
		db, col, err = openStore(*data, *colName, false, "", emb)
	} else {
		db, col, err = openCollection(*data, *colName, false)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	openTime := time.Since(t0)
	so, err := searchOptions(*defs, *priors) // searchopts.go
	if err != nil {
		return err
	}
	if *expand {
		if so.Bridge, err = loadBridge(*data, *colName); err != nil {
			return err
		}
	}
	search := func(ctx context.Context, c *engine.Collection, q contract.Query) (contract.Result, error) {
		return ingest.SearchWith(ctx, c, q, so)
	}
	if *plain {
		search = func(ctx context.Context, c *engine.Collection, q contract.Query) (contract.Result, error) {
			return c.Search(ctx, q)
		}
	}
	qmode := contract.Mode(*mode)
	if qmode == "" {
		qmode = defaultSearchMode(col, emb, *embFlags.url == embedderNone && embFlags.explicit())
	}
	var results []jsonResult // searchopts.go
	for i, text := range texts {
		q := contract.Query{Text: text, TopK: *topK, Mode: qmode, Verify: *verify, Budget: *budget, Syntax: contract.Syntax(*syntax)}
		q.Fusion.Method, q.Fusion.K, q.Fusion.Window = *fusionFlag, *fusionK, *fusionWindow
		if q.Fusion.Weights, err = parseWeights(*fusionWeights); err != nil {
			return err
		}
		if *scope != "" {
			q.Scope.URIPrefix = scopeURI(*scope)
		}
		t1 := time.Now()
		res, err := search(context.Background(), col, q)
		searchTime := time.Since(t1)
		if errors.Is(err, engine.ErrNoEmbedder) {
			return noEmbedderHelp(col, string(qmode), err) // embedder.go
		}
		if err != nil {
			return err
		}
		if *asJSON {
			results = append(results, jsonResult{Result: res, Timings: jsonTimings{OpenMS: ms(openTime), SearchMS: ms(searchTime)}})
			continue
		}
		if *batch {
			if i > 0 {
				fmt.Println()
			}
			fmt.Printf("query %q:\n", text)
		}
		printHits(os.Stdout, text, res)
		if *explain {
			if len(res.Hits) > 0 && res.Hits[0].Explain.Expansion != "" {
				fmt.Printf("expansion (term^weight): %s\n", res.Hits[0].Explain.Expansion)
			}
			fmt.Println("explain ranks (1-based; — = not in that retriever's list):")
			for i, h := range res.Hits {
				fmt.Printf("  %d. ", i+1)
				printExplain(os.Stdout, h.Explain, q.Mode) // embedder.go
			}
		}
		fmt.Printf("(%d hits, mode %s, epoch %d; search %v)\n", len(res.Hits), q.Mode, res.Epoch, searchTime.Round(time.Microsecond))
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if *batch {
			return enc.Encode(results)
		}
		return enc.Encode(results[0])
	}
	fmt.Printf("(store opened in %v: manifest, warm segments, WAL tail replay)\n", openTime.Round(time.Millisecond))
	return nil
}

// scopeURI turns a --scope argument into a source-URI prefix: a file://
// URI is used as given; a path is made absolute and encoded as FileURI
// (a trailing slash is kept, so "src/strings/" excludes "src/stringsx").
func scopeURI(s string) string {
	if strings.HasPrefix(s, "file://") {
		return s
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		abs = s
	}
	u := ingest.FileURI(abs)
	if strings.HasSuffix(s, "/") && !strings.HasSuffix(u, "/") {
		u += "/"
	}
	return u
}

// printHits prints each hit as "N. path:Lx-Ly  score  trust  symbol" and a
// snippet of up to 3 non-blank source lines.
func printHits(w io.Writer, query string, res contract.Result) {
	if len(res.Hits) == 0 {
		fmt.Fprintf(w, "no hits for %q\n", query)
	}
	for i, h := range res.Hits {
		loc := h.SourceURI
		if p, from, to, err := engine.ParseFileURI(h.SourceURI); err == nil {
			loc = fmt.Sprintf("%s:%d-%d", shortPath(p), from, to)
		}
		sym := ""
		if v, ok := h.Metadata[ingest.MetaSymbol]; ok {
			if s, ok := v.Str(); ok {
				sym = s
				if k, ok := h.Metadata[ingest.MetaKind].Str(); ok {
					sym += " (" + k + ")"
				}
			}
		}
		fmt.Fprintf(w, "%d. %s  score=%.3f  %s  %s\n", i+1, loc, h.Score, h.Trust, sym)
		for _, l := range snippetLines(ingest.Snippet(h.Content, h.Metadata), 3) {
			fmt.Fprintf(w, "     %s\n", l)
		}
	}
	if res.Partial {
		fmt.Fprintf(w, "(partial result: %s)\n", res.Reason)
	}
	for _, d := range res.Dropped {
		fmt.Fprintf(w, "(dropped %s: %s %s)\n", d.DocID, d.Reason, d.Detail)
	}
}

// snippetLines returns up to n non-blank lines of s, tabs expanded and
// each cut to 110 bytes (on a rune boundary).
func snippetLines(s string, n int) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimRight(strings.ReplaceAll(l, "\t", "    "), " \r")
		if strings.TrimSpace(l) == "" {
			continue
		}
		if len(l) > 110 {
			cut := 110
			for cut > 0 && (l[cut]&0xC0) == 0x80 {
				cut--
			}
			l = l[:cut] + "…"
		}
		out = append(out, l)
		if len(out) == n {
			break
		}
	}
	return out
}

func runVersion(args []string) error {
	v := "(devel)"
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = " " + s.Value
			}
		}
	}
	fmt.Printf("searchd %s%s %s %s/%s (dense/hybrid with --embedder URL)\n", v, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// parseWeights parses --fusion-weights "lexical=0.65,dense=0.35" (nil for
// "").
func parseWeights(s string) (map[string]float64, error) {
	if s == "" {
		return nil, nil
	}
	m := map[string]float64{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		w, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || (k != "lexical" && k != "dense") {
			return nil, fmt.Errorf("search: --fusion-weights %q: want lexical=W,dense=W", s)
		}
		m[k] = w
	}
	return m, nil
}
