// Command langbench measures ingestion's parse+chunk speed per language
// on real source trees: it reads every file under the given directories
// whose language has a tree-sitter grammar (package lang) into memory,
// then times ingest.ChunkFile over them (-rounds times) and, for
// comparison, the structural chunker (ingest.ChunkText) that handled
// them before. It prints files, MB, files/s, MB/s and ms per file, by
// wall clock and by process CPU time (the fair figure on a loaded host),
// and the median file's wall time.
//
//	go run ./ingest/lang/cmd/langbench [-rounds 3] DIR...
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"syscall"
	"time"

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
	flag.Parse()
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
			if !lang.Supported(tag) {
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
	fmt.Printf("%-11s %6s %7s %9s %7s %9s %9s %8s %8s %9s %9s\n", "lang", "files", "MB", "files/s", "MB/s", "ms/file", "cpu-ms/f", "p50-ms", "chunks", "syms", "text-ms/f")
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
		per := make([]time.Duration, 0, len(fs))
		for r := 0; r < *rounds; r++ {
			for _, f := range fs {
				ft := time.Now()
				cs := ingest.ChunkFile(f.name, f.src, o)
				if r == 0 {
					per = append(per, time.Since(ft))
					chunks += len(cs)
					for _, c := range cs {
						if c.Symbol != "" {
							syms++
						}
					}
				}
			}
		}
		wall, cpu := time.Since(t0), cpuTime()-c0
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
		fmt.Printf("%-11s %6d %7.2f %9.0f %7.2f %9.3f %9.3f %8.3f %8d %9d %9.3f\n", tag, len(fs), mb,
			n/wall.Seconds(), mb*float64(*rounds)/wall.Seconds(), wall.Seconds()*1e3/n, cpu.Seconds()*1e3/n,
			p50.Seconds()*1e3, chunks, syms, text.Seconds()*1e3/n)
	}
}
