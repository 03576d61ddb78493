package main

// The "Main job" test of issue #9: index a fixed subset of the Go standard
// library's source and find known functions in the top 5, by name and by a
// paraphrase of their doc comment (not its words). Lexical search (BM25,
// definitions first: ingest.Search, what `searchd search` runs) is always
// run and asserted. Hybrid search with the bundled embedder
// (tools/embed-server, USE-Lite 512-d; RRF k=60 over the full lexical and
// dense lists, the strategy `index --embedder` collections get) runs when
// STRATA_EMBEDDER names a running server, or when node and
// tools/embed-server/node_modules exist (the test starts the server), and
// is reported separately; STRATA_REQUIRE_EMBEDDER=1 turns its absence into
// a failure (scripts/embed-server-ci.sh sets it).
//
// Corpus: the non-test .go files of strings, bytes, strconv, sort and
// unicode/utf8 (about 460 declarations), copied into a temporary tree so
// that embedding them stays within a CI budget (the bundled embedder did
// 15–60 chunks/s on the shared 2-core machine: 7–30 s for the subset).

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/embed"
	"github.com/stratasearch/strata/ingest"
)

var mainJobPackages = []string{"strings", "bytes", "strconv", "sort", "unicode/utf8"}

// mainJobQuery is one query with the declarations that answer it
// ("pkg.Symbol", pkg = the package directory).
type mainJobQuery struct {
	text   string
	accept []string
	// lexicalMisses marks a paraphrase BM25 alone does not put in the top
	// 5 (measured; documented here as the issue asks). Lexical is not
	// asserted for it; hybrid is, when the embedder runs.
	lexicalMisses bool
	// hybridMisses marks a query the hybrid run is not asserted on (with
	// the reason in a comment).
	hybridMisses bool
}

var mainJobQueries = []mainJobQuery{
	// By name.
	{text: "strings.EqualFold", accept: []string{"strings.EqualFold"}},
	{text: "strconv.ParseInt", accept: []string{"strconv.ParseInt"}},
	{text: "sort.Slice", accept: []string{"sort.Slice"}},
	{text: "utf8.DecodeRuneInString", accept: []string{"unicode/utf8.DecodeRuneInString"}},
	{text: "bytes.Buffer", accept: []string{"bytes.Buffer"}},
	{text: "strings.Builder", accept: []string{"strings.Builder"}},
	// By paraphrase of the doc comment (no query word is the symbol's name).
	// BM25 ranks strings.Compare, ToUpper, ToLower first: "case-folding"
	// and "case-insensitivity" share only "case" with the query.
	{text: "compare two strings ignoring upper and lower case", accept: []string{"strings.EqualFold", "bytes.EqualFold"}, lexicalMisses: true},
	{text: "convert text to an integer in a given base", accept: []string{"strconv.ParseInt", "strconv.ParseUint"}},
	{text: "remove white space at the beginning and the end", accept: []string{"strings.TrimSpace", "bytes.TrimSpace"}},
	{text: "check whether text begins with a given prefix", accept: []string{"strings.HasPrefix", "bytes.HasPrefix"}},
	{text: "how many bytes are needed to encode a character", accept: []string{"unicode/utf8.RuneLen", "unicode/utf8.EncodeRune", "unicode/utf8.AppendRune"}},
	{text: "put a slice in increasing order with a less function", accept: []string{"sort.Slice", "sort.SliceStable", "sort.Sort", "sort.Stable"}},
	{text: "find the smallest index where a condition becomes true using binary search", accept: []string{"sort.Search", "sort.Find"}},
	{text: "add quotation marks around a string and escape special characters", accept: []string{"strconv.Quote", "strconv.AppendQuote"}},
	{text: "cut a string into pieces around a separator", accept: []string{"strings.Split", "strings.SplitN", "strings.Cut", "bytes.Split", "bytes.SplitN", "bytes.Cut"}},
	// Count's doc says "non-overlapping instances of substr": no query word
	// but "substring" (stemmed differently) is shared.
	{text: "count how many times a substring occurs", accept: []string{"strings.Count", "bytes.Count"}, lexicalMisses: true},
	// Neither retriever connects "capital" with "upper case": BM25 has no
	// shared word, USE-Lite puts ToUpper about 9th. Kept as a documented
	// miss of both.
	{text: "make every letter capital", accept: []string{"strings.ToUpper", "bytes.ToUpper", "strings.ToTitle", "bytes.ToTitle"}, lexicalMisses: true, hybridMisses: true},
	{text: "a growable buffer of bytes you can read from and write to", accept: []string{"bytes.Buffer", "bytes.NewBuffer"}},
}

