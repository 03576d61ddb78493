package contract

import "unicode/utf8"

// appendJSONString appends s as a JSON string exactly as encoding/json
// writes it with HTML escaping off (json.Encoder.SetEscapeHTML(false)):
// '"' and '\\' backslash-escaped; \b, \f, \n, \r, \t in short form,
// other bytes below 0x20 as \u00XX; invalid UTF-8 as \ufffd; U+2028 and
// U+2029 as \u2028 and \u2029; everything else as is ('<', '>' and '&'
// stay one byte each, so a stored string is never longer than its JSON
// input). It is Value.MarshalJSON's string path, which runs for every
// metadata value of every returned envelope.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip eight plain bytes at a time: none below 0x20, none '"' or
		// '\\', none at or above 0x80.
		for i+8 <= len(s) {
			t := s[i : i+8]
			if !plain8(uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
				uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56) {
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plain8 reports whether none of the eight bytes of w (little-endian)
// needs escaping or UTF-8 decoding: each is in [0x20, 0x80) and none is
// '"' or '\\'. (x − 0x01…·n) & ^x & 0x80… is non-zero exactly when some
// byte of x is below n (n ≤ 0x80; a borrow only flags bytes above a real
// hit): it is applied to w with n = 0x20, and with n = 1 to w ^ '"'… and
// w ^ '\\'… (a zero byte there is that character).
func plain8(w uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q := w ^ (lo * '"')
	bs := w ^ (lo * '\\')
	return (w|(w-lo*0x20)&^w|(q-lo)&^q|(bs-lo)&^bs)&hi == 0
}

// appendJSONStrings appends ss as a JSON array of strings (appendJSONString
// each), as encoding/json writes a non-nil []string.
func appendJSONStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s)
	}
	return append(dst, ']')
}

// AppendJSONString appends s as a JSON string, as appendJSONString writes
// it (encoding/json's form with HTML escaping off).
func AppendJSONString(dst []byte, s string) []byte { return appendJSONString(dst, s) }
