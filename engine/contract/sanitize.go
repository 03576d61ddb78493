package contract

import (
	"strings"
	"unicode/utf8"
)

// SanitizeStats counts what Sanitize changed.
type SanitizeStats struct {
	// EscapeSequences is the number of ANSI / ECMA-48 sequences removed (CSI,
	// OSC, DCS, SOS, PM, APC and two-byte ESC sequences, 7- and 8-bit forms).
	EscapeSequences int `json:"escape_sequences,omitempty"`
	// Controls is the number of other control or invisible format characters
	// removed.
	Controls int `json:"controls,omitempty"`
	// InvalidUTF8 is the number of invalid bytes replaced by U+FFFD.
	InvalidUTF8 int `json:"invalid_utf8,omitempty"`
}

// Changed reports whether anything was removed or repaired.
func (s SanitizeStats) Changed() bool {
	return s.EscapeSequences+s.Controls+s.InvalidUTF8 > 0
}

// Sanitize returns s cleaned for display to a model or a terminal:
//   - ANSI / ECMA-48 escape sequences are removed whole: CSI (ESC [ … final
//     byte), OSC (ESC ] … BEL or ST), DCS / SOS / PM / APC (ESC P, X, ^, _ …
//     ST), nF and Fp/Fe/Fs two-byte escapes, and their 8-bit C1 forms
//     (U+009B, U+009D, …). A string sequence with no terminator removes
//     everything to the end, as a terminal would swallow it.
//   - Other C0 controls except \n and \t (so \r too), DEL, C1 controls
//     U+0080–U+009F, Unicode bidirectional embedding / override / isolate
//     controls (U+202A–U+202E, U+2066–U+2069, "Trojan Source") and Unicode tag
//     characters U+E0000–U+E007F (invisible "ASCII smuggling") are removed.
//   - Invalid UTF-8 is repaired: each invalid byte becomes U+FFFD.
//
// The result is valid UTF-8.
func Sanitize(s string) (string, SanitizeStats) {
	clean, _, st := sanitizeMap(s, false)
	return clean, st
}

