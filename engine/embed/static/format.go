package static

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"unicode/utf8"

	"github.com/stratasearch/strata/internal/base"
)

// Format constants of a table file (see the package doc, "Table format").
const (
	Magic   = "STRATAST" // 8 bytes
	Version = 1

	// FlagCommon: the table carries a common component (Dim float32s).
	FlagCommon = 1

	MaxDim     = 4096
	MaxVocab   = 1 << 22
	MaxWordLen = 255
	MaxName    = 1 << 10

	corruptKind = "static embedding table"
)

// Table is a decoded static-embedding table: Vocab words, each with a
// row of Dim int8 components and a scale; the row's value is
// Scale[i]/127 · Q[i·Dim+k]. Rows are pre-weighted (see the package doc),
// so an embedding is the plain sum of its tokens' rows.
type Table struct {
	Name   string    // model name recorded in collections, e.g. "glove6b-sif-100d-v1"
	Dim    int       // vector dimension d
	Words  []string  // Vocab distinct words, 1..255 bytes of valid UTF-8
	Scale  []float32 // per word, finite and ≥ 0
	Q      []int8    // Vocab·Dim quantised components, row-major
	Common []float32 // nil, or the unit common component of Dim components
}

// Encode serialises t (format version 1). It returns an error if t is
// inconsistent (the checks Decode applies).
func Encode(t *Table) ([]byte, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	n := len(t.Words)
	size := 8 + 4*5 + 2 + len(t.Name) + 4*len(t.Common)
	for _, w := range t.Words {
		size += 1 + len(w)
	}
	size += n*(4+t.Dim) + 4
	b := make([]byte, 0, size)
	b = append(b, Magic...)
	flags := uint32(0)
	if t.Common != nil {
		flags |= FlagCommon
	}
	for _, v := range []uint32{Version, uint32(t.Dim), uint32(n), flags, uint32(len(t.Name))} {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	b = append(b, t.Name...)
	for _, x := range t.Common {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	for _, w := range t.Words {
		b = append(b, byte(len(w)))
		b = append(b, w...)
	}
	for i := range n {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(t.Scale[i]))
		for _, q := range t.Q[i*t.Dim : (i+1)*t.Dim] {
			b = append(b, byte(q))
		}
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	return b, nil
}

func (t *Table) check() error {
	switch {
	case t.Dim < 1 || t.Dim > MaxDim:
		return fmt.Errorf("static: Dim = %d, want 1..%d", t.Dim, MaxDim)
	case len(t.Words) < 1 || len(t.Words) > MaxVocab:
		return fmt.Errorf("static: %d words, want 1..%d", len(t.Words), MaxVocab)
	case len(t.Scale) != len(t.Words) || len(t.Q) != len(t.Words)*t.Dim:
		return fmt.Errorf("static: %d words, %d scales, %d components (want %d)", len(t.Words), len(t.Scale), len(t.Q), len(t.Words)*t.Dim)
	case len(t.Name) > MaxName || !utf8.ValidString(t.Name):
		return fmt.Errorf("static: name is not valid UTF-8 of at most %d bytes", MaxName)
	case t.Common != nil && len(t.Common) != t.Dim:
		return fmt.Errorf("static: common component has %d components, want %d", len(t.Common), t.Dim)
	}
	seen := make(map[string]struct{}, len(t.Words))
	for i, w := range t.Words {
		if len(w) < 1 || len(w) > MaxWordLen || !utf8.ValidString(w) {
			return fmt.Errorf("static: word %d (%q) is not 1..%d bytes of UTF-8", i, w, MaxWordLen)
		}
		if _, dup := seen[w]; dup {
			return fmt.Errorf("static: word %q appears twice", w)
		}
		seen[w] = struct{}{}
		if s := t.Scale[i]; !(s >= 0) || math.IsInf(float64(s), 0) {
			return fmt.Errorf("static: word %q has scale %v, want finite ≥ 0", w, s)
		}
	}
	for k, x := range t.Common {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("static: common component %d = %v is not finite", k, x)
		}
	}
	return nil
}

// Decode parses a table file (uncompressed). path names the input in
// errors ("" for a buffer). Every error is a *base.CorruptError with the
// byte offset of the problem: bad magic, an unknown version or flag, a
// dimension, vocabulary or name length out of range, a word that is empty,
// not UTF-8 or repeated, a scale that is negative or not finite, a common
// component that is not finite, a truncated file, trailing bytes, or a
// CRC-32 (IEEE) mismatch over everything before the final 4 bytes.
func Decode(b []byte, path string) (*Table, error) {
	bad := func(off int, format string, args ...any) error {
		return base.Corruptf(corruptKind, path, int64(off), format, args...)
	}
	if len(b) < 8+20+4 {
		return nil, bad(len(b), "file is %d bytes, shorter than the %d-byte header and checksum", len(b), 32)
	}
	if string(b[:8]) != Magic {
		return nil, bad(0, "bad magic %q, want %q", b[:8], Magic)
	}
	u32 := func(off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
	if v := u32(8); v != Version {
		return nil, bad(8, "format version %d, want %d", v, Version)
	}
	dim, n, flags, nameLen := u32(12), u32(16), u32(20), u32(24)
	if dim < 1 || dim > MaxDim {
		return nil, bad(12, "dimension %d, want 1..%d", dim, MaxDim)
	}
	if n < 1 || n > MaxVocab {
		return nil, bad(16, "vocabulary %d, want 1..%d", n, MaxVocab)
	}
	if flags&^FlagCommon != 0 {
		return nil, bad(20, "unknown flags %#x", flags)
	}
	if nameLen > MaxName {
		return nil, bad(24, "name length %d, want ≤ %d", nameLen, MaxName)
	}
	end := len(b) - 4
	if got, want := crc32.ChecksumIEEE(b[:end]), u32(end); got != want {
		return nil, bad(end, "CRC-32 %08x, stored %08x", got, want)
	}
	off := 28
	need := func(k int) error {
		if end-off < k {
			return bad(off, "truncated: %d bytes needed, %d left", k, end-off)
		}
		return nil
	}
	if err := need(int(nameLen)); err != nil {
		return nil, err
	}
	t := &Table{Dim: int(dim), Name: string(b[off : off+int(nameLen)])}
	if !utf8.ValidString(t.Name) {
		return nil, bad(off, "name is not UTF-8")
	}
	off += int(nameLen)
	if flags&FlagCommon != 0 {
		if err := need(4 * int(dim)); err != nil {
			return nil, err
		}
		t.Common = make([]float32, dim)
		for k := range t.Common {
			x := math.Float32frombits(u32(off))
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, bad(off, "common component %d is not finite", k)
			}
			t.Common[k] = x
			off += 4
		}
	}
	// The rest must hold n words and n rows: check the row bytes up front
	// so a huge vocabulary in a short file fails before allocating.
	rows := int(n) * (4 + int(dim))
	if end-off < rows+int(n)*2 {
		return nil, bad(off, "truncated: %d words of %d-d rows need at least %d bytes, %d left", n, dim, rows+int(n)*2, end-off)
	}
	t.Words = make([]string, n)
	seen := make(map[string]struct{}, n)
	for i := range t.Words {
		if err := need(1); err != nil {
			return nil, err
		}
		l := int(b[off])
		if l == 0 {
			return nil, bad(off, "word %d is empty", i)
		}
		if err := need(1 + l); err != nil {
			return nil, err
		}
		w := string(b[off+1 : off+1+l])
		if !utf8.ValidString(w) {
			return nil, bad(off+1, "word %d is not UTF-8", i)
		}
		if _, dup := seen[w]; dup {
			return nil, bad(off+1, "word %q appears twice", w)
		}
		seen[w] = struct{}{}
		t.Words[i] = w
		off += 1 + l
	}
	if end-off != rows {
		return nil, bad(off, "%d bytes of rows, want %d (%d words × (4 + %d))", end-off, rows, n, dim)
	}
	t.Scale = make([]float32, n)
	t.Q = make([]int8, int(n)*int(dim))
	for i := range t.Scale {
		s := math.Float32frombits(u32(off))
		if !(s >= 0) || math.IsInf(float64(s), 0) {
			return nil, bad(off, "word %q has scale %v, want finite ≥ 0", t.Words[i], s)
		}
		t.Scale[i] = s
		off += 4
		row := t.Q[i*int(dim) : (i+1)*int(dim)]
		for k := range row {
			row[k] = int8(b[off+k])
		}
		off += int(dim)
	}
	return t, nil
}

func crc32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }
