package main

import (
	"bufio"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/stratasearch/strata/engine/embed/static"
)

// corpusGoVersion is the Go release whose GOROOT/src the shipped table's
// code statistics come from (the first line of GOROOT/VERSION).
const corpusGoVersion = "go1.26.8"

// corpusStats are token counts over a code corpus and its blocks (runs of
// non-blank lines, about one declaration with its doc comment each).
type corpusStats struct {
	counts map[string]int
	total  int
	blocks []string
}

// readCorpus tokenises the non-test .go files under src (skipping
// testdata and vendor trees) and keeps every maxBlocksEvery-th block.
func readCorpus(src string, version string) (*corpusStats, error) {
	if version != "" {
		b, err := os.ReadFile(filepath.Join(src, "..", "VERSION"))
		if err != nil {
			return nil, fmt.Errorf("embedtable: corpus version: %w", err)
		}
		if got, _, _ := strings.Cut(string(b), "\n"); got != version {
			return nil, fmt.Errorf("embedtable: corpus %s is %s, want %s (-corpus-version \"\" to accept any)", src, got, version)
		}
	}
	st := &corpusStats{counts: map[string]int{}}
	nb := 0
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || n == "vendor" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		var blk strings.Builder
		flush := func() {
			if blk.Len() > 0 {
				if nb%4 == 0 {
					st.blocks = append(st.blocks, blk.String())
				}
				nb++
				blk.Reset()
			}
		}
		for sc.Scan() {
			l := sc.Text()
			if strings.TrimSpace(l) == "" {
				flush()
				continue
			}
			blk.WriteString(l)
			blk.WriteByte('\n')
			for _, t := range static.Tokens(l) {
				st.counts[t]++
				st.total++
			}
		}
		flush()
		return sc.Err()
	})
	return st, err
}

// p returns the corpus frequency of w (0 if absent).
func (c *corpusStats) p(w string) float64 {
	if c == nil || c.total == 0 {
		return 0
	}
	return float64(c.counts[w]) / float64(c.total)
}

// commonComponent is the first principal direction (uncentred, power
// iteration from a fixed start) of the unit embeddings of the corpus
// blocks under t with no common component.
func commonComponent(t *static.Table, blocks []string) []float32 {
	e := static.New(t)
	d := t.Dim
	vs := make([][]float32, 0, len(blocks))
	for _, b := range blocks {
		vs = append(vs, e.EmbedOne(make([]float32, d), b))
	}
	u := make([]float64, d)
	for k := range u {
		u[k] = 1 / math.Sqrt(float64(d))
	}
	for range 64 {
		nu := make([]float64, d)
		for _, v := range vs {
			var dot float64
			for k, x := range v {
				dot += float64(x) * u[k]
			}
			for k, x := range v {
				nu[k] += dot * float64(x)
			}
		}
		u = unit(nu)
	}
	out := make([]float32, d)
	for k, x := range u {
		out[k] = float32(x)
	}
	return out
}
