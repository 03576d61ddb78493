package bm25

import (
	"bytes"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stratasearch/strata/engine/text"
)

// The Go standard library corpus of REFERENCE.md: every *.go file under
// $(go env GOROOT)/src sorted by relative path, one document each, tokens
// [A-Za-z0-9]+ lower-cased, longer than 64 characters dropped.
var goCorpus struct {
	once    sync.Once
	files   [][]byte
	bytes   int64
	seg     *Segment
	size    int
	queries [][]string
	phrases [][]string
	err     error
}

func benchAnalyzer() *text.Analyzer {
	return text.MustNew(text.Options{Mode: text.ModeOracle, MaxTokenRunes: 64})
}

func loadGoCorpus(b *testing.B) {
	goCorpus.once.Do(func() {
		root := filepath.Join(runtime.GOROOT(), "src")
		var paths []string
		goCorpus.err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(p, ".go") {
				rel, _ := filepath.Rel(root, p)
				paths = append(paths, rel)
			}
			return nil
		})
		sort.Strings(paths)
		for _, p := range paths {
			data, err := os.ReadFile(filepath.Join(root, p))
			if err != nil {
				goCorpus.err = err
				return
			}
			goCorpus.files = append(goCorpus.files, data)
			goCorpus.bytes += int64(len(data))
		}
		a := benchAnalyzer()
		bl := NewBuilder(Options{})
		toks := make([][]string, len(goCorpus.files))
		for i, f := range goCorpus.files {
			ts := a.Analyze(string(f))
			bl.Add(uint64(i), ts)
			for _, t := range ts {
				toks[i] = append(toks[i], t.Term)
			}
		}
		goCorpus.phrases = goPhrases(toks, 1000)
		var buf bytes.Buffer
		bl.WriteTo(&buf)
		goCorpus.size = buf.Len()
		goCorpus.seg, goCorpus.err = Open(buf.Bytes(), "gostdlib")
		if goCorpus.err != nil {
			return
		}
		// 1,000 queries of 1–3 distinct words, seed 42, drawn from rare
		// (df <= 10), mid and common (df > N/10) buckets.
		s := goCorpus.seg
		var rare, mid, common []string
		for i := 0; i < s.NumTerms(); i++ {
			t := s.Term(i)
			switch df := s.DocFreq(t); {
			case df <= 10:
				rare = append(rare, t)
			case df > s.NumDocs()/10:
				common = append(common, t)
			default:
				mid = append(mid, t)
			}
		}
		r := rand.New(rand.NewPCG(42, 0))
		for len(goCorpus.queries) < 1000 {
			n := 1 + r.IntN(3)
			seen := map[string]bool{}
			var q []string
			for len(q) < n {
				var w string
				switch r.IntN(3) {
				case 0:
					w = rare[r.IntN(len(rare))]
				case 1:
					w = mid[r.IntN(len(mid))]
				default:
					w = common[r.IntN(len(common))]
				}
				if !seen[w] {
					seen[w] = true
					q = append(q, w)
				}
			}
			goCorpus.queries = append(goCorpus.queries, q)
		}
	})
	if goCorpus.err != nil {
		b.Fatal(goCorpus.err)
	}
}

// goPhrases is bench/lexical's GeneratePhrases (seed 43) over the
// documents' token lists: n phrases of 2–3 consecutive tokens of a random
// document with at least 3 tokens, so every phrase matches.
func goPhrases(docs [][]string, n int) [][]string {
	r := rand.New(rand.NewPCG(43, 0))
	var qs [][]string
	for tries := 0; len(qs) < n && tries < 100*n+1000; tries++ {
		toks := docs[r.IntN(len(docs))]
		if len(toks) < 3 {
			continue
		}
		k := 2 + r.IntN(2)
		at := r.IntN(len(toks) - k + 1)
		qs = append(qs, toks[at:at+k])
	}
	return qs
}