// sanitizeMap is Sanitize that, when withMap is set, also returns ends:
// ends[q] is the source offset just past the input unit that produced clean
// byte q. So the source prefix s[:ends[p-1]] sanitises to clean[:p].
func sanitizeMap(s string, withMap bool) (string, []int32, SanitizeStats) {
	var st SanitizeStats
	var b strings.Builder
	b.Grow(len(s))
	var ends []int32
	if withMap {
		ends = make([]int32, 0, len(s))
	}
	emit := func(str string, end int) {
		b.WriteString(str)
		if withMap {
			for range len(str) {
				ends = append(ends, int32(end))
			}
		}
	}
	i := 0
	for i < len(s) {
		c := s[i]
		if (c >= 0x20 && c < 0x7F) || c == '\n' || c == '\t' {
			// Fast path: a run of printable ASCII, \n and \t.
			j := i + 1
			for j < len(s) && ((s[j] >= 0x20 && s[j] < 0x7F) || s[j] == '\n' || s[j] == '\t') {
				j++
			}
			b.WriteString(s[i:j])
			if withMap {
				for k := i + 1; k <= j; k++ {
					ends = append(ends, int32(k))
				}
			}
			i = j
			continue
		}
		if c < utf8.RuneSelf {
			switch {
			case c == 0x1B:
				i = skipEscape(s, i)
				st.EscapeSequences++
			default:
				st.Controls++
				i++
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			st.InvalidUTF8++
			emit("\uFFFD", i+1)
		case r >= 0x80 && r <= 0x9F:
			switch r {
			case 0x9B, 0x9D, 0x90, 0x98, 0x9E, 0x9F: // 8-bit CSI, OSC, DCS, SOS, PM, APC
				st.EscapeSequences++
				i = skipEscapeBody(s, i+size, introducer8(r))
				continue
			}
			st.Controls++
		case (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || (r >= 0xE0000 && r <= 0xE007F):
			st.Controls++
		default:
			emit(s[i:i+size], i+size)
		}
		i += size
	}
	return b.String(), ends, st
}

// introducer8 maps an 8-bit C1 introducer to its 7-bit ESC-form letter.
func introducer8(r rune) byte {
	switch r {
	case 0x9B:
		return '['
	case 0x9D:
		return ']'
	case 0x90:
		return 'P'
	case 0x98:
		return 'X'
	case 0x9E:
		return '^'
	}
	return '_' // 0x9F APC
}

// skipEscape returns the offset just past the escape sequence whose ESC is at
// s[i].
func skipEscape(s string, i int) int {
	j := i + 1
	if j >= len(s) {
		return j
	}
	n := s[j]
	switch {
	case n == '[' || n == ']' || n == 'P' || n == 'X' || n == '^' || n == '_':
		return skipEscapeBody(s, j+1, n)
	case n >= 0x20 && n <= 0x2F: // nF: intermediates, then a final byte
		j++
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2F {
			j++
		}
		if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7E {
			j++
		}
		return j
	case n >= 0x30 && n <= 0x7E: // Fp, Fe, Fs
		return j + 1
	}
	return j // lone ESC
}

// skipEscapeBody skips the body of a CSI (kind '[') or a control string
// (OSC ']', DCS 'P', SOS 'X', PM '^', APC '_') starting at s[j].
func skipEscapeBody(s string, j int, kind byte) int {
	if kind == '[' {
		for j < len(s) && s[j] >= 0x30 && s[j] <= 0x3F { // parameters
			j++
		}
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2F { // intermediates
			j++
		}
		if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7E { // final
			j++
		}
		return j
	}
	for j < len(s) {
		switch {
		case s[j] == 0x07: // BEL ends OSC (xterm); accepted for all strings
			return j + 1
		case s[j] == 0x1B && j+1 < len(s) && s[j+1] == '\\': // ST
			return j + 2
		case s[j] == 0xC2 && j+1 < len(s) && s[j+1] == 0x9C: // 8-bit ST U+009C
			return j + 2
		}
		j++
	}
	return j // unterminated: swallow the rest
}

// lookalike reports whether r is a character a reader could take for '<' or
// '>' (fullwidth, small form, angle quotation marks, CJK and math angle
// brackets, modifier letters, Canadian syllabics, ornaments).
func lookalike(r rune) bool {
	switch r {
	case 0xFF1C, 0xFF1E, // fullwidth < >
		0xFE64, 0xFE65, // small form < >
		0x2039, 0x203A, // single angle quotation marks
		0x00AB, 0x00BB, // double angle quotation marks
		0x3008, 0x3009, 0x300A, 0x300B, // CJK angle brackets
		0x2329, 0x232A, // angle brackets
		0x27E8, 0x27E9, 0x27EA, 0x27EB, // mathematical angle brackets
		0x29FC, 0x29FD, // curved angle brackets
		0x02C2, 0x02C3, // modifier letter arrowheads
		0x1438, 0x1433, // Canadian syllabics pa / po
		0x276E, 0x276F, 0x2770, 0x2771, // heavy angle quotation ornaments
		0xFE3F, 0xFE40, // presentation form angle brackets
		0x226A, 0x226B: // much less / greater than
		return true
	}
	return false
}

// escapedLen is the length of r once escaped by escapeRune.
func escapedLen(r rune, size int) int {
	switch {
	case r == '<' || r == '>':
		return 4
	case r == '&':
		return 5
	case r == '"' || r == '\'':
		return size // escaped only in attributes
	case lookalike(r):
		return len(numericRef(r))
	}
	return size
}

func numericRef(r rune) string {
	const hex = "0123456789ABCDEF"
	var buf [16]byte
	n := len(buf)
	buf[n-1] = ';'
	n--
	for v := uint32(r); ; v >>= 4 {
		n--
		buf[n] = hex[v&0xF]
		if v < 16 {
			break
		}
	}
	n -= 3
	copy(buf[n:], "&#x")
	return string(buf[n:])
}

// EscapeText escapes s (already sanitised) for the body of a frame: '&',
// '<' and '>' become &amp; &lt; &gt;, and every look-alike of '<' or '>'
// becomes a numeric character reference (&#xFF1C;). After it, the body holds
// no character that could open or close a tag. html.UnescapeString undoes it.
func EscapeText(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for _, r := range s {
		switch {
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '&':
			b.WriteString("&amp;")
		case lookalike(r):
			b.WriteString(numericRef(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// EscapedLen is len(EscapeText(s)), computed without building the
// escaped string.
func EscapedLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '<', '>':
				n += 4
			case '&':
				n += 5
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case lookalike(r):
			n += len(numericRef(r))
		case r == utf8.RuneError && size == 1:
			n += 3 // WriteRune writes U+FFFD for an invalid byte
		default:
			n += size
		}
		i += size
	}
	return n
}

// escapeAttr escapes s (already sanitised) for a double-quoted attribute
// value: EscapeText plus double quote, single quote, newline and tab as
// character references.
func escapeAttr(s string) string {
	var b strings.Builder
	for _, r := range EscapeText(s) {
		switch r {
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&#39;")
		case '\n':
			b.WriteString("&#10;")
		case '\t':
			b.WriteString("&#9;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
