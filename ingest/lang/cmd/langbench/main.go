// Command langbench measures ingestion's parse+chunk speed per language
// on real source trees: it reads every file under the given directories
// whose language has a tree-sitter grammar (package lang) into memory,
// then times ingest.ChunkFile over them (-rounds times) and, for
// comparison, the structural chunker (ingest.ChunkText) that handled
// them before. It prints files, MB, files/s, MB/s and ms per file, by
// wall clock and by process CPU time (the fair figure on a loaded host),
// and the median file's wall time.
//
// -j N chunks N files at a time (goroutines): ms/file is then wall time
// over all files divided by their number, cpu-ms/f still the process CPU
// time per file. budget% is the largest share of lang's parse backstop
// (ParseTimeout plus ParseTimePerKiB per KiB) one file's ChunkFile took.
//
// -digest adds a column: a SHA-256 prefix over every file's lang.Parse
// output (definitions, references, Decls) and ChunkFile chunks, so that
// a change meant to keep the output can be checked against the corpora.
// -lang keeps only the listed languages. -phases adds a table: the CPU
// time per file of each step of lang.Parse (tree-sitter's parse, the tag
// query, building symbols and Decls, freeing the tree), read from the
// thread's CPU clock over one more pass.
//
//	go run ./ingest/lang/cmd/langbench [-rounds 3] [-j 2] [-digest] [-phases] [-lang c,rust] DIR...
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/ingest/lang"
)