// goroot returns $(go env GOROOT).
func goroot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// copyMainJobTree copies the corpus into dir/<pkg>/ and returns dir.
func copyMainJobTree(t *testing.T) string {
	t.Helper()
	src := filepath.Join(goroot(t), "src")
	dst := t.TempDir()
	n := 0
	for _, p := range mainJobPackages {
		ents, err := os.ReadDir(filepath.Join(src, p))
		if err != nil {
			t.Skipf("GOROOT source not available: %v", err)
		}
		if err := os.MkdirAll(filepath.Join(dst, p), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(src, p, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, p, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if n < 20 {
		t.Fatalf("only %d files copied", n)
	}
	return dst
}

// hitKey is "pkg.Symbol" of a hit (pkg = the path's directory).
func hitKey(h contract.Envelope) string {
	sym, _ := h.Metadata[ingest.MetaSymbol].Str()
	path, _ := h.Metadata[ingest.MetaPath].Str()
	return filepath.ToSlash(filepath.Dir(path)) + "." + sym
}

// rankOf is the 1-based rank of the first accepted hit, 0 if none.
func rankOf(hits []contract.Envelope, accept []string) int {
	for i, h := range hits {
		k := hitKey(h)
		for _, a := range accept {
			if k == a {
				return i + 1
			}
		}
	}
	return 0
}

// mainJobRun indexes root into a fresh store (with emb, if set) and
// returns each query's rank in the top 20 (0 = absent) and the top-5
// keys under search, and its ranks under alt (if set).
func mainJobRun(t *testing.T, root string, emb embed.Embedder, search, alt func(*engine.Collection, mainJobQuery) (contract.Result, error)) ([]int, [][]string, []int, ingest.Stats) {
	t.Helper()
	data := t.TempDir()
	db, col, err := openStore(data, "code", true, "none", emb)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	o := ingest.Options{Embedder: emb}
	st, err := ingest.Index(context.Background(), col, filepath.Join(data, "manifest.json"), root, o, ingest.Progress{})
	if err != nil {
		t.Fatal(err)
	}
	ranks := make([]int, len(mainJobQueries))
	altRanks := make([]int, len(mainJobQueries))
	tops := make([][]string, len(mainJobQueries))
	for i, q := range mainJobQueries {
		if alt != nil {
			res, err := alt(col, q)
			if err != nil {
				t.Fatalf("%q: %v", q.text, err)
			}
			altRanks[i] = rankOf(res.Hits, q.accept)
		}
		res, err := search(col, q)
		if err != nil {
			t.Fatalf("%q: %v", q.text, err)
		}
		ranks[i] = rankOf(res.Hits, q.accept)
		for j, h := range res.Hits {
			if j == 5 {
				break
			}
			tops[i] = append(tops[i], hitKey(h))
		}
	}
	return ranks, tops, altRanks, st
}

func lexicalSearch(col *engine.Collection, q mainJobQuery) (contract.Result, error) {
	return ingest.Search(context.Background(), col, contract.Query{Text: q.text, TopK: 20, Mode: contract.Lexical})
}

// hybridSearch is what `searchd search --mode hybrid` runs: definitions
// first (lexical name lookup), then the hybrid list.
func hybridSearch(col *engine.Collection, q mainJobQuery) (contract.Result, error) {
	return ingest.Search(context.Background(), col, contract.Query{Text: q.text, TopK: 20, Mode: contract.Hybrid})
}

func denseSearch(col *engine.Collection, q mainJobQuery) (contract.Result, error) {
	return col.Search(context.Background(), contract.Query{Text: q.text, TopK: 20, Mode: contract.Dense})
}

func TestMainJobStdlibSubset(t *testing.T) {
	root := copyMainJobTree(t)
	t0 := time.Now()
	lex, lexTop, _, lst := mainJobRun(t, root, nil, lexicalSearch, nil)
	t.Logf("lexical: %d files, %d chunks indexed and %d queries in %v", lst.Indexed, lst.Chunks, len(mainJobQueries), time.Since(t0).Round(time.Millisecond))

	var hyb, dense []int
	var hybTop [][]string
	emb, stop := mainJobEmbedder(t)
	if emb != nil {
		defer stop()
		t1 := time.Now()
		var hst ingest.Stats
		hyb, hybTop, dense, hst = mainJobRun(t, root, emb, hybridSearch, denseSearch)
		t.Logf("hybrid: %d chunks embedded in %v (%.1f chunks/s, %.1f KB/s of embedding text); run %v",
			hst.Embedded, hst.EmbedTime.Round(time.Millisecond), float64(hst.Embedded)/hst.EmbedTime.Seconds(),
			float64(hst.EmbedBytes)/1e3/hst.EmbedTime.Seconds(), time.Since(t1).Round(time.Millisecond))
	}

	// The table (ranks in the top 20; "-" = not there).
	r := func(x int) string {
		if x == 0 {
			return "-"
		}
		return fmt.Sprint(x)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-78s %8s %8s %8s\n", "query", "lexical", "hybrid", "(dense)")
	for i, q := range mainJobQueries {
		h, d := "n/a", "n/a"
		if hyb != nil {
			h, d = r(hyb[i]), r(dense[i])
		}
		fmt.Fprintf(&b, "%-78s %8s %8s %8s\n", fmt.Sprintf("%q", q.text), r(lex[i]), h, d)
	}
	t.Log(b.String())

	for i, q := range mainJobQueries {
		inTop5 := lex[i] >= 1 && lex[i] <= 5
		switch {
		case !q.lexicalMisses && !inTop5:
			t.Errorf("lexical %q: accepted %v at rank %s, want top 5; top 5: %v", q.text, q.accept, r(lex[i]), lexTop[i])
		case q.lexicalMisses && !inTop5:
			t.Logf("lexical alone misses %q (rank %s; top 5 %v): documented", q.text, r(lex[i]), lexTop[i])
		case q.lexicalMisses && inTop5:
			t.Logf("lexical now finds %q (rank %d) although marked lexicalMisses: update the table", q.text, lex[i])
		}
		if hyb == nil {
			continue
		}
		if hybTop5 := hyb[i] >= 1 && hyb[i] <= 5; !q.hybridMisses && !hybTop5 {
			t.Errorf("hybrid %q: accepted %v at rank %s, want top 5; top 5: %v", q.text, q.accept, r(hyb[i]), hybTop[i])
		} else if q.hybridMisses && !hybTop5 {
			t.Logf("hybrid misses %q too (rank %s; top 5 %v): documented", q.text, r(hyb[i]), hybTop[i])
		}
	}
}

// mainJobEmbedder returns the bundled embedder's client (STRATA_EMBEDDER,
// or a server the test starts), or nil when none is available (then the
// hybrid run is skipped, unless STRATA_REQUIRE_EMBEDDER=1).
func mainJobEmbedder(t *testing.T) (embed.Embedder, func()) {
	t.Helper()
	unavailable := func(why string) (embed.Embedder, func()) {
		if os.Getenv("STRATA_REQUIRE_EMBEDDER") == "1" {
			t.Fatalf("hybrid run required (STRATA_REQUIRE_EMBEDDER=1) but %s", why)
		}
		t.Logf("hybrid run skipped: %s (run scripts/embed-server-ci.sh, or set STRATA_EMBEDDER=http://127.0.0.1:7701 with `make embed-server` running)", why)
		return nil, func() {}
	}
	if testing.Short() {
		// -short never runs the hybrid part, required or not: the full
		// run (test.sh step 1) is where STRATA_REQUIRE_EMBEDDER applies.
		t.Log("hybrid run skipped under -short (embedding the corpus takes tens of seconds)")
		return nil, func() {}
	}
	url := os.Getenv("STRATA_EMBEDDER")
	stop := func() {}
	if url == "" {
		node, err := exec.LookPath("node")
		if err != nil {
			return unavailable("node is not installed")
		}
		_, file, _, _ := runtime.Caller(0)
		dir := filepath.Join(filepath.Dir(file), "..", "..", "tools", "embed-server")
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@energetic-ai", "model-embeddings-en")); err != nil {
			return unavailable("tools/embed-server/node_modules is missing (npm ci)")
		}
		url, stop = startEmbedServer(t, node, dir)
	}
	c, err := embed.NewClient(embed.Options{BaseURL: url, Model: defaultEmbedderModel, Timeout: 2 * time.Minute})
	if err != nil {
		stop()
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.Probe(ctx); err != nil {
		stop()
		t.Fatalf("embedder at %s: %v", url, err)
	}
	return c, stop
}

// startEmbedServer runs tools/embed-server on a free port and waits for
// /healthz; stop ends that process.
func startEmbedServer(t *testing.T, node, dir string) (string, func()) {
	t.Helper()
	cmd := exec.Command(node, "server.js", "--port", "0")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if i := strings.Index(line, "http://"); i >= 0 && !sent {
				urlc <- strings.Fields(line[i:])[0]
				sent = true
			}
		}
	}()
	var url string
	select {
	case url = <-urlc:
	case <-time.After(60 * time.Second):
		stop()
		t.Fatal("embed server printed no address within 60 s")
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("embed server at %s not healthy within 2 min: %v", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return url, stop
}
