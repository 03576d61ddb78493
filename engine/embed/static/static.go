package static

import (
	"context"
	"math"
)

// Embedder embeds texts with a Table: tokens (Tokens) are looked up, their
// pre-weighted rows summed, the common component removed, the result
// L2-normalised. It implements embed.Embedder and is safe for concurrent
// use (it holds no mutable state).
type Embedder struct {
	t     *Table
	index map[string]uint32
	scale []float32 // Scale[i]/127
}

// New returns an Embedder over t (which it keeps; do not modify t after).
func New(t *Table) *Embedder {
	e := &Embedder{t: t, index: make(map[string]uint32, len(t.Words)), scale: make([]float32, len(t.Scale))}
	for i, w := range t.Words {
		e.index[w] = uint32(i)
		e.scale[i] = t.Scale[i] / 127
	}
	return e
}

// Dim returns the table's dimension.
func (e *Embedder) Dim() int { return e.t.Dim }

// Model returns the table's name.
func (e *Embedder) Model() string { return e.t.Name }

// Table returns the table e embeds with.
func (e *Embedder) Table() *Table { return e.t }

// Embed returns one unit vector of Dim components per text. It never
// fails except for a cancelled ctx (checked every 1,024 texts).
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	d := e.t.Dim
	flat := make([]float32, len(texts)*d)
	out := make([][]float32, len(texts))
	var buf []byte
	for i, s := range texts {
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v := flat[i*d : (i+1)*d : (i+1)*d]
		buf = e.embedInto(v, s, buf)
		out[i] = v
	}
	return out, nil
}

// EmbedOne embeds one text into v (len Dim) and returns v.
func (e *Embedder) EmbedOne(v []float32, s string) []float32 {
	e.embedInto(v, s, nil)
	return v
}

func (e *Embedder) embedInto(v []float32, s string, buf []byte) []byte {
	clear(v)
	d := e.t.Dim
	found := 0
	add := func(tok []byte) {
		i, ok := e.index[string(tok)]
		if !ok {
			return
		}
		found++
		sc := e.scale[i]
		row := e.t.Q[int(i)*d : int(i)*d+d : int(i)*d+d]
		v := v[:len(row)]
		for k, q := range row {
			v[k] += sc * float32(q)
		}
	}
	buf = tokenize(s, buf, add)
	if found == 0 {
		// No known token: a deterministic direction from the text's bytes
		// (identical texts get identical vectors; the vector is never 0).
		fallback(v, s)
		return buf
	}
	if c := e.t.Common; c != nil {
		var dot float32
		for k, x := range c[:d] {
			dot += x * v[k]
		}
		for k, x := range c[:d] {
			v[k] -= dot * x
		}
	}
	var n2 float64
	for _, x := range v {
		n2 += float64(x) * float64(x)
	}
	if n2 == 0 || math.IsNaN(n2) {
		fallback(v, s)
		return buf
	}
	inv := float32(1 / math.Sqrt(n2))
	for k := range v {
		v[k] *= inv
	}
	return buf
}

// fallback fills v with a unit vector derived from s by SplitMix64 over a
// fixed hash of s (stable within a build of the binary; texts that reach
// it share no word with the vocabulary).
func fallback(v []float32, s string) {
	x := fixedHash(s)
	var n2 float64
	for k := range v {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		f := float32(int64(z>>11))/float32(1<<52) - 1
		v[k] = f
		n2 += float64(f) * float64(f)
	}
	if n2 == 0 {
		v[0], n2 = 1, 1
	}
	inv := float32(1 / math.Sqrt(n2))
	for k := range v {
		v[k] *= inv
	}
}

// fixedHash is FNV-1a 64 (stable across processes, unlike maphash).
func fixedHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// Tokens returns the lower-cased tokens Embed looks up for s, in order
// (see the package doc, "Tokens").
func Tokens(s string) []string {
	var out []string
	tokenize(s, nil, func(t []byte) { out = append(out, string(t)) })
	return out
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' || c >= 0x80 }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// tokenize calls emit for each token of s (a lower-cased sub-slice of
// buf, valid only during the call) and returns buf for reuse. A run of
// letters and digits (bytes ≥ 0x80 count as lower-case letters) is split
// at lower→upper ("toUpper"), at upper→upper-then-lower ("HTTPServer" →
// "http", "server") and at letter↔digit boundaries; parts made only of
// digits are dropped. A run that was split is also emitted whole
// ("strconv"-style compounds the table may hold), after its parts.
func tokenize(s string, buf []byte, emit func([]byte)) []byte {
	n := len(s)
	for i := 0; i < n; {
		if !isAlnum(s[i]) {
			i++
			continue
		}
		j := i
		for j < n && isAlnum(s[j]) {
			j++
		}
		run := s[i:j]
		split := false
		start := 0
		for k := 1; k <= len(run); k++ {
			cut := k == len(run)
			if !cut {
				p, c := run[k-1], run[k]
				switch {
				case isDigit(p) != isDigit(c):
					cut = true
				case isLower(p) && isUpper(c):
					cut = true
				case isUpper(p) && isUpper(c) && k+1 < len(run) && isLower(run[k+1]):
					cut = true
				}
				if cut {
					split = true
				}
			}
			if cut {
				part := run[start:k]
				start = k
				if !isDigit(part[0]) {
					buf = lower(buf[:0], part)
					emit(buf)
				}
			}
		}
		if split && len(run) <= MaxWordLen {
			buf = lower(buf[:0], run)
			emit(buf)
		}
		i = j
	}
	return buf
}

func lower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}