type file struct {
	name string
	src  []byte
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	rounds := flag.Int("rounds", 3, "passes over each language's files")
	profile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	digest := flag.Bool("digest", false, "print a digest of each language's parse and chunk output")
	phases := flag.Bool("phases", false, "print the CPU time of each step of lang.Parse per language")
	only := flag.String("lang", "", "comma-separated languages to keep (all when empty)")
	jobs := flag.Int("j", 1, "files chunked in parallel (goroutines); wall figures then count all of them")
	flag.Parse()
	keep := map[string]bool{}
	for _, t := range strings.Split(*only, ",") {
		if t != "" {
			keep[t] = true
		}
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "langbench:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if !lang.Available() {
		fmt.Fprintln(os.Stderr, "langbench: built without cgo: no tree-sitter parsers")
		os.Exit(2)
	}
	var o ingest.Options
	o.EnsureDefaults()
	byLang := map[string][]file{}
	for _, root := range flag.Args() {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
				return filepath.SkipDir
			}
			tag := ingest.Lang(p)
			if !lang.Supported(tag) || len(keep) > 0 && !keep[tag] {
				return nil
			}
			if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() || st.Size() > o.MaxFileBytes {
				return nil
			}
			b, err := os.ReadFile(p)
			if err == nil {
				byLang[tag] = append(byLang[tag], file{p, b})
			}
			return nil
		})
	}
	tags := make([]string, 0, len(byLang))
	for t := range byLang {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	fmt.Printf("%-11s %6s %7s %9s %7s %9s %9s %8s %8s %8s %9s %9s", "lang", "files", "MB", "files/s", "MB/s", "ms/file", "cpu-ms/f", "p50-ms", "budget%", "chunks", "syms", "text-ms/f")
	if *digest {
		fmt.Printf("  %-16s", "digest")
	}
	fmt.Println()
	for _, tag := range tags {
		fs := byLang[tag]
		var bytes int64
		for _, f := range fs {
			bytes += int64(len(f.src))
		}
		var chunks, syms int
		// Warm up: compile the query, fault in the grammar.
		ingest.ChunkFile(fs[0].name, fs[0].src, o)
		c0, t0 := cpuTime(), time.Now()
		per := make([]time.Duration, len(fs))
		nchunks := make([]int, len(fs))
		nsyms := make([]int, len(fs))
		one := func(r, i int) {
			f := fs[i]
			ft := time.Now()
			cs := ingest.ChunkFile(f.name, f.src, o)
			if r == 0 {
				per[i] = time.Since(ft)
				nchunks[i] = len(cs)
				for _, c := range cs {
					if c.Symbol != "" {
						nsyms[i]++
					}
				}
			}
		}
		for r := 0; r < *rounds; r++ {
			if *jobs <= 1 {
				for i := range fs {
					one(r, i)
				}
				continue
			}
			next := make(chan int)
			var wg sync.WaitGroup
			for w := 0; w < *jobs; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range next {
						one(r, i)
					}
				}()
			}
			for i := range fs {
				next <- i
			}
			close(next)
			wg.Wait()
		}
		wall, cpu := time.Since(t0), cpuTime()-c0
		// The largest share of its parse backstop (lang.ParseTimeout
		// plus lang.ParseTimePerKiB per KiB) any file's whole ChunkFile
		// took: how far real source stays from the bound.
		var worst float64
		for i, f := range fs {
			chunks += nchunks[i]
			syms += nsyms[i]
			budget := lang.ParseBudget(len(f.src))
			worst = max(worst, 100*per[i].Seconds()/budget.Seconds())
		}
		t1 := time.Now()
		for r := 0; r < *rounds; r++ {
			for _, f := range fs {
				l := ingest.NewLines(f.src)
				ingest.ChunkText(l, 1, l.N(), false, o)
			}
		}
		text := time.Since(t1)
		sort.Slice(per, func(i, j int) bool { return per[i] < per[j] })
		p50 := per[len(per)/2]
		n := float64(len(fs) * *rounds)
		mb := float64(bytes) / 1e6
		fmt.Printf("%-11s %6d %7.2f %9.0f %7.2f %9.3f %9.3f %8.3f %8.3f %8d %9d %9.3f", tag, len(fs), mb,
			n/wall.Seconds(), mb*float64(*rounds)/wall.Seconds(), wall.Seconds()*1e3/n, cpu.Seconds()*1e3/n,
			p50.Seconds()*1e3, worst, chunks, syms, text.Seconds()*1e3/n)
		if *digest {
			fmt.Printf("  %s", digestOf(tag, fs, o))
		}
		fmt.Println()
	}
	if *phases {
		printPhases(tags, byLang)
	}
}

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// printPhases parses each language's files once more with lang.ParsePhases
// on one locked thread and prints the CPU ms per file of each step.
func printPhases(tags []string, byLang map[string][]file) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fmt.Printf("\n%-11s %6s %9s %9s %9s %9s %9s\n", "lang", "files", "parse", "query", "build", "free", "total")
	for _, tag := range tags {
		ph := lang.Phases{Clock: threadCPU}
		fs := byLang[tag]
		for _, f := range fs {
			lang.ParsePhases(ingest.LangOf(f.name, f.src), f.src, &ph)
		}
		ms := func(d time.Duration) float64 { return d.Seconds() * 1e3 / float64(len(fs)) }
		fmt.Printf("%-11s %6d %9.3f %9.3f %9.3f %9.3f %9.3f\n", tag, len(fs), ms(ph.Parse), ms(ph.Query),
			ms(ph.Build), ms(ph.Free), ms(ph.Parse+ph.Query+ph.Build+ph.Free))
	}
}

// digestOf hashes every file's lang.Parse result (or its error) and
// ChunkFile chunks, in file order.
func digestOf(tag string, fs []file, o ingest.Options) string {
	h := sha256.New()
	for _, f := range fs {
		fmt.Fprintf(h, "%s\n", f.name)
		pf, err := lang.Parse(ingest.LangOf(f.name, f.src), f.src)
		if err != nil {
			fmt.Fprintf(h, "error %v\n", err)
		} else {
			fmt.Fprintf(h, "%+v\n", *pf)
		}
		fmt.Fprintf(h, "%+v\n", ingest.ChunkFile(f.name, f.src, o))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
