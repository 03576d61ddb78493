package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/datasets"
	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/fusion"
	"github.com/stratasearch/strata/engine/hnsw"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/eval"
)

// defaultCodeQueries are the demo's code-search queries over the Go
// standard library.
var defaultCodeQueries = []string{
	"parse http request header",
	"ReadFull",
	"base64 url encoding without padding",
	"\"deadline exceeded\"",
	"+mutex +unlock starvation",
	"utf8 DecodeRune*",
}

func runDemo(args []string) error {
	fl := flag.NewFlagSet("demo", flag.ContinueOnError)
	goroot := fl.String("goroot", "", "Go source tree to index (default: `go env GOROOT`)")
	dsDir := fl.String("datasets", "", "test collections directory (default: $STRATA_DATASETS or ../shared/datasets)")
	k := fl.Int("k", 5, "hits shown per query")
	queries := fl.String("q", "", "code-search queries, separated by ';' (default: a built-in set)")
	skipCode := fl.Bool("skip-code", false, "skip the Go source code search part")
	skipIR := fl.Bool("skip-ir", false, "skip the Cranfield / Vaswani part")
	if err := fl.Parse(args); err != nil {
		return err
	}
	fmt.Printf("Strata demo — %s/%s, %d cores, SIMD level %v\n\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), asm.CurrentLevel())
	if !*skipCode {
		root := *goroot
		if root == "" {
			root = goRoot()
		}
		qs := defaultCodeQueries
		if *queries != "" {
			qs = strings.Split(*queries, ";")
		}
		if err := demoCode(filepath.Join(root, "src"), qs, *k); err != nil {
			return err
		}
	}
	if !*skipIR {
		dir := *dsDir
		if dir == "" {
			var err error
			if dir, err = datasets.Dir(); err != nil {
				return err
			}
		}
		if err := demoIR(dir, *k); err != nil {
			return err
		}
	}
	return nil
}

func goRoot() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err == nil && len(bytes.TrimSpace(out)) > 0 {
		return string(bytes.TrimSpace(out))
	}
	return runtime.GOROOT()
}

// demoCode indexes every *.go file under src as one document with the code
// analyzer (identifier splitting, no stemming) and runs the queries.
func demoCode(src string, queries []string, k int) error {
	fmt.Printf("== Code search: BM25 over %s (*.go, one document per file)\n", src)
	an, err := text.New(text.CodeOptions())
	if err != nil {
		return err
	}
	b := bm25.NewBuilder(bm25.Options{})
	var paths []string
	var bytesIn int64
	start := time.Now()
	var toks []text.Token
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		bytesIn += int64(len(data))
		toks = an.AppendTokens(toks[:0], string(data))
		if _, err := b.Add(uint64(len(paths)), toks); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return fmt.Errorf("walking %s: %w", src, err)
	}
	if len(paths) == 0 {
		return fmt.Errorf("no .go files under %s", src)
	}
	var seg bytes.Buffer
	if _, err := b.WriteTo(&seg); err != nil {
		return err
	}
	s, err := bm25.Open(seg.Bytes(), "memory")
	if err != nil {
		return err
	}
	el := time.Since(start)
	fmt.Printf("indexed %d files, %.1f MiB in %.1fs (%.1f MiB/s); segment %.1f MiB (%.0f%% of source)\n\n",
		len(paths), mib(bytesIn), el.Seconds(), mib(bytesIn)/el.Seconds(), mib(int64(seg.Len())), 100*float64(seg.Len())/float64(bytesIn))

	segs := []*bm25.Segment{s}
	for _, qs := range queries {
		q := bm25.ParseQuery(qs, an, false)
		p := bm25.DefaultSearchParams()
		p.K = k
		t0 := time.Now()
		hits, err := bm25.Search([]bm25.View{{Seg: s}}, q, p, bm25.CollectStats(segs, q.Terms()))
		if err != nil {
			return fmt.Errorf("query %q: %w", qs, err)
		}
		fmt.Printf("query %q  (%d hits in %v)\n", qs, len(hits), time.Since(t0).Round(time.Microsecond))
		for i, h := range hits {
			path := paths[h.ExtID]
			rel, _ := filepath.Rel(src, path)
			line, n := bestLine(path, q.Terms())
			fmt.Printf("  %d. %-48s %7.3f  file://%s#L%d\n", i+1, rel, h.Score, path, n)
			if line != "" {
				fmt.Printf("       %s\n", line)
			}
		}
		fmt.Println()
	}
	return nil
}

// bestLine returns the first line of the file holding the most distinct
// query terms, for display.
func bestLine(path string, terms []string) (string, int) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", 0
	}
	best, bestN, bestScore := "", 0, 0
	for i, l := range strings.Split(string(data), "\n") {
		low := strings.ToLower(l)
		sc := 0
		for _, t := range terms {
			if strings.Contains(low, t) {
				sc++
			}
		}
		if sc > bestScore {
			best, bestN, bestScore = strings.TrimSpace(l), i+1, sc
		}
	}
	if len(best) > 100 {
		best = best[:100] + "…"
	}
	return best, bestN
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// demoIR runs lexical, dense and hybrid retrieval on the judged collections.
func demoIR(dir string, k int) error {
	type loader func(string) (*datasets.Collection, error)
	for _, c := range []struct {
		name string
		load loader
		gain func(int) float64
	}{
		{"cranfield", datasets.LoadCranfield, eval.CranfieldGain},
		{"vaswani", datasets.LoadVaswani, nil},
	} {
		col, err := c.load(filepath.Join(dir, c.name))
		if err != nil {
			return err
		}
		if err := demoCollection(col, c.gain, k); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
	}
	return nil
}

