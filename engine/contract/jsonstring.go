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
