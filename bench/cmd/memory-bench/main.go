// Command memory-bench runs the engine/memory benchmark: the memgen
// stream at full size against the store and the append-only baseline,
// the near-duplicate threshold study, and the speed of admission + write
// (batched) and of recall on a store of -records records.
//
//	go run ./bench/cmd/memory-bench -subjects 200 -records 100000
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/embed/static"
	"github.com/stratasearch/strata/engine/memory"
	"github.com/stratasearch/strata/engine/memory/memgen"
)

func main() {
	subjects := flag.Int("subjects", 200, "subjects in the quality stream")
	seed := flag.Uint64("seed", 1, "generator seed")
	records := flag.Int("records", 100000, "records in the speed run (0: skip)")
	batch := flag.Int("batch", 1000, "writes per Remember call in the speed run")
	queries := flag.Int("queries", 2000, "recall queries in the speed run")
	quality := flag.Bool("quality", true, "run the quality stream")
	studyOnly := flag.Bool("study", false, "run only the near-duplicate threshold studies (Jaccard and the built-in embedder's cosine)")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write CPU profiles of the speed run's write phase (PATH.write) and recall phases (PATH.memtable, PATH.warm)")
	flag.Parse()
	ctx := context.Background()
	fmt.Printf("host: %s, %d cores, %s/%s, %s, asm level %s\n", cpuName(), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), asm.CurrentLevel())

	if !*quality {
		speed(ctx, *records, *batch, *queries, *seed)
		return
	}
	st := memgen.Generate(memgen.Config{Seed: *seed, Subjects: *subjects})
	if *studyOnly {
		studies(st)
		return
	}
	for _, appendOnly := range []bool{false, true} {
		dir, s, clk := open(ctx, appendOnly, st.Start)
		gdir := dir
		if appendOnly {
			gdir = ""
		}
		t0 := time.Now()
		rep, err := memgen.Run(ctx, s, clk, st, gdir)
		if err != nil {
			log.Fatal(err)
		}
		name := "store (consolidation on)"
		if appendOnly {
			name = "append-only baseline"
		}
		fmt.Printf("\n== %s, seed %d, %d subjects (%v)\n%s\n", name, *seed, *subjects, time.Since(t0).Round(time.Millisecond), rep)
		_ = os.RemoveAll(dir)
	}
	studies(st)
	if *records > 0 {
		speed(ctx, *records, *batch, *queries, *seed)
	}
}

// studies prints the near-duplicate threshold studies on st: shingle
// Jaccard, and cosine of the built-in static embedder's vectors.
func studies(st *memgen.Stream) {
	ths := []float64{0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7}
	ts := memgen.StudyThreshold(st, ths)
	fmt.Printf("\n== near-duplicate threshold (word uni+bigram shingle Jaccard), %d restatement pairs, %d different-fact pairs\n", ts.SamePairs, ts.DiffPairs)
	fmt.Printf("min Jaccard of a restatement pair %.4f, max of two different facts %.4f\n", ts.MinSame, ts.MaxDiff)
	for i, th := range ths {
		fmt.Printf("T=%.2f  restatements below T %d  different facts at or above T %d\n", th, ts.SameBelow[i], ts.DiffAbove[i])
	}
	emb, err := static.Builtin()
	if err != nil {
		log.Fatal(err)
	}
	vec := func(s string) []float32 { return emb.EmbedOne(make([]float32, emb.Dim()), s) }
	cths := []float64{0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99}
	cs := memgen.StudyCosine(st, cths, vec)
	fmt.Printf("\n== near-duplicate threshold (cosine, %s), %d restatement pairs, %d different-fact pairs\n", emb.Model(), cs.SamePairs, cs.DiffPairs)
	fmt.Printf("min cosine of a restatement pair %.4f, max of two different facts %.4f\n", cs.MinSame, cs.MaxDiff)
	for i, th := range cths {
		fmt.Printf("T=%.2f  restatements below T %d  different facts at or above T %d\n", th, cs.SameBelow[i], cs.DiffAbove[i])
	}
	// The stream's preference values are made-up words the embedder does
	// not know (it ignores them), so two preferences of one topic with
	// different values would embed alike. The same template with values
	// it knows: every pair is a different fact.
	values := []string{"dark", "light", "green", "black", "red", "blue", "morning", "evening", "python", "java",
		"tabs", "spaces", "vim", "emacs", "short", "long"}
	topics := []string{"editor theme", "coffee order", "meeting time", "code review style", "test framework",
		"commit message format", "holiday destination", "reading genre", "music while working", "indentation",
		"shell", "note taking app", "standup format", "deploy window", "lunch spot", "keyboard layout",
		"browser", "running route", "tea", "font"}
	above := make([]int, len(cths))
	pairs, maxCos, minCos := 0, -1.0, 2.0
	for _, tp := range topics {
		vs := make([][]float32, len(values))
		for i, v := range values {
			vs[i] = vec(fmt.Sprintf("For %s the user prefers %s", tp, v))
		}
		for i := range vs {
			for j := i + 1; j < len(vs); j++ {
				c := 0.0
				for k := range vs[i] {
					c += float64(vs[i][k]) * float64(vs[j][k])
				}
				pairs++
				maxCos, minCos = max(maxCos, c), min(minCos, c)
				for k, th := range cths {
					if c >= th {
						above[k]++
					}
				}
			}
		}
	}
	fmt.Printf("\n== same topic, another (known) value: %d different-fact pairs \"For <topic> the user prefers <value>\", cosine min %.4f max %.4f\n", pairs, minCos, maxCos)
	for i, th := range cths {
		fmt.Printf("T=%.2f  different facts at or above T %d\n", th, above[i])
	}
}