func demoCollection(col *datasets.Collection, gain func(int) float64, k int) error {
	const depth = 100
	fmt.Printf("== %s: %d documents, %d queries, %d judgements\n", col.Name, len(col.Docs), len(col.Queries), col.Qrels.Relevant)

	// Lexical: BM25, English stemming and stop-words.
	an, err := text.New(text.ProseOptions())
	if err != nil {
		return err
	}
	t0 := time.Now()
	b := bm25.NewBuilder(bm25.Options{})
	for i, d := range col.Docs {
		if _, err := b.Add(uint64(i), an.Analyze(d.Content())); err != nil {
			return err
		}
	}
	seg, err := b.Segment()
	if err != nil {
		return err
	}
	lexBuild := time.Since(t0)

	// Dense: HNSW over the USE-512 vectors (cosine), M=16, efConstruction=200.
	if col.DocVecs.N != len(col.Docs) || col.QueryVecs.N != len(col.Queries) {
		return errors.New("vector files do not match the collection")
	}
	t0 = time.Now()
	ix, err := hnsw.New(hnsw.Options{Dim: col.DocVecs.D, Metric: hnsw.Cosine, M: 16, EfConstruction: 200, InitialCapacity: col.DocVecs.N})
	if err != nil {
		return err
	}
	labels := make([]uint64, col.DocVecs.N)
	for i := range labels {
		labels[i] = uint64(i)
	}
	if _, err := ix.AddBatch(labels, col.DocVecs.Data, runtime.NumCPU()); err != nil {
		return err
	}
	denseBuild := time.Since(t0)
	fmt.Printf("BM25 index built in %v; HNSW (M=16, efConstruction=200, %d-d cosine) built in %v\n",
		lexBuild.Round(time.Millisecond), col.DocVecs.D, denseBuild.Round(time.Millisecond))

	runs := map[string]map[string][]string{"lexical (BM25)": {}, "dense (HNSW)": {}, "hybrid (RRF k=60)": {}}
	var lexTime, denseTime time.Duration
	var example []fusion.Fused[string]
	var exampleQ string
	segs := []*bm25.Segment{seg}
	for qi, q := range col.Queries {
		pq := bm25.ParseQuery(q.Text, an, false)
		p := bm25.DefaultSearchParams()
		p.K = depth
		t := time.Now()
		lh, err := bm25.Search([]bm25.View{{Seg: seg}}, pq, p, bm25.CollectStats(segs, pq.Terms()))
		if err != nil {
			return err
		}
		lexTime += time.Since(t)
		t = time.Now()
		dh, err := ix.Search(col.QueryVecs.Row(qi), depth, hnsw.SearchParams{EfSearch: 2 * depth})
		if err != nil {
			return err
		}
		denseTime += time.Since(t)

		lex := fusion.List[string]{Name: "bm25"}
		for _, h := range lh {
			id := col.Docs[h.ExtID].ID
			lex.Hits = append(lex.Hits, fusion.Hit[string]{Key: id, Score: h.Score})
			runs["lexical (BM25)"][q.ID] = append(runs["lexical (BM25)"][q.ID], id)
		}
		den := fusion.List[string]{Name: "hnsw"}
		for _, h := range dh {
			id := col.Docs[h.Label].ID
			den.Hits = append(den.Hits, fusion.Hit[string]{Key: id, Score: -float64(h.Distance)})
			runs["dense (HNSW)"][q.ID] = append(runs["dense (HNSW)"][q.ID], id)
		}
		fused, err := fusion.Fuse([]fusion.List[string]{lex, den}, fusion.Options{TopK: depth})
		if err != nil {
			return err
		}
		for _, f := range fused {
			runs["hybrid (RRF k=60)"][q.ID] = append(runs["hybrid (RRF k=60)"][q.ID], f.Key)
		}
		if qi == 0 {
			example, exampleQ = fused, q.Text
		}
	}

	titles := map[string]string{}
	for _, d := range col.Docs {
		t := d.Title
		if t == "" {
			t = d.Text
		}
		if len(t) > 90 {
			t = t[:90] + "…"
		}
		titles[d.ID] = t
	}
	fmt.Printf("\nquery %q — hybrid top %d:\n", exampleQ, k)
	for i, f := range example[:min(k, len(example))] {
		fmt.Printf("  %d. doc %-6s score %.3f (bm25 rank %s, hnsw rank %s)  %s\n", i+1, f.Key, f.Normalized,
			rankStr(f.Explain[0].Rank), rankStr(f.Explain[1].Rank), titles[f.Key])
	}

	opts := eval.Options{Cutoffs: []int{10, 100}, GradedGain: gain}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\nretriever\tnDCG@10\tMAP@100\tR@100\tMRR@10\t\n")
	names := []string{"lexical (BM25)", "dense (HNSW)", "hybrid (RRF k=60)"}
	for _, n := range names {
		s, err := eval.Evaluate(runs[n], col.Qrels.Judgments, opts)
		if err != nil {
			return err
		}
		a10, _ := s.Cut(10)
		a100, _ := s.Cut(100)
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%.4f\t%.4f\t\n", n, a10.NDCGBinary, s.AP, a100.R, a10.MRR)
	}
	tw.Flush()
	nq := len(col.Queries)
	fmt.Printf("(binary-gain nDCG over %d queries; mean latency per query: BM25 %v, HNSW efSearch=%d %v)\n\n",
		nq, (lexTime / time.Duration(nq)).Round(time.Microsecond), 2*depth, (denseTime / time.Duration(nq)).Round(time.Microsecond))
	return nil
}

func rankStr(r int) string {
	if r == 0 {
		return "-"
	}
	return strconv.Itoa(r)
}
