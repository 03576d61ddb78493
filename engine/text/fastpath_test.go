package text

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// TestRuneClassesMatchUnicode: the ASCII fast paths of isWordRune and
// isAlnum agree with their unicode definitions on every rune.
func TestRuneClassesMatchUnicode(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		word := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
		if got := isWordRune(r); got != word {
			t.Fatalf("isWordRune(%U) = %v, want %v", r, got, word)
		}
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		if got := isAlnum(r); got != alnum {
			t.Fatalf("isAlnum(%U) = %v, want %v", r, got, alnum)
		}
	}
}

// refParts is the plain definition of identifier parts: each part range
// of forEachPart, lower-cased on its own.
func refParts(raw string) []string {
	var out []string
	forEachPart(raw, func(ps, pe int) { out = append(out, strings.ToLower(raw[ps:pe])) })
	return out
}

// TestIdentifierPartsLowerCase: emitIdentifier's parts are each part's
// own lower case (ASCII ones are taken from the whole's lower case), on
// random identifiers mixing ASCII and non-ASCII letters (fixed seed).
func TestIdentifierPartsLowerCase(t *testing.T) {
	a := MustNew(Options{SplitIdentifiers: true, MaxTokenRunes: 64})
	alpha := []string{"a", "b", "Z", "Q", "x", "H", "T", "P", "_", "-", "1", "9", "É", "é", "ß", "İ", "Σ", "ς"}
	r := rand.New(rand.NewPCG(3, 5))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for j := 1 + r.IntN(12); j > 0; j-- {
			if r.IntN(4) == 0 {
				b.WriteString(alpha[12+r.IntN(len(alpha)-12)])
			} else {
				b.WriteString(alpha[r.IntN(12)])
			}
		}
		raw := b.String()
		if !hasAlnum(raw) || !utf8.ValidString(raw) {
			continue
		}
		toks, _ := a.emitIdentifier(nil, raw, 0, 0)
		// Reference: whole, then each distinct part not equal to it.
		var want []string
		if whole := strings.ToLower(raw); utf8.RuneCountInString(whole) <= 64 {
			want = append(want, whole)
		}
		for _, p := range refParts(raw) {
			if len(refParts(raw)) == 1 && p == strings.ToLower(raw) {
				break
			}
			dup := false
			for _, w := range want {
				dup = dup || w == p
			}
			if !dup && utf8.RuneCountInString(p) <= 64 {
				want = append(want, p)
			}
		}
		var got []string
		for _, tk := range toks {
			got = append(got, tk.Term)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("emitIdentifier(%q) terms %q, want %q", raw, got, want)
		}
	}
}

// TestForEachPartASCII: the byte-wise part splitter gives forEachPart's
// ranges on every ASCII string over an alphabet of the interesting
// classes (exhaustive up to length 5, then random; fixed seed).
func TestForEachPartASCII(t *testing.T) {
	alpha := "aZ_-5.Hx"
	ranges := func(split func(string, func(int, int)), s string) [][2]int {
		var out [][2]int
		split(s, func(a, b int) { out = append(out, [2]int{a, b}) })
		return out
	}
	check := func(s string) {
		if got, want := ranges(forEachPartASCII, s), ranges(forEachPart, s); !reflect.DeepEqual(got, want) {
			t.Fatalf("forEachPartASCII(%q) = %v, want %v", s, got, want)
		}
	}
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		check(prefix)
		if n == 0 {
			return
		}
		for i := 0; i < len(alpha); i++ {
			gen(prefix+alpha[i:i+1], n-1)
		}
	}
	gen("", 5)
	r := rand.New(rand.NewPCG(9, 9))
	for i := 0; i < 20000; i++ {
		b := make([]byte, 1+r.IntN(24))
		for j := range b {
			b[j] = byte(r.IntN(128))
		}
		check(string(b))
	}
}
