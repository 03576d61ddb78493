// Command s3bench measures Strata on object storage (engine/remote)
// against the same store on local disk: it chunks the Go files of
// GOROOT/src into documents (80-line chunks, a seeded random 64-d vector
// each), builds one collection locally, publishes it to a versitygw
// started on loopback (internal/testenv/s3gw), and reports
//
//   - local: p50/p99 of lexical, dense and hybrid queries on the writer's
//     DB;
//   - warm: the same queries on a reader whose cache holds every object;
//   - cold: a reader started on an empty cache: time to open (list,
//     download, verify, open the view) and its first query of each mode,
//     and the bytes it fetched;
//   - throughput: queries per second of 1, 2 and 4 reader processes
//     (each its own cache) on one bucket, each on one goroutine.
//
// Usage: go run ./bench/cmd/s3bench [-docs N] [-queries N] [-seconds S]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/remote"
	"github.com/stratasearch/strata/engine/tier"
	"github.com/stratasearch/strata/internal/testenv/s3gw"
	"github.com/stratasearch/strata/vfs/objstore"
)

const dim = 64

var (
	cpuProfile string
	coldOnly   bool
)

func main() {
	docsN := flag.Int("docs", 60000, "chunks to index (GOROOT/src)")
	nq := flag.Int("queries", 300, "queries per mode")
	secs := flag.Float64("seconds", 5, "throughput run length per reader count")
	colds := flag.Int("colds", 5, "cold-reader starts")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the cold-reader starts to this file")
	flag.BoolVar(&coldOnly, "cold-only", false, "skip the streamed/ranged A/B and the throughput runs")
	flag.Parse()
	if os.Getenv("S3BENCH_CHILD") != "" {
		child()
		return
	}
	if err := run(*docsN, *nq, *secs, *colds); err != nil {
		fmt.Fprintln(os.Stderr, "s3bench:", err)
		os.Exit(1)
	}
}

func chunks(n int) ([]contract.Document, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return nil, err
	}
	root := filepath.Join(strings.TrimSpace(string(out)), "src")
	var docs []contract.Document
	r := rand.New(rand.NewPCG(1, 2))
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(docs) >= n {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines) && len(docs) < n; i += 80 {
			v := make([]float32, dim)
			for j := range v {
				v[j] = float32(r.NormFloat64())
			}
			rel, _ := filepath.Rel(root, p)
			docs = append(docs, contract.Document{ID: fmt.Sprintf("%s#%d", rel, i/80),
				Content: strings.Join(lines[i:min(i+80, len(lines))], "\n"), Vector: v, Trust: contract.Authoritative})
		}
		return nil
	})
	return docs, err
}

type querySet struct {
	Lexical, Dense, Hybrid []contract.Query
}

func makeQueries(docs []contract.Document, n int) querySet {
	r := rand.New(rand.NewPCG(3, 4))
	var qs querySet
	for i := 0; i < n; i++ {
		d := docs[r.IntN(len(docs))]
		w := strings.Fields(d.Content)
		var words []string
		for len(words) < 2 && len(w) > 0 {
			x := w[r.IntN(len(w))]
			if len(x) > 3 {
				words = append(words, x)
			}
			if r.IntN(50) == 0 {
				break
			}
		}
		text := strings.Join(words, " ")
		if text == "" {
			text = "func"
		}
		v := make([]float32, dim)
		for j := range v {
			v[j] = d.Vector[j] + float32(r.NormFloat64()*0.3)
		}
		qs.Lexical = append(qs.Lexical, contract.Query{Text: text, Mode: contract.Lexical, TopK: 10})
		qs.Dense = append(qs.Dense, contract.Query{Vector: v, Mode: contract.Dense, TopK: 10})
		qs.Hybrid = append(qs.Hybrid, contract.Query{Text: text, Vector: v, Mode: contract.Hybrid, TopK: 10})
	}
	return qs
}