// BenchmarkGoStdlibPhrase measures single-thread top-10 phrase queries
// over the Go stdlib corpus (bench/lexical's phrase batch: 1,000 phrases
// of 2–3 consecutive tokens, seed 43); one op is one query.
func BenchmarkGoStdlibPhrase(b *testing.B) {
	if testing.Short() {
		b.Skip("builds an index of the whole Go stdlib")
	}
	loadGoCorpus(b)
	views := []View{{Seg: goCorpus.seg}}
	qs := make([]Query, len(goCorpus.phrases))
	for i, ws := range goCorpus.phrases {
		ph := make([]PhraseTerm, len(ws))
		for j, w := range ws {
			ph[j] = PhraseTerm{Term: w, Offset: j}
		}
		qs[i] = Query{Phrases: [][]PhraseTerm{ph}}
	}
	for _, exh := range []bool{false, true} {
		name := "op=phrase/pruned"
		if exh {
			name = "op=phrase/exhaustive"
		}
		b.Run(name, func(b *testing.B) {
			p := DefaultSearchParams()
			p.Exhaustive = exh
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := Search(views, qs[i%len(qs)], p, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGoStdlib measures single-thread top-10 query latency over the
// Go stdlib corpus; one op is one query (QPS = 1e9 / ns/op). The index
// size is reported as index-bytes.
func BenchmarkGoStdlib(b *testing.B) {
	if testing.Short() {
		b.Skip("builds an index of the whole Go stdlib")
	}
	loadGoCorpus(b)
	views := []View{{Seg: goCorpus.seg}}
	for _, mode := range []string{"or", "and"} {
		for _, exh := range []bool{false, true} {
			name := "op=" + mode + "/pruned"
			if exh {
				name = "op=" + mode + "/exhaustive"
			}
			b.Run(name, func(b *testing.B) {
				p := DefaultSearchParams()
				p.Exhaustive = exh
				qs := make([]Query, len(goCorpus.queries))
				for i, q := range goCorpus.queries {
					if mode == "and" {
						qs[i] = Query{Must: q}
					} else {
						qs[i] = Query{Should: q}
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				hits := 0
				for i := 0; b.Loop(); i++ {
					h, err := Search(views, qs[i%len(qs)], p, nil)
					if err != nil {
						b.Fatal(err)
					}
					hits += len(h)
				}
				b.ReportMetric(float64(goCorpus.size), "index-bytes")
			})
		}
	}
}

// BenchmarkGoStdlibIndex measures building and serialising the Go stdlib
// index (one op = the whole corpus; SetBytes = source bytes).
func BenchmarkGoStdlibIndex(b *testing.B) {
	if testing.Short() {
		b.Skip("indexes the whole Go stdlib")
	}
	loadGoCorpus(b)
	a := benchAnalyzer()
	b.SetBytes(goCorpus.bytes)
	b.ReportAllocs()
	for b.Loop() {
		bl := NewBuilder(Options{})
		for i, f := range goCorpus.files {
			bl.Add(uint64(i), a.Analyze(string(f)))
		}
		var buf bytes.Buffer
		bl.WriteTo(&buf)
		b.ReportMetric(float64(buf.Len()), "index-bytes")
	}
}

// BenchmarkBuilderAdd times Builder.Add alone over the Go stdlib cut into
// chunks of about 2 KiB at line ends and analysed as code
// (text.CodeOptions: identifiers split), the shape of a code ingest; the
// tokens are analysed once, before the timer.
func BenchmarkBuilderAdd(b *testing.B) {
	if testing.Short() {
		b.Skip("analyses the whole Go stdlib")
	}
	loadGoCorpus(b)
	a := text.MustNew(text.CodeOptions())
	var docs [][]text.Token
	var n int64
	for _, f := range goCorpus.files {
		for len(f) > 0 {
			cut := min(len(f), 2048)
			if i := bytes.LastIndexByte(f[:cut], '\n'); i > 0 && cut < len(f) {
				cut = i + 1
			}
			docs = append(docs, a.Analyze(string(f[:cut])))
			n += int64(cut)
			f = f[cut:]
		}
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		bl := NewBuilder(Options{})
		for i, d := range docs {
			bl.Add(uint64(i), d)
		}
	}
}
