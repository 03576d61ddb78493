//go:build cgo

package lang

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	sitter "github.com/smacker/go-tree-sitter"
	"golang.org/x/sys/unix"
)

// parsed is a parse stopped after collect: its tree and definitions,
// before build.
func parsed(t *testing.T, tag string, src []byte) (*parse, func()) {
	t.Helper()
	g, err := grammarFor(tag)
	if err != nil {
		t.Fatal(err)
	}
	parser := sitter.NewParser()
	parser.SetLanguage(g.lang)
	tree, err := parser.ParseCtx(context.Background(), nil, src)
	if err != nil {
		t.Fatal(err)
	}
	qc := sitter.NewQueryCursor()
	root := tree.RootNode()
	qc.Exec(g.query, root)
	p := &parse{g: g, root: root, tag: tag, src: src, lines: newLineIndex(src)}
	p.collect(func(fn func(tagMatch)) { p.queryMatches(qc, fn) })
	return p, func() { qc.Close(); tree.Close(); parser.Close() }
}

// The C walk of extendAll finds the same wrapper range, doc-comment
// start and end line for every definition as extend's Parent and
// PrevNamedSibling calls, on every sample and on seeded mutations of
// them (lines dropped, duplicated, blanked, joined: error-recovery trees, runs
// of comments with and without blank lines between).
func TestExtendAllMatchesExtend(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	for _, tag := range Languages() {
		b, err := os.ReadFile(filepath.Join("testdata", samples[tag]))
		if err != nil {
			t.Fatal(err)
		}
		srcs := []string{string(b)}
		lines := strings.SplitAfter(string(b), "\n")
		n := 40
		if testing.Short() {
			n = 10
		}
		for k := 0; k < n; k++ {
			var out []string
			for _, l := range lines {
				switch rng.Intn(14) {
				case 0: // drop
				case 1:
					out = append(out, l, l)
				case 2:
					out = append(out, "\n")
				case 3: // joined with the next line
					out = append(out, strings.TrimSuffix(l, "\n")+" ")
				default:
					out = append(out, l)
				}
			}
			srcs = append(srcs, strings.Join(out, ""))
		}
		for k, s := range srcs {
			checkExtendAll(t, fmt.Sprintf("%s #%d", tag, k), tag, []byte(s))
		}
	}
}

// checkExtendAll compares extendAll with extend on one source.
func checkExtendAll(t *testing.T, what, tag string, src []byte) {
	t.Helper()
	a, freeA := parsed(t, tag, src)
	defer freeA()
	b, freeB := parsed(t, tag, src)
	defer freeB()
	a.extendAll(a.root)
	for _, d := range b.defs {
		b.extend(d)
	}
	if len(a.defs) != len(b.defs) {
		t.Fatalf("%s: %d defs vs %d", what, len(a.defs), len(b.defs))
	}
	for i := range a.defs {
		x, y := a.defs[i], b.defs[i]
		if x.outerLo != y.outerLo || x.outerHi != y.outerHi || x.chunkLo != y.chunkLo || x.EndLine != y.EndLine {
			t.Errorf("%s: %s at byte %d: extendAll outer [%d,%d) chunk %d end L%d, extend [%d,%d) chunk %d end L%d",
				what, x.Name, x.StartByte, x.outerLo, x.outerHi, x.chunkLo, x.EndLine, y.outerLo, y.outerHi, y.chunkLo, y.EndLine)
		}
	}
}

// FuzzExtendAll: on any input, in any language, extendAll agrees with
// extend.
func FuzzExtendAll(f *testing.F) {
	tags := Languages()
	for i, tag := range tags {
		b, err := os.ReadFile(filepath.Join("testdata", samples[tag]))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), b)
	}
	f.Fuzz(func(t *testing.T, lang uint8, src []byte) {
		tag := tags[int(lang)%len(tags)]
		checkExtendAll(t, tag, tag, src)
	})
}

// rawNode reads the TSNode a *sitter.Node holds: the C start byte of
// every node agrees with the binding's.
func TestRawNode(t *testing.T) {
	for _, tag := range Languages() {
		b, err := os.ReadFile(filepath.Join("testdata", samples[tag]))
		if err != nil {
			t.Fatal(err)
		}
		p, free := parsed(t, tag, b)
		for _, d := range p.defs {
			if got := rawStartByte(d.node); got != d.node.StartByte() {
				t.Fatalf("%s: raw start byte %d, binding's %d", tag, got, d.node.StartByte())
			}
		}
		free()
	}
}

