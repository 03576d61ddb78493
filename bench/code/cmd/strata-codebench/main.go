// Command strata-codebench resolves and evaluates the code query sets of
// package bench/code over GOROOT/src.
//
//	strata-codebench resolve [-goroot DIR]
//	    resolve intent/queries.tsv into intent/answers.json and draw the
//	    doc-sentence / identifier set into docsentence/queries.json (both
//	    under bench/code, run from the repository root)
//	strata-codebench resolve-py [-root /usr/lib/python3.11]
//	    resolve intent-py/queries.tsv (file.py:Symbol answers) into
//	    intent-py/answers.json against the Python library root
//	strata-codebench eval -data DIR [-collection code] [-sets intent,docsentence,identifier]
//	    [-modes lexical,plain,dense,hybrid,rrf,rerank-maxnorm,minmax,zscore,maxnorm] [-json FILE]
//	    [-split all|dev|test] [-misses] [-bridge-weight W] [-prior-unexported F]
//	    run every query of each set in each mode against a store made by
//	    `searchd index $(go env GOROOT)/src --data DIR` and print success@1,
//	    success@5, MRR@10 and the paired bootstrap of RR@10 against the
//	    first mode. A mode name ending in "+x" runs that mode with the
//	    collection's vocabulary bridge (searchd search --expand), its
//	    association weights scaled by -bridge-weight (default
//	    ingest.ExpandWeight); a fusion
//	    mode takes "@N" (Window) and "/α" (dense weight α, lexical 1−α):
//	    "rerank-maxnorm@30/0.5". -split dev keeps the queries of even
//	    position in each set (0-based), test the odd ones: parameters are
//	    chosen on dev and reported on test. -misses lists each query not
//	    answered at rank 1 with its rank and top hit. The set intent-py
//	    is evaluated against a store of the Python library
//	    (`searchd index /usr/lib/python3.11`) with -root set to that
//	    directory.
//	strata-codebench recall -data DIR [-collection code] [-k 10]
//	    dense recall@k of the collection's vector search (HNSW warm
//	    segments at their efSearch, plus the MemTable) against exact
//	    brute-force cosine over every stored vector, for the query texts of
//	    the intent and doc-sentence sets embedded with the built-in embedder
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stratasearch/strata/bench/code"
	"github.com/stratasearch/strata/bench/hybrid"
	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/embed"
	"github.com/stratasearch/strata/engine/embed/static"
	"github.com/stratasearch/strata/ingest"
)

