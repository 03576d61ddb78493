package text

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/russian"
)

// Token is one emitted term.
type Token struct {
	// Term is the lower-cased (and, if configured, stemmed) term text.
	Term string
	// Pos is the 0-based position of the original token this term came
	// from. An identifier's parts carry the position of the whole
	// identifier, so they never lengthen a document and phrase adjacency is
	// measured in original tokens.
	Pos int
	// Start and End are the byte offsets of the token in the analysed text
	// (for ModeOracle: in the lower-cased text, which differs from the input
	// only where lower-casing changes a rune's UTF-8 length).
	Start, End int
	// Part is true for an identifier part emitted in addition to the whole
	// identifier (SplitIdentifiers only).
	Part bool
}

// Analyzer turns text into tokens. It is immutable and safe for concurrent
// use.
type Analyzer struct {
	opts     Options
	isStop   func(string) bool
	stem     func(string) string
	maxRunes int
}

// New returns an Analyzer for o (defaults filled). It fails with an error
// matching ErrInvalidOptions if o does not validate, or if ModeOracle is
// combined with SplitIdentifiers (the oracle lower-cases first, so there is no
// case left to split on).
func New(o Options) (*Analyzer, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Mode == ModeOracle && o.SplitIdentifiers {
		return nil, errorsJoin("Mode oracle cannot split identifiers")
	}
	a := &Analyzer{opts: o, maxRunes: o.MaxTokenRunes}
	switch o.StopWords {
	case "english":
		a.isStop = english.IsStopWord
	case "russian":
		a.isStop = russian.IsStopWord
	}
	switch o.Stemmer {
	case "english":
		a.stem = func(s string) string { return english.Stem(s, true) }
	case "russian":
		a.stem = func(s string) string { return russian.Stem(s, true) }
	}
	return a, nil
}

func errorsJoin(msg string) error { return &optErr{msg} }

type optErr struct{ msg string }

func (e *optErr) Error() string        { return ErrInvalidOptions.Error() + ": " + e.msg }
func (e *optErr) Is(target error) bool { return target == ErrInvalidOptions }

// MustNew is New for options known to be valid (presets); it panics on an
// invalid Options and is meant for package-level variables and tests.
func MustNew(o Options) *Analyzer {
	a, err := New(o)
	if err != nil {
		panic(err)
	}
	return a
}

// Options returns the analyzer's options (defaults filled).
func (a *Analyzer) Options() Options { return a.opts }

// Analyze returns the tokens of s in position order; within one position the
// whole identifier comes first, then its distinct parts in text order.
func (a *Analyzer) Analyze(s string) []Token {
	return a.AppendTokens(nil, s)
}

// Terms returns just the Term of each token of s (whole tokens and parts).
func (a *Analyzer) Terms(s string) []string {
	toks := a.Analyze(s)
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.Term
	}
	return out
}

// AppendTokens appends the tokens of s to dst and returns it.
func (a *Analyzer) AppendTokens(dst []Token, s string) []Token {
	pos := 0
	if a.opts.Mode == ModeOracle {
		ls := strings.ToLower(s)
		for i := 0; i < len(ls); {
			if !isASCIIAlnum(ls[i]) {
				i++
				continue
			}
			j := i
			for j < len(ls) && isASCIIAlnum(ls[j]) {
				j++
			}
			var used bool
			dst, used = a.emitSimple(dst, ls[i:j], pos, i, j)
			if used {
				pos++
			}
			i = j
		}
		return dst
	}
	split := a.opts.SplitIdentifiers
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) && !(split && r == '_') {
			i += w
			continue
		}
		j := i
		for j < len(s) {
			r, w := utf8.DecodeRuneInString(s[j:])
			if isWordRune(r) || (split && r == '_') {
				j += w
				continue
			}
			if split && r == '-' && j > i {
				pr, _ := utf8.DecodeLastRuneInString(s[i:j])
				nr, _ := utf8.DecodeRuneInString(s[j+w:])
				if isAlnum(pr) && isAlnum(nr) {
					j += w
					continue
				}
			}
			break
		}
		raw := s[i:j]
		var used bool
		if split {
			dst, used = a.emitIdentifier(dst, raw, pos, i)
		} else {
			dst, used = a.emitSimple(dst, strings.ToLower(raw), pos, i, j)
		}
		if used {
			pos++
		}
		i = j
	}
	return dst
}