// Parses from many goroutines at once share the parser pools: each
// gives what a lone parse gives, and no pool holds more than
// GOMAXPROCS idle parsers.
func TestParserPool(t *testing.T) {
	want := map[string]string{}
	srcs := map[string][]byte{}
	for _, tag := range Languages() {
		b, err := os.ReadFile(filepath.Join("testdata", samples[tag]))
		if err != nil {
			t.Fatal(err)
		}
		f, err := Parse(tag, b)
		if err != nil {
			t.Fatal(err)
		}
		srcs[tag], want[tag] = b, dump(f)
	}
	rounds := 5
	if testing.Short() {
		rounds = 2
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			tags := Languages()
			for r := 0; r < rounds; r++ {
				for i := range tags {
					tag := tags[(i+w)%len(tags)]
					f, err := Parse(tag, srcs[tag])
					if err != nil {
						errs <- err.Error()
						return
					}
					if dump(f) != want[tag] {
						errs <- tag + ": a concurrent parse differs from a lone one"
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	for _, tag := range Languages() {
		g, _ := grammarFor(tag)
		if n := len(g.parsers); n > cap(g.parsers) || cap(g.parsers) != runtime.GOMAXPROCS(0) {
			t.Errorf("%s: %d idle parsers, pool of %d", tag, n, cap(g.parsers))
		}
	}
}

// BenchmarkExtend times finding every definition's wrapper and doc
// comments, extend one definition at a time against extendAll's one C
// walk, on each sample repeated 20 times (a file with many top-level
// definitions, as in the corpora's large files).
func BenchmarkExtend(b *testing.B) {
	for _, tag := range Languages() {
		src, err := os.ReadFile(filepath.Join("testdata", samples[tag]))
		if err != nil {
			b.Fatal(err)
		}
		src = []byte(strings.Repeat(string(src)+"\n", 20))
		t := &testing.T{}
		p, free := parsed(t, tag, src)
		for _, impl := range []string{"extend", "extendAll"} {
			b.Run("lang="+tag+"/impl="+impl, func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				for i := 0; i < b.N; i++ {
					if impl == "extend" {
						for _, d := range p.defs {
							p.extend(d)
						}
					} else {
						p.extendAll(p.root)
					}
				}
			})
		}
		free()
	}
}

// BenchmarkParseAB compares, file by file in turn on one locked thread,
// the CPU time of Parse (pooled parser, extendAll) with the earlier
// path (a new parser per file, extend per definition) on a corpus:
// STRATA_LANG_CORPUS=python:/usr/lib/python3.11:.py (language, root,
// file suffixes separated by commas). Without it the benchmark skips.
func BenchmarkParseAB(b *testing.B) {
	spec := strings.SplitN(os.Getenv("STRATA_LANG_CORPUS"), ":", 3)
	if len(spec) != 3 {
		b.Skip("STRATA_LANG_CORPUS=lang:dir:.ext[,.ext] not set")
	}
	tag, root, exts := spec[0], spec[1], strings.Split(spec[2], ",")
	var srcs [][]byte
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		for _, e := range exts {
			if strings.HasSuffix(path, e) {
				if src, err := os.ReadFile(path); err == nil && len(src) <= 4<<20 {
					srcs = append(srcs, src)
				}
				break
			}
		}
		return nil
	})
	if len(srcs) == 0 {
		b.Skip("no files")
	}
	g, err := grammarFor(tag)
	if err != nil {
		b.Fatal(err)
	}
	old := func(src []byte) {
		parser := sitter.NewParser()
		defer parser.Close()
		parser.SetLanguage(g.lang)
		tree, err := parser.ParseCtx(context.Background(), nil, src)
		if err != nil {
			b.Fatal(err)
		}
		defer tree.Close()
		qc := sitter.NewQueryCursor()
		defer qc.Close()
		root := tree.RootNode()
		qc.Exec(g.query, root)
		p := &parse{g: g, root: root, perDef: true, tag: tag, src: src, lines: newLineIndex(src)}
		p.collect(func(fn func(tagMatch)) { p.queryMatches(qc, fn) })
		p.build(&File{Lang: tag})
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var tOld, tNew time.Duration
	var bytes int64
	for i := 0; i < b.N; i++ {
		for k, src := range srcs {
			bytes += int64(len(src))
			// Alternate which goes first, so neither always runs on a
			// warm cache.
			for j := 0; j < 2; j++ {
				t0 := threadCPU()
				if (j+k)%2 == 0 {
					old(src)
					tOld += threadCPU() - t0
				} else {
					if _, err := Parse(tag, src); err != nil {
						b.Fatal(err)
					}
					tNew += threadCPU() - t0
				}
			}
		}
	}
	n := float64(b.N * len(srcs))
	b.ReportMetric(float64(len(srcs)), "files")
	b.ReportMetric(tOld.Seconds()*1e3/n, "old-cpu-ms/file")
	b.ReportMetric(tNew.Seconds()*1e3/n, "new-cpu-ms/file")
	b.ReportMetric(float64(bytes)/1e6/tNew.Seconds(), "new-MB/s")
}

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