func pct(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func timeQueries(c *engine.Collection, qs []contract.Query) ([]time.Duration, error) {
	var lat []time.Duration
	for _, q := range qs {
		t0 := time.Now()
		if _, err := c.Search(context.Background(), q); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(t0))
	}
	return lat, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func run(docsN, nq int, secs float64, colds int) error {
	ctx := context.Background()
	bin := s3gw.Binary()
	if bin == "" {
		return fmt.Errorf("versitygw not installed (scripts/versitygw.sh)")
	}
	tmp, err := os.MkdirTemp("", "s3bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	g, err := s3gw.StartAt(bin, filepath.Join(tmp, "gw"))
	if err != nil {
		return err
	}
	defer g.Stop()
	fmt.Printf("# s3bench\nhost: %s, %d cores, asm %s, %s\nversitygw %s posix on %s (loopback)\n\n", cpuModel(),
		runtime.NumCPU(), asm.CurrentLevel(), runtime.Version(), s3gw.Version, g.Endpoint)
	docs, err := chunks(docsN)
	if err != nil {
		return err
	}
	t0 := time.Now()
	db, err := engine.Open(filepath.Join(tmp, "writer"), engine.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	col, err := db.CreateCollection("code", engine.CollectionOptions{Dim: dim, Metric: "l2", MemTableSizeBytes: -1})
	if err != nil {
		return err
	}
	var raw int64
	for i := 0; i < len(docs); i += 2000 {
		if _, err := col.Upsert(ctx, docs[i:min(i+2000, len(docs))]); err != nil {
			return err
		}
		for _, d := range docs[i:min(i+2000, len(docs))] {
			raw += int64(len(d.Content))
		}
		if (i/2000)%5 == 4 {
			if err := col.Flush(ctx); err != nil {
				return err
			}
		}
	}
	if err := col.Flush(ctx); err != nil {
		return err
	}
	if err := col.Compact(ctx); err != nil {
		return err
	}
	fmt.Printf("corpus: %d chunks of GOROOT/src (%.1f MB text), dim %d, built in %s\n", len(docs), float64(raw)/1e6, dim,
		time.Since(t0).Round(time.Millisecond))
	st, err := objstore.New(objstore.Config{Endpoint: g.Endpoint, AccessKey: s3gw.AccessKey, SecretKey: s3gw.SecretKey,
		Bucket: "bench", Prefix: "db"})
	if err != nil {
		return err
	}
	w, err := remote.OpenWriter(ctx, st, db, remote.WriterOptions{LeaseTTL: time.Hour})
	if err != nil {
		return err
	}
	t0 = time.Now()
	v, err := w.Publish(ctx)
	if err != nil {
		return err
	}
	ws := w.Stats()
	fmt.Printf("publish: version %d, %d objects, %.1f MB uploaded in %s\n\n", v, ws.Uploaded, float64(ws.UploadedBytes)/1e6,
		time.Since(t0).Round(time.Millisecond))
	printSections(filepath.Join(tmp, "writer", "collections", "code", "store"))
	qs := makeQueries(docs, nq)
	modes := []struct {
		name string
		q    []contract.Query
	}{{"lexical", qs.Lexical}, {"dense", qs.Dense}, {"hybrid", qs.Hybrid}}

	// Local and warm reader, interleaved query by query (local first for
	// even queries, the reader first for odd ones), after a warm-up of
	// each, so both see the same machine state.
	r, err := remote.OpenReader(ctx, st, remote.ReaderOptions{CacheDir: filepath.Join(tmp, "warm"), CacheBytes: 4 << 30})
	if err != nil {
		return err
	}
	if err := r.Prefetch(ctx); err != nil {
		return err
	}
	view := r.Acquire()
	rc, err := view.DB.Collection("code")
	if err != nil {
		return err
	}
	fmt.Println("| mode | local p50 | local p99 | warm reader p50 | warm reader p99 | warm/local p50 |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, m := range modes {
		timeQueries(col, m.q[:min(20, len(m.q))])
		timeQueries(rc, m.q[:min(20, len(m.q))])
		var l, lat []time.Duration
		for i, q := range m.q {
			cs := []*engine.Collection{col, rc}
			if i%2 == 1 {
				cs[0], cs[1] = rc, col
			}
			for _, c := range cs {
				d, err := timeQueries(c, []contract.Query{q})
				if err != nil {
					return err
				}
				if c == col {
					l = append(l, d...)
				} else {
					lat = append(lat, d...)
				}
			}
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %.2f× |\n", m.name, ms(pct(l, .5)), ms(pct(l, .99)), ms(pct(lat, .5)),
			ms(pct(lat, .99)), float64(pct(lat, .5))/float64(pct(l, .5)))
	}
	view.Release()
	r.Close()

	// Cold: empty cache each time; lazy (text sections on demand) and
	// eager (every object whole) starts interleaved.
	const coldQ = 20 // queries per mode on each fresh reader
	fmt.Printf("\ncold reader (empty cache, %d starts per arm, interleaved): open = list + download + verify + open view; "+
		"then %d queries of each mode (distinct per start and mode), the first of which is \"first\"\n\n", colds, coldQ)
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer f.Close()
	}
	type arm struct {
		opens, fetches, dbOpens []time.Duration
		first, all, total       map[string][]time.Duration
		openBytes               []int64
		qBytes                  map[string][]int64
	}
	arms := map[bool]*arm{}
	for _, eager := range []bool{false, true} {
		arms[eager] = &arm{first: map[string][]time.Duration{}, all: map[string][]time.Duration{},
			total: map[string][]time.Duration{}, qBytes: map[string][]int64{}}
	}
	for i := 0; i < colds; i++ {
		for _, eager := range []bool{false, true} {
			a := arms[eager]
			dir := filepath.Join(tmp, fmt.Sprint("cold", i, eager))
			t0 := time.Now()
			r, err := remote.OpenReader(ctx, st, remote.ReaderOptions{CacheDir: dir, CacheBytes: 4 << 30, Eager: eager})
			if err != nil {
				return err
			}
			open := time.Since(t0)
			a.opens = append(a.opens, open)
			rs := r.Status()
			a.openBytes = append(a.openBytes, rs.Cache.FetchedBytes)
			a.fetches, a.dbOpens = append(a.fetches, rs.Fetch), append(a.dbOpens, rs.Open)
			view := r.Acquire()
			rc, _ := view.DB.Collection("code")
			for mi, m := range modes {
				lo := (mi*colds*coldQ + i*coldQ) % max(1, len(m.q)-coldQ)
				for k, q := range m.q[lo : lo+coldQ] {
					before := r.Status().Cache.FetchedBytes
					lat, err := timeQueries(rc, []contract.Query{q})
					if err != nil {
						return err
					}
					a.qBytes[m.name] = append(a.qBytes[m.name], r.Status().Cache.FetchedBytes-before)
					a.all[m.name] = append(a.all[m.name], lat[0])
					if k == 0 {
						a.first[m.name] = append(a.first[m.name], lat[0])
						a.total[m.name] = append(a.total[m.name], open+lat[0])
					}
				}
			}
			view.Release()
			r.Close()
			os.RemoveAll(dir)
		}
	}
	fmt.Println("| step | lazy p50 | lazy max | eager p50 | eager max |")
	fmt.Println("|---|---|---|---|---|")
	row := func(name string, f func(a *arm) []time.Duration) {
		l, e := f(arms[false]), f(arms[true])
		fmt.Printf("| %s | %s | %s | %s | %s |\n", name, ms(pct(l, .5)), ms(pct(l, 1)), ms(pct(e, .5)), ms(pct(e, 1)))
	}
	row("open (to first servable view)", func(a *arm) []time.Duration { return a.opens })
	row("of which: download + verify", func(a *arm) []time.Duration { return a.fetches })
	row("of which: engine.Open of the view", func(a *arm) []time.Duration { return a.dbOpens })
	for _, m := range modes {
		row("first "+m.name+" query after open", func(a *arm) []time.Duration { return a.first[m.name] })
		row("open + first "+m.name+" query", func(a *arm) []time.Duration { return a.total[m.name] })
	}
	fmt.Printf("\ncold-cache queries (%d per mode and start, %d starts):\n\n", coldQ, colds)
	fmt.Println("| mode | lazy p50 | lazy p99 | eager p50 | eager p99 | lazy bytes fetched per query, mean | max |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, m := range modes {
		l, e := arms[false].all[m.name], arms[true].all[m.name]
		var sum, mx int64
		for _, b := range arms[false].qBytes[m.name] {
			sum += b
			mx = max(mx, b)
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %.1f KB | %.1f KB |\n", m.name, ms(pct(l, .5)), ms(pct(l, .99)), ms(pct(e, .5)),
			ms(pct(e, .99)), float64(sum)/float64(len(arms[false].qBytes[m.name]))/1e3, float64(mx)/1e3)
	}
	fmt.Printf("\nbytes fetched at open: lazy %.1f MB, eager %.1f MB (every object whole)\n",
		float64(arms[false].openBytes[0])/1e6, float64(arms[true].openBytes[0])/1e6)
	if cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	if coldOnly {
		return nil
	}

	// Download only, streamed whole vs ranged parts, interleaved.
	var streamed, ranged []time.Duration
	defMin := remote.RangedMinBytes
	const rangedArm = 16 << 20 // objects from 16 MiB ranged
	for i := 0; i < colds; i++ {
		for _, rmin := range []int64{1 << 62, rangedArm} {
			remote.RangedMinBytes = rmin
			dir := filepath.Join(tmp, fmt.Sprint("ab", i))
			r, err := remote.OpenReader(ctx, st, remote.ReaderOptions{CacheDir: dir, CacheBytes: 4 << 30})
			if err != nil {
				return err
			}
			if rmin == rangedArm {
				ranged = append(ranged, r.Status().Fetch)
			} else {
				streamed = append(streamed, r.Status().Fetch)
			}
			r.Close()
			os.RemoveAll(dir)
		}
	}
	remote.RangedMinBytes = defMin
	fmt.Printf("\ndownload + verify, interleaved (%d each): streamed whole p50 %s, ranged parts (objects >= %d MiB, %d MiB parts, %d at once) p50 %s\n",
		colds, ms(pct(streamed, .5)), rangedArm>>20, remote.RangePartBytes>>20, remote.RangeParallel, ms(pct(ranged, .5)))

	// Throughput: 1, 2, 4 reader processes.
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Printf("\nthroughput (hybrid queries, each reader process one goroutine, %.0f s):\n\n| readers | total QPS | per reader |\n|---|---|---|\n", secs)
	qb, _ := json.Marshal(qs.Hybrid)
	qf := filepath.Join(tmp, "queries.json")
	os.WriteFile(qf, qb, 0o644)
	for _, n := range []int{1, 2, 4} {
		var cmds []*exec.Cmd
		var outs []*bufio.Scanner
		for i := 0; i < n; i++ {
			cmd := exec.Command(exe)
			cmd.Env = append(append(os.Environ(), g.Env()...), "S3BENCH_CHILD=1", "S3BENCH_QUERIES="+qf,
				"S3BENCH_CACHE="+filepath.Join(tmp, fmt.Sprintf("tp%d-%d", n, i)), fmt.Sprintf("S3BENCH_SECONDS=%g", secs))
			out, _ := cmd.StdoutPipe()
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				return err
			}
			cmds = append(cmds, cmd)
			outs = append(outs, bufio.NewScanner(out))
		}
		// Each child prints "ready" once its view is open; then all start.
		for _, sc := range outs {
			if !sc.Scan() || sc.Text() != "ready" {
				return fmt.Errorf("reader child did not start")
			}
		}
		for _, c := range cmds {
			c.Process.Signal(sigCont())
		}
		total := 0.0
		for i, sc := range outs {
			if !sc.Scan() {
				return fmt.Errorf("reader child %d: no result", i)
			}
			q, _ := strconv.ParseFloat(sc.Text(), 64)
			total += q
			cmds[i].Wait()
		}
		fmt.Printf("| %d | %.0f | %.0f |\n", n, total, total/float64(n))
	}
	return nil
}

// child is one reader process of the throughput run: it opens a reader,
// prints "ready", waits for SIGCONT, runs hybrid queries for the given
// seconds and prints its queries per second.
func child() {
	ctx := context.Background()
	c, err := objstore.ConfigFromEnv("s3://bench/db")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	st, _ := objstore.New(c)
	var qs []contract.Query
	b, _ := os.ReadFile(os.Getenv("S3BENCH_QUERIES"))
	json.Unmarshal(b, &qs)
	secs, _ := strconv.ParseFloat(os.Getenv("S3BENCH_SECONDS"), 64)
	wait := waitCont()
	r, err := remote.OpenReader(ctx, st, remote.ReaderOptions{CacheDir: os.Getenv("S3BENCH_CACHE"), CacheBytes: 4 << 30})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := r.Prefetch(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	v := r.Acquire()
	col, _ := v.DB.Collection("code")
	timeQueries(col, qs[:20])
	fmt.Println("ready")
	<-wait
	n := 0
	deadline := time.Now().Add(time.Duration(secs * float64(time.Second)))
	t0 := time.Now()
	for time.Now().Before(deadline) {
		if _, err := col.Search(ctx, qs[n%len(qs)]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		n++
	}
	fmt.Printf("%f\n", float64(n)/time.Since(t0).Seconds())
	v.Release()
	r.Close()
	os.RemoveAll(os.Getenv("S3BENCH_CACHE"))
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func sigCont() os.Signal { return syscall.SIGUSR1 }

func waitCont() <-chan os.Signal {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	return ch
}

// printSections prints the section sizes of the segment files in dir,
// summed over the files.
func printSections(dir string) {
	names, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	sum := map[string]int64{}
	var total int64
	var order []string
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			continue
		}
		in, err := tier.Inspect(b)
		if err != nil {
			continue
		}
		total += int64(len(b))
		for _, s := range in.Sections {
			if _, ok := sum[s.Name]; !ok {
				order = append(order, s.Name)
			}
			sum[s.Name] += s.Length
		}
	}
	fmt.Printf("segment files: %d, %.1f MB;", len(names), float64(total)/1e6)
	for _, k := range order {
		fmt.Printf(" %s %.1f MB", k, float64(sum[k])/1e6)
	}
	fmt.Println()
}