const (
	intentTSV    = "bench/code/intent/queries.tsv"
	intentJSON   = "bench/code/intent/answers.json"
	docSentJSON  = "bench/code/docsentence/queries.json"
	intentPyTSV  = "bench/code/intent-py/queries.tsv"
	intentPyJSON = "bench/code/intent-py/answers.json"
	pythonRoot   = "/usr/lib/python3.11"
	docSentN     = 200
	docSentSeed  = 1
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: strata-codebench resolve|eval [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "resolve":
		err = resolve(os.Args[2:])
	case "resolve-py":
		err = resolvePy(os.Args[2:])
	case "eval":
		err = eval(os.Args[2:])
	case "recall":
		err = recall(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "strata-codebench:", err)
		os.Exit(1)
	}
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// setFile is the JSON of a resolved query set.
type setFile struct {
	GoVersion string       `json:"go_version"`
	Method    string       `json:"method"`
	Queries   []code.Query `json:"queries"`
}

func resolve(args []string) error {
	fl := flag.NewFlagSet("resolve", flag.ContinueOnError)
	goroot := fl.String("goroot", runtime.GOROOT(), "GOROOT whose src is resolved against")
	if err := fl.Parse(args); err != nil {
		return err
	}
	src := filepath.Join(*goroot, "src")
	r := code.NewResolver(src)
	qs, err := code.ReadTSV(intentTSV)
	if err != nil {
		return err
	}
	var errs []error
	for i := range qs {
		if err := r.Resolve(&qs[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := writeJSON(intentJSON, setFile{GoVersion: runtime.Version(), Method: "intent/README.md", Queries: qs}); err != nil {
		return err
	}
	fmt.Printf("%s: %d queries resolved against %s\n", intentJSON, len(qs), src)
	draw, err := code.DrawDocSentence(src, docSentN, docSentSeed)
	if err != nil {
		return err
	}
	type docQ struct {
		code.DocDecl
		Answers []code.Answer `json:"answers"`
	}
	var out struct {
		GoVersion string `json:"go_version"`
		Method    string `json:"method"`
		Queries   []docQ `json:"queries"`
	}
	out.GoVersion = runtime.Version()
	out.Method = fmt.Sprintf("code.DrawDocSentence(GOROOT/src, %d, seed %d): exported functions and methods with a doc comment, outside cmd/, internal, vendor, testdata and generated files; query = the doc comment's first sentence without its leading name; identifier = pkg.Name or pkg.Type.Method", docSentN, docSentSeed)
	for _, d := range draw {
		q := code.Query{Text: d.Sentence, Specs: []string{d.Spec}}
		if err := r.Resolve(&q); err != nil {
			return err
		}
		out.Queries = append(out.Queries, docQ{DocDecl: d, Answers: q.Answers})
	}
	if err := writeJSON(docSentJSON, out); err != nil {
		return err
	}
	fmt.Printf("%s: %d declarations drawn\n", docSentJSON, len(out.Queries))
	return nil
}

func resolvePy(args []string) error {
	fl := flag.NewFlagSet("resolve-py", flag.ContinueOnError)
	root := fl.String("root", pythonRoot, "Python library root the answers' files are relative to")
	if err := fl.Parse(args); err != nil {
		return err
	}
	qs, err := code.ReadTSV(intentPyTSV)
	if err != nil {
		return err
	}
	var errs []error
	for i := range qs {
		if err := code.ResolvePython(*root, &qs[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := writeJSON(intentPyJSON, setFile{GoVersion: "python library " + *root, Method: "intent-py/README.md", Queries: qs}); err != nil {
		return err
	}
	fmt.Printf("%s: %d queries resolved against %s\n", intentPyJSON, len(qs), *root)
	return nil
}

// row is one (set, mode) result.
type row struct {
	Set     string     `json:"set"`
	Mode    string     `json:"mode"`
	Queries int        `json:"queries"`
	S1      float64    `json:"success_at_1"`
	S5      float64    `json:"success_at_5"`
	MRR10   float64    `json:"mrr_at_10"`
	VsLex   *hybrid.CI `json:"rr10_vs_lexical,omitempty"`
	Ranks   []int      `json:"ranks"`
	MeanMs  float64    `json:"mean_ms"`
}

func loadSets(names []string) (map[string][]code.Query, error) {
	sets := map[string][]code.Query{}
	for _, n := range names {
		switch n {
		case "intent", "intent-py":
			var f setFile
			p := intentJSON
			if n == "intent-py" {
				p = intentPyJSON
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			if err := json.Unmarshal(b, &f); err != nil {
				return nil, err
			}
			sets[n] = f.Queries
		case "docsentence", "identifier":
			var f struct {
				Queries []struct {
					code.DocDecl
					Answers []code.Answer `json:"answers"`
				} `json:"queries"`
			}
			b, err := os.ReadFile(docSentJSON)
			if err != nil {
				return nil, err
			}
			if err := json.Unmarshal(b, &f); err != nil {
				return nil, err
			}
			for _, q := range f.Queries {
				t := q.Sentence
				if n == "identifier" {
					t = q.Identifier
				}
				sets[n] = append(sets[n], code.Query{Text: t, Specs: []string{q.Spec}, Answers: q.Answers})
			}
		default:
			return nil, fmt.Errorf("unknown set %q", n)
		}
	}
	return sets, nil
}

func eval(args []string) error {
	fl := flag.NewFlagSet("eval", flag.ContinueOnError)
	data := fl.String("data", "", "store made by searchd index GOROOT/src")
	colName := fl.String("collection", "code", "collection")
	setsF := fl.String("sets", "intent,docsentence,identifier", "query sets")
	modesF := fl.String("modes", "lexical,plain,dense,hybrid,plain-hybrid,rrf,rerank-maxnorm,minmax,zscore,maxnorm", "modes: lexical (definitions first, the CLI), plain (BM25), dense, hybrid (the collection's default fusion, definitions first), plain-hybrid (the same without definitions first), or a fusion method")
	jsonOut := fl.String("json", "", "write the rows as JSON here")
	goroot := fl.String("goroot", runtime.GOROOT(), "GOROOT the store indexed")
	split := fl.String("split", "all", "queries: all | dev (even positions) | test (odd positions)")
	misses := fl.Bool("misses", false, "list the queries not answered at rank 1 (rank, top hit)")
	rootF := fl.String("root", "", "the directory the store indexed, answers' files are relative to (default GOROOT/src)")
	priorUnexp := fl.Float64("prior-unexported", ingest.PriorUnexported, "path prior factor of a declaration that is not public API (ingest.PriorUnexported; 1 = none)")
	bridgeW := fl.Float64("bridge-weight", 0, "factor on the bridge's association weights in +x modes (ingest.Bridge.Weight; 0 = ingest.ExpandWeight)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *priorUnexp < 0 || *priorUnexp > 1 {
		return fmt.Errorf("eval: -prior-unexported %g: want a factor in [0, 1]", *priorUnexp)
	}
	ingest.PriorUnexported = *priorUnexp
	if *data == "" {
		return errors.New("eval: -data is required")
	}
	if *split != "all" && *split != "dev" && *split != "test" {
		return fmt.Errorf("eval: -split %q: want all, dev or test", *split)
	}
	src := filepath.Join(*goroot, "src")
	if *rootF != "" {
		src = *rootF
	}
	setNames := strings.Split(*setsF, ",")
	sets, err := loadSets(setNames)
	if err != nil {
		return err
	}
	if *split != "all" {
		for n, qs := range sets {
			var keep []code.Query
			for i, q := range qs {
				if (i%2 == 0) == (*split == "dev") {
					keep = append(keep, q)
				}
			}
			sets[n] = keep
		}
	}
	db, err := engine.Open(*data, engine.Options{Embedders: map[string]embed.Embedder{static.BuiltinModel: static.Lazy{}}})
	if err != nil {
		return err
	}
	defer db.Close()
	col, err := db.Collection(*colName)
	if err != nil {
		return err
	}
	fmt.Printf("collection %q: hybrid default %s, embedding %+v, split %s\n", *colName, col.Options().HybridDefault, col.Options().Embedding, *split)
	var bridge *ingest.Bridge // loaded for the first "+x" mode
	var missLog []string
	ctx := context.Background()
	var rows []row
	for _, sn := range setNames {
		qs := sets[sn]
		var lexRR []float64
		fmt.Printf("\n%s (%d queries)\n| mode | success@1 | success@5 | MRR@10 | ΔRR@10 vs %s [95%% CI] | ms/query |\n|---|---|---|---|---|---|\n", sn, len(qs), strings.Split(*modesF, ",")[0])
		for _, m := range strings.Split(*modesF, ",") {
			r := row{Set: sn, Mode: m, Queries: len(qs)}
			var rr []float64
			t0 := time.Now()
			base, expand := strings.CutSuffix(m, "+x")
			so := ingest.SearchOptions{}
			if expand {
				if bridge == nil {
					p := filepath.Join(*data, "ingest", *colName+".bridge")
					if bridge, err = ingest.LoadBridge(p); err != nil {
						return err
					}
					if bridge == nil {
						return fmt.Errorf("mode %q: no vocabulary bridge at %s", m, p)
					}
					bridge.Weight = *bridgeW
				}
				so.Bridge = bridge
			}
			for _, q := range qs {
				cq := contract.Query{Text: q.Text, TopK: 10}
				search := func(ctx context.Context, c *engine.Collection, q contract.Query) (contract.Result, error) {
					return ingest.SearchWith(ctx, c, q, so)
				}
				switch base {
				case "lexical":
					cq.Mode = contract.Lexical
				case "plain":
					cq.Mode = contract.Lexical
					search = func(ctx context.Context, c *engine.Collection, q contract.Query) (contract.Result, error) {
						return c.Search(ctx, q)
					}
				case "dense":
					cq.Mode = contract.Dense
				case "hybrid":
					cq.Mode = contract.Hybrid
				case "plain-hybrid":
					cq.Mode = contract.Hybrid
					search = func(ctx context.Context, c *engine.Collection, q contract.Query) (contract.Result, error) {
						return c.Search(ctx, q)
					}
				default:
					// A fusion method, optionally "@N" (Fusion.Window)
					// and "/α" (dense weight).
					spec, alpha, hasAlpha := strings.Cut(base, "/")
					meth, win, _ := strings.Cut(spec, "@")
					cq.Mode, cq.Fusion.Method = contract.Hybrid, meth
					if hasAlpha {
						a, err := strconv.ParseFloat(alpha, 64)
						if err != nil || a < 0 || a > 1 {
							return fmt.Errorf("mode %q: dense weight %q: want a number in [0, 1]", m, alpha)
						}
						cq.Fusion.Weights = map[string]float64{"lexical": 1 - a, "dense": a}
					}
					if win != "" {
						if cq.Fusion.Window, err = strconv.Atoi(win); err != nil {
							return fmt.Errorf("mode %q: %w", m, err)
						}
					}
				}
				res, err := search(ctx, col, cq)
				if err != nil {
					return fmt.Errorf("%s %s %q: %w", sn, m, q.Text, err)
				}
				var hs []code.HitSpan
				for _, h := range res.Hits {
					p, from, to, err := engine.ParseFileURI(h.SourceURI)
					if err != nil {
						continue
					}
					rel, err := filepath.Rel(src, p)
					if err != nil {
						continue
					}
					hs = append(hs, code.HitSpan{File: filepath.ToSlash(rel), From: from, To: to})
				}
				k := code.Match(q.Answers, hs)
				r.Ranks = append(r.Ranks, k)
				if *misses && k != 1 {
					top := "(no hits)"
					if len(res.Hits) > 0 {
						sym, _ := res.Hits[0].Metadata[ingest.MetaSymbol].Str()
						p, _ := res.Hits[0].Metadata[ingest.MetaPath].Str()
						top = p + " " + sym
					}
					missLog = append(missLog, fmt.Sprintf("%s\t%s\t%2d  %-60q want %s  top %s", sn, m, k, q.Text, strings.Join(q.Specs, " "), top))
				}
				v := 0.0
				if k > 0 {
					v = 1 / float64(k)
				}
				rr = append(rr, v)
				if k == 1 {
					r.S1++
				}
				if k >= 1 && k <= 5 {
					r.S5++
				}
				r.MRR10 += v
			}
			n := float64(len(qs))
			r.S1, r.S5, r.MRR10 = r.S1/n, r.S5/n, r.MRR10/n
			r.MeanMs = float64(time.Since(t0).Microseconds()) / 1000 / n
			ci := "—"
			if lexRR == nil {
				lexRR = rr // the first mode is the baseline
			} else {
				c, err := hybrid.PairedBootstrap(lexRR, rr, 10000, 0.95, 1)
				if err != nil {
					return err
				}
				r.VsLex = &c
				ci = fmt.Sprintf("%+.3f [%+.3f, %+.3f]", c.MeanDiff, c.Lo, c.Hi)
			}
			fmt.Printf("| %s | %.3f | %.3f | %.3f | %s | %.1f |\n", m, r.S1, r.S5, r.MRR10, ci, r.MeanMs)
			rows = append(rows, r)
		}
	}
	if len(missLog) > 0 {
		fmt.Printf("\nnot at rank 1 (set, mode, rank (0 = not in the top 10), query, answers, top hit)\n%s\n", strings.Join(missLog, "\n"))
	}
	if *jsonOut != "" {
		return writeJSON(*jsonOut, rows)
	}
	return nil
}

func recall(args []string) error {
	fl := flag.NewFlagSet("recall", flag.ContinueOnError)
	data := fl.String("data", "", "store made by searchd index GOROOT/src")
	colName := fl.String("collection", "code", "collection")
	k := fl.Int("k", 10, "recall depth")
	if err := fl.Parse(args); err != nil {
		return err
	}
	sets, err := loadSets([]string{"intent", "docsentence"})
	if err != nil {
		return err
	}
	var texts []string
	for _, n := range []string{"intent", "docsentence"} {
		for _, q := range sets[n] {
			texts = append(texts, q.Text)
		}
	}
	emb, err := static.Builtin()
	if err != nil {
		return err
	}
	db, err := engine.Open(*data, engine.Options{Embedders: map[string]embed.Embedder{static.BuiltinModel: static.Lazy{}}})
	if err != nil {
		return err
	}
	defer db.Close()
	col, err := db.Collection(*colName)
	if err != nil {
		return err
	}
	ctx := context.Background()
	var ids []string
	var vecs [][]float32
	for after := ""; ; {
		page, err := col.List(ctx, after, 10000)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			break
		}
		for _, id := range page {
			d, err := col.Get(ctx, id)
			if err != nil {
				return err
			}
			if len(d.Vector) > 0 {
				ids, vecs = append(ids, id), append(vecs, d.Vector)
			}
		}
		after = page[len(page)-1]
	}
	qv, err := emb.Embed(ctx, texts)
	if err != nil {
		return err
	}
	var sum float64
	t0 := time.Now()
	var searchTime time.Duration
	for i, q := range qv {
		// Exact: cosine (vectors are unit length) over every vector.
		type sc struct {
			s  float64
			id string
		}
		best := make([]sc, 0, *k+1)
		for j, v := range vecs {
			var dot, nv float64
			for t, x := range v {
				dot += float64(x) * float64(q[t])
				nv += float64(x) * float64(x)
			}
			s := dot / math.Sqrt(max(nv, 1e-30))
			if len(best) < *k || s > best[len(best)-1].s {
				best = append(best, sc{s, ids[j]})
				sort.Slice(best, func(a, b int) bool { return best[a].s > best[b].s })
				if len(best) > *k {
					best = best[:*k]
				}
			}
		}
		ts := time.Now()
		res, err := col.Search(ctx, contract.Query{Text: texts[i], Mode: contract.Dense, TopK: *k})
		searchTime += time.Since(ts)
		if err != nil {
			return err
		}
		got := map[string]bool{}
		for _, h := range res.Hits {
			got[h.DocID] = true
		}
		hit := 0
		for _, b := range best {
			if got[b.id] {
				hit++
			}
		}
		sum += float64(hit) / float64(len(best))
	}
	fmt.Printf("dense recall@%d = %.4f over %d queries (%d stored vectors, exact brute force vs the collection's dense search; %.2f ms/query dense search; %v total)\n",
		*k, sum/float64(len(qv)), len(qv), len(vecs), float64(searchTime.Microseconds())/1000/float64(len(qv)), time.Since(t0).Round(time.Second))
	return nil
}