func open(ctx context.Context, appendOnly bool, start time.Time) (string, *memory.Store, *memgen.Clock) {
	dir, err := os.MkdirTemp("", "memory-bench-")
	if err != nil {
		log.Fatal(err)
	}
	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	col, err := db.CreateCollection("memory", memory.CollectionOptions(4))
	if err != nil {
		log.Fatal(err)
	}
	clk := &memgen.Clock{}
	clk.Set(start)
	s, err := memory.Open(ctx, col, memory.Options{Now: clk.Now, AppendOnly: appendOnly})
	if err != nil {
		log.Fatal(err)
	}
	return dir, s, clk
}

var words = func() []string {
	r := rand.New(rand.NewPCG(7, 7))
	syl := []string{"ka", "lo", "mi", "ru", "ze", "ta", "vo", "ni", "pe", "sa", "do", "fi", "gu", "he", "jo", "bu"}
	out := make([]string, 5000)
	for i := range out {
		w := ""
		for range 2 + r.IntN(3) {
			w += syl[r.IntN(len(syl))]
		}
		out[i] = w
	}
	return out
}()

func speed(ctx context.Context, n, batch, queries int, seed uint64) {
	dir, s, clk := open(ctx, false, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	defer os.RemoveAll(dir)
	r := rand.New(rand.NewPCG(seed, 99))
	nsub := max(1, n/1000)
	kinds := []memory.Kind{memory.Preference, memory.Fact, memory.Lesson, memory.Episode, memory.Note}
	var writeDur time.Duration
	written := 0
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile + ".write")
		if err != nil {
			log.Fatal(err)
		}
		_ = pprof.StartCPUProfile(f)
		defer f.Close()
	}
	for written < n {
		ws := make([]memory.Write, 0, batch)
		for range min(batch, n-written) {
			sub := fmt.Sprintf("user-%04d", r.IntN(nsub))
			text := fmt.Sprintf("%s %s %s about %s and %s %d", words[r.IntN(len(words))], words[r.IntN(len(words))],
				words[r.IntN(len(words))], words[r.IntN(len(words))], words[r.IntN(len(words))], r.IntN(1000000))
			w := memory.Write{Subject: sub, Kind: kinds[r.IntN(len(kinds))], Content: text, Provenance: fmt.Sprintf("conv:%s/%d", sub, written/batch)}
			if r.IntN(10) == 0 {
				w.Kind, w.Key = memory.Fact, fmt.Sprintf("k.%d", r.IntN(20))
			}
			ws = append(ws, w)
		}
		clk.Set(clk.Now().Add(time.Second))
		t0 := time.Now()
		if _, err := s.Remember(ctx, ws); err != nil {
			log.Fatal(err)
		}
		writeDur += time.Since(t0)
		written += len(ws)
	}
	if cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	fmt.Printf("\n== speed: %d records, %d subjects, batches of %d (collection sync \"always\", lexical, no vectors)\n", n, nsub, batch)
	fmt.Printf("admission + write: %.3f ms per record (%.1f s total)\n", float64(writeDur.Microseconds())/1000/float64(n), writeDur.Seconds())
	stats := s.Collection().Stats()
	fmt.Printf("collection: %d live documents, %d warm segments\n", stats.LiveDocs, stats.WarmSegments)
	measure := func(label string) {
		if cpuProfile != "" {
			f, err := os.Create(cpuProfile + "." + label)
			if err != nil {
				log.Fatal(err)
			}
			_ = pprof.StartCPUProfile(f)
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
		recallSpeed(ctx, s, r, nsub, queries, label)
	}
	measure("memtable")
	t0 := time.Now()
	if err := s.Collection().Flush(ctx); err != nil {
		log.Fatal(err)
	}
	stats = s.Collection().Stats()
	fmt.Printf("flushed in %v: %d warm segments\n", time.Since(t0).Round(time.Millisecond), stats.WarmSegments)
	measure("warm")
}

var cpuProfile string

func recallSpeed(ctx context.Context, s *memory.Store, r *rand.Rand, nsub, queries int, label string) {
	lat := make([]time.Duration, 0, queries)
	for i := range queries {
		q := memory.Query{Subject: fmt.Sprintf("user-%04d", r.IntN(nsub)), Text: words[r.IntN(len(words))] + " " + words[r.IntN(len(words))], TopK: 10}
		t0 := time.Now()
		if _, err := s.Recall(ctx, q); err != nil {
			log.Fatal(err)
		}
		if i >= 50 { // warm-up
			lat = append(lat, time.Since(t0))
		}
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
	fmt.Printf("recall (%s; top 10, lexical, subject-scoped): p50 %v  p90 %v  p99 %v over %d queries\n", label, pct(0.5), pct(0.9), pct(0.99), len(lat))
}

func cpuName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range slices.Collect(func(yield func(string) bool) {
		start := 0
		for i, c := range b {
			if c == '\n' {
				if !yield(string(b[start:i])) {
					return
				}
				start = i + 1
			}
		}
	}) {
		if len(l) > 10 && l[:10] == "model name" {
			for i := range l {
				if l[i] == ':' {
					return l[i+2:]
				}
			}
		}
	}
	return "unknown CPU"
}