// emitSimple emits one lower-cased token; used reports whether it consumed a
// position (emitted or stop-worded).
func (a *Analyzer) emitSimple(dst []Token, lower string, pos, start, end int) ([]Token, bool) {
	if a.isStop != nil && a.isStop(lower) {
		return dst, true
	}
	if utf8.RuneCountInString(lower) > a.maxRunes {
		return dst, false
	}
	if a.stem != nil {
		lower = a.stem(lower)
	}
	return append(dst, Token{Term: lower, Pos: pos, Start: start, End: end}), true
}

// emitIdentifier emits the whole identifier raw (lower-cased) and its parts.
func (a *Analyzer) emitIdentifier(dst []Token, raw string, pos, start int) ([]Token, bool) {
	if !hasAlnum(raw) {
		return dst, false
	}
	whole := strings.ToLower(raw)
	if a.isStop != nil && a.isStop(whole) {
		return dst, true
	}
	base := len(dst)
	wholeTerm := ""
	if utf8.RuneCountInString(whole) <= a.maxRunes {
		wholeTerm = whole
		if a.stem != nil {
			wholeTerm = a.stem(wholeTerm)
		}
		dst = append(dst, Token{Term: wholeTerm, Pos: pos, Start: start, End: start + len(raw)})
	}
	// Parts are computed on the original case: lower-casing first would
	// lose the camelCase boundaries. For an ASCII identifier a part's
	// lower case is the same bytes of whole (no allocation).
	ascii := isASCII(raw)
	part := func(ps, pe int) {
		if ps == 0 && pe == len(raw) {
			return // the only part is the whole token
		}
		var p string
		if ascii {
			p = whole[ps:pe]
		} else {
			p = strings.ToLower(raw[ps:pe])
		}
		if a.isStop != nil && a.isStop(p) {
			return
		}
		if utf8.RuneCountInString(p) > a.maxRunes {
			return
		}
		if a.stem != nil {
			p = a.stem(p)
		}
		if p == wholeTerm {
			return
		}
		for _, t := range dst[base:] {
			if t.Term == p {
				return
			}
		}
		dst = append(dst, Token{Term: p, Pos: pos, Start: start + ps, End: start + pe, Part: true})
	}
	if ascii {
		forEachPartASCII(raw, part)
	} else {
		forEachPart(raw, part)
	}
	return dst, len(dst) > base
}

// forEachPart calls f with the byte range of each part of identifier s:
// separators "_" and "-" split, and so do case changes: lower or digit
// followed by upper ("getUser", "utf8Decode"), and an upper followed by
// upper+lower ("HTTPRequest" -> "HTTP", "Request"). Letter-digit changes do
// not split ("v2", "md5sum").
func forEachPart(s string, f func(start, end int)) {
	start := -1
	var prev, cur rune = 0, 0
	i := 0
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == '_' || r == '-' {
			if start >= 0 {
				f(start, i)
				start = -1
			}
			i += w
			prev = 0
			continue
		}
		if start < 0 {
			start = i
			prev = r
			i += w
			continue
		}
		cur = r
		boundary := false
		if unicode.IsUpper(cur) {
			if unicode.IsLower(prev) || unicode.IsDigit(prev) {
				boundary = true
			} else if unicode.IsUpper(prev) {
				nr, _ := utf8.DecodeRuneInString(s[i+w:])
				if unicode.IsLower(nr) {
					boundary = true
				}
			}
		}
		if boundary {
			f(start, i)
			start = i
		}
		prev = cur
		i += w
	}
	if start >= 0 {
		f(start, len(s))
	}
}

// isASCII reports whether s is all ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// forEachPartASCII is forEachPart for an all-ASCII s, byte by byte.
func forEachPartASCII(s string, f func(start, end int)) {
	start := -1
	var prev byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c == '-' {
			if start >= 0 {
				f(start, i)
				start = -1
			}
			prev = 0
			continue
		}
		if start < 0 {
			start, prev = i, c
			continue
		}
		if isUpperASCII(c) {
			if isLowerASCII(prev) || prev >= '0' && prev <= '9' ||
				isUpperASCII(prev) && i+1 < len(s) && isLowerASCII(s[i+1]) {
				f(start, i)
				start = i
			}
		}
		prev = c
	}
	if start >= 0 {
		f(start, len(s))
	}
}

func isUpperASCII(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLowerASCII(c byte) bool { return c >= 'a' && c <= 'z' }

func isASCIIAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return isASCIIWord(r) // no ASCII rune is a mark (Mn, Mc)
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

func isAlnum(r rune) bool {
	if r < utf8.RuneSelf {
		return isASCIIWord(r)
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// isASCIIWord reports whether the ASCII rune r is a letter or a digit.
func isASCIIWord(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

func hasAlnum(s string) bool {
	for _, r := range s {
		if isAlnum(r) {
			return true
		}
	}
	return false
}
