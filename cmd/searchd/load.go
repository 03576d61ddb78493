package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/server"
)

// runLoadtest is `searchd loadtest`: a bounded loopback load against the
// HTTP API. It starts an in-process server over a temporary store (or uses
// --url), loads --docs synthetic code-like chunks (seeded), then runs
// --clients concurrent clients for --duration, each request a search
// (lexical, dense or hybrid) or, with probability --write-ratio, an upsert
// of 1–4 documents with an Idempotency-Key. It prints p50/p99/max latency
// and throughput per operation and the error count (any non-2xx or
// transport error; must be 0), and compares runtime.NumGoroutine and the
// live heap (after GC) before and after the run: goroutines must return to
// within +5 and the heap to within 2× + 16 MiB of the baseline, or the
// command fails. With --url only the client process is measured.
func runLoadtest(args []string) error {
	fl := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	url := fl.String("url", "", "base URL of a running server (default: start one in-process on loopback over a temp dir)")
	key := fl.String("key", "", "API key for --url (Authorization: Bearer)")
	nDocs := fl.Int("docs", 5000, "synthetic documents loaded first")
	dur := fl.Duration("duration", 30*time.Second, "load duration")
	clients := fl.Int("clients", 8, "concurrent clients")
	writeRatio := fl.Float64("write-ratio", 0.1, "fraction of requests that are upserts")
	seed := fl.Uint64("seed", 1, "random seed")
	colName := fl.String("collection", "loadtest", "collection (created; must not exist)")
	dim := fl.Int("dim", 32, "vector dimension of the synthetic documents")
	topK := fl.Int("top-k", 10, "top_k of searches")
	if _, err := parseArgs(fl, args); err != nil {
		return err
	}
	if *clients < 1 || *nDocs < 1 || *dur <= 0 || *writeRatio < 0 || *writeRatio > 1 || *dim < 1 {
		return errors.New("loadtest: --clients, --docs, --duration, --dim must be positive and --write-ratio in [0,1]")
	}
	out := os.Stdout
	base := strings.TrimRight(*url, "/")
	var stopServer func() error
	if base == "" {
		dir, err := os.MkdirTemp("", "strata-loadtest-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- server.Run(ctx, ln, server.Options{DataDir: dir, MaxConcurrency: 4 * *clients,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		}()
		stopServer = func() error { cancel(); return <-done }
		defer func() {
			if stopServer != nil {
				stopServer()
			}
		}()
		base = "http://" + ln.Addr().String()
		fmt.Fprintf(out, "searchd loadtest: in-process server on %s, store %s\n", ln.Addr(), dir)
	} else {
		fmt.Fprintf(out, "searchd loadtest: server %s (only this client process is measured)\n", base)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: *clients, IdleConnTimeout: 30 * time.Second}
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	lc := &loadClient{base: base, key: *key, hc: hc}

	if err := waitHealthy(lc); err != nil {
		return err
	}
	if code, b, err := lc.post("/v1/collections", map[string]any{"name": *colName,
		"options": map[string]any{"dim": *dim, "metric": "cosine", "analyzer": "code", "sync": "always"}}, ""); err != nil || code != http.StatusCreated {
		return fmt.Errorf("loadtest: creating collection %q: %d %s %v", *colName, code, b, err)
	}
	gen := newCodeGen(*seed, *dim)
	t0 := time.Now()
	const batch = 500
	for i := 0; i < *nDocs; i += batch {
		var docs []contract.Document
		for j := i; j < min(i+batch, *nDocs); j++ {
			docs = append(docs, gen.doc(j))
		}
		if code, b, err := lc.post("/v1/collections/"+*colName+"/documents", map[string]any{"documents": docs}, ""); err != nil || code != http.StatusOK {
			return fmt.Errorf("loadtest: loading: %d %s %v", code, b, err)
		}
	}
	loadTime := time.Since(t0)
	fmt.Fprintf(out, "loaded %d docs (dim %d) in %v (%.0f docs/s)\n", *nDocs, *dim, loadTime.Round(time.Millisecond), float64(*nDocs)/loadTime.Seconds())

	// Warm up briefly (first queries build caches), then take the baseline.
	runLoad(lc, *colName, gen, *clients, 300*time.Millisecond, *writeRatio, *nDocs, *topK, *seed+100)
	g0, h0 := settle(tr)
	fmt.Fprintf(out, "baseline: goroutines=%d heap=%.1f MiB\n", g0, loadMiB(h0))

	fmt.Fprintf(out, "running %v with %d clients, write ratio %.2f, top_k %d ...\n", *dur, *clients, *writeRatio, *topK)
	st := runLoad(lc, *colName, gen, *clients, *dur, *writeRatio, *nDocs, *topK, *seed)
	fmt.Fprintf(out, "%-8s %8s %9s %9s %9s %9s %7s\n", "op", "count", "ops/s", "p50", "p99", "max", "errors")
	var all []time.Duration
	errs := 0
	for _, op := range []string{"search", "upsert"} {
		ls := st.lat[op]
		all = append(all, ls...)
		errs += st.errs[op]
		printOp(out, op, ls, st.errs[op], st.elapsed)
	}
	printOp(out, "total", all, errs, st.elapsed)
	for _, m := range st.firstErrs {
		fmt.Fprintln(out, "  error:", m)
	}

	g1, h1 := settle(tr)
	okG := g1 <= g0+5
	okH := h1 <= 2*h0+16<<20
	verdict := func(ok bool) string {
		if ok {
			return "OK"
		}
		return "NOT BACK AT BASELINE"
	}
	fmt.Fprintf(out, "after: goroutines=%d (baseline %d, Δ%+d: %s) heap=%.1f MiB (baseline %.1f MiB, limit 2×+16 MiB: %s)\n",
		g1, g0, g1-g0, verdict(okG), loadMiB(h1), loadMiB(h0), verdict(okH))
	if stopServer != nil {
		err := stopServer()
		stopServer = nil
		if err != nil {
			return fmt.Errorf("loadtest: server shutdown: %w", err)
		}
	}
	switch {
	case errs > 0:
		return fmt.Errorf("loadtest: %d errors", errs)
	case !okG || !okH:
		return errors.New("loadtest: goroutines or heap did not return to baseline")
	}
	return nil
}

func loadMiB(b uint64) float64 { return float64(b) / (1 << 20) }

// settle closes idle client connections, lets the server's connection
// goroutines exit, and reads the goroutine count and live heap after GC.
func settle(tr *http.Transport) (int, uint64) {
	tr.CloseIdleConnections()
	var g int
	for i := 0; i < 40; i++ {
		runtime.GC()
		ng := runtime.NumGoroutine()
		if i > 0 && ng == g {
			break
		}
		g = ng
		time.Sleep(25 * time.Millisecond)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapAlloc
}

func printOp(w io.Writer, op string, ls []time.Duration, errs int, el time.Duration) {
	if len(ls) == 0 {
		fmt.Fprintf(w, "%-8s %8d %9s %9s %9s %9s %7d\n", op, 0, "-", "-", "-", "-", errs)
		return
	}
	s := slices.Clone(ls)
	slices.Sort(s)
	q := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	fmt.Fprintf(w, "%-8s %8d %9.0f %9v %9v %9v %7d\n", op, len(s), float64(len(s))/el.Seconds(),
		q(0.50).Round(10*time.Microsecond), q(0.99).Round(10*time.Microsecond), s[len(s)-1].Round(10*time.Microsecond), errs)
}

type loadClient struct {
	base, key string
	hc        *http.Client
}

func (c *loadClient) post(path string, body any, idemKey string) (int, []byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequest("POST", c.base+path, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(resp.Body)
	return resp.StatusCode, rb, err
}

func waitHealthy(c *loadClient) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := c.hc.Get(c.base + "/healthz")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("loadtest: %s/healthz not healthy: %v", c.base, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type loadStats struct {
	lat       map[string][]time.Duration
	errs      map[string]int
	firstErrs []string
	elapsed   time.Duration
}

// runLoad runs the mixed load and returns per-op latencies.
func runLoad(c *loadClient, col string, gen *codeGen, clients int, dur time.Duration, writeRatio float64, nDocs, topK int, seed uint64) loadStats {
	st := loadStats{lat: map[string][]time.Duration{}, errs: map[string]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(dur)
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)+1))
			lat := map[string][]time.Duration{}
			errs := map[string]int{}
			var msgs []string
			for n := 0; time.Now().Before(end); n++ {
				op, path, idem := "search", "/v1/collections/"+col+"/search", ""
				var body any
				if rng.Float64() < writeRatio {
					op, path = "upsert", "/v1/collections/"+col+"/documents"
					// k distinct ids: a batch naming an id twice is
					// rejected (400) by design.
					k := min(1+rng.IntN(4), nDocs)
					docs := make([]contract.Document, 0, k)
					seen := make(map[int]bool, k)
					for len(docs) < k {
						if j := rng.IntN(nDocs); !seen[j] {
							seen[j] = true
							docs = append(docs, gen.docRand(rng, j))
						}
					}
					body = map[string]any{"documents": docs}
					idem = fmt.Sprintf("lt-%d-%d-%d", seed, w, n)
				} else {
					body = gen.query(rng, topK)
				}
				t := time.Now()
				code, b, err := c.post(path, body, idem)
				lat[op] = append(lat[op], time.Since(t))
				if err != nil || code != http.StatusOK {
					errs[op]++
					if len(msgs) < 3 {
						msgs = append(msgs, fmt.Sprintf("%s: %d %v %.200s", op, code, err, b))
					}
				}
			}
			mu.Lock()
			for k, v := range lat {
				st.lat[k] = append(st.lat[k], v...)
			}
			for k, v := range errs {
				st.errs[k] += v
			}
			if len(st.firstErrs) < 5 {
				st.firstErrs = append(st.firstErrs, msgs...)
			}
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	st.elapsed = time.Since(start)
	return st
}

// codeGen makes seeded synthetic code-like chunks: Go-looking functions
// whose names and bodies are drawn from a small identifier vocabulary (so
// queries match a realistic fraction of documents), with random unit
// vectors.
type codeGen struct {
	seed  uint64
	dim   int
	words []string
}

func newCodeGen(seed uint64, dim int) *codeGen {
	return &codeGen{seed: seed, dim: dim, words: strings.Fields(`read write open close parse format buffer stream
		token index search query result cache lock mutex channel context deadline error retry backoff
		encode decode marshal json header request response handler server client pool worker queue
		segment posting vector graph node edge merge flush compact snapshot epoch version hash verify
		file path walk chunk line span offset length size count limit budget score rank fuse filter`)}
}

func (g *codeGen) ident(rng *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		w := g.words[rng.IntN(len(g.words))]
		if i > 0 || rng.IntN(2) == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
	}
	return b.String()
}

func (g *codeGen) doc(i int) contract.Document {
	rng := rand.New(rand.NewPCG(g.seed, uint64(i)*2654435761+7))
	return g.docRand(rng, i)
}

func (g *codeGen) docRand(rng *rand.Rand, i int) contract.Document {
	name := g.ident(rng, 2+rng.IntN(2))
	var b strings.Builder
	fmt.Fprintf(&b, "// %s %s the %s of a %s.\nfunc %s(%s %s) (%s, error) {\n", name,
		g.words[rng.IntN(len(g.words))]+"s", g.words[rng.IntN(len(g.words))], g.words[rng.IntN(len(g.words))],
		name, g.ident(rng, 1), g.ident(rng, 1), g.ident(rng, 1))
	for l := 0; l < 3+rng.IntN(12); l++ {
		fmt.Fprintf(&b, "\tif err := %s.%s(%s); err != nil {\n\t\treturn nil, fmt.Errorf(\"%s: %%w\", err)\n\t}\n",
			g.ident(rng, 1), g.ident(rng, 2), g.ident(rng, 1), strings.ToLower(g.ident(rng, 2)))
	}
	b.WriteString("\treturn nil, nil\n}\n")
	return contract.Document{
		ID: fmt.Sprintf("pkg%03d/file%d.go#L%d", i%200, i%17, i), Content: b.String(),
		Vector: g.vec(rng), Trust: contract.Authoritative,
		// Not file://: the files do not exist, and the server refuses an
		// API-written file:// source outside its verify roots.
		SourceURI: fmt.Sprintf("synthetic:///pkg%03d/file%d.go#L%d-L%d", i%200, i%17, i+1, i+11),
	}
}

func (g *codeGen) vec(rng *rand.Rand) []float32 {
	v := make([]float32, g.dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// query is a search: 60% lexical (two vocabulary words), 20% dense, 20%
// hybrid.
func (g *codeGen) query(rng *rand.Rand, topK int) map[string]any {
	text := g.words[rng.IntN(len(g.words))] + " " + g.words[rng.IntN(len(g.words))]
	switch r := rng.Float64(); {
	case r < 0.6:
		return map[string]any{"text": text, "mode": "lexical", "top_k": topK}
	case r < 0.8:
		return map[string]any{"vector": g.vec(rng), "top_k": topK}
	default:
		return map[string]any{"text": text, "vector": g.vec(rng), "top_k": topK}
	}
}
