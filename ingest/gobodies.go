package ingest

import "sync"

// blankBodies holds the buffers blankFuncBodies fills: go/parser copies
// every string it keeps out of its source, so a buffer is free again once
// the parse returns.
var blankBodies = sync.Pool{New: func() any { return new([]byte) }}

// blankFuncBodies copies src into *buf with the inside of every function
// body that starts at the top level (a func declaration's, or a func
// literal's outside any bracket) turned into spaces, newlines kept: the
// copy parses to the same top-level declarations at the same offsets and
// lines, without the statements ChunkGoFile never reads (go/parser spends
// most of a file's parse on them). A brace after "struct" or "interface"
// opens a type, not a body. ok is false when the scan meets what it cannot
// lex (an unterminated comment, string or rune, unbalanced brackets);
// the caller then parses src itself.
func blankFuncBodies(src []byte, buf *[]byte) (out []byte, ok bool) {
	out = append((*buf)[:0], src...)
	*buf = out
	n := len(out)
	pb, br := 0, 0 // paren+bracket depth, brace depth
	inFunc := false
	var lastWord []byte // the word just before, across spaces and comments on the line
	for i := 0; i < n; {
		c := out[i]
		switch {
		case c == '/' && i+1 < n && (out[i+1] == '/' || out[i+1] == '*'):
			j, nl, good := skipComment(out, i)
			if !good {
				return nil, false
			}
			if nl {
				if inFunc && pb == 0 && br == 0 {
					inFunc = false
				}
				lastWord = nil
			}
			i = j
		case c == '"' || c == '`' || c == '\'':
			j, good := skipQuoted(out, i)
			if !good {
				return nil, false
			}
			lastWord = nil
			i = j
		case c == '\n':
			if inFunc && pb == 0 && br == 0 {
				inFunc = false // a declaration without a body
			}
			lastWord = nil
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '_' || c >= 0x80 || (c|0x20 >= 'a' && c|0x20 <= 'z') || (c >= '0' && c <= '9'):
			j := i + 1
			for j < n && (out[j] == '_' || out[j] >= 0x80 || (out[j]|0x20 >= 'a' && out[j]|0x20 <= 'z') || (out[j] >= '0' && out[j] <= '9') || (c >= '0' && c <= '9' && out[j] == '.')) {
				j++
			}
			lastWord = out[i:j]
			if pb == 0 && br == 0 && !inFunc && string(lastWord) == "func" {
				inFunc = true
			}
			i = j
		case c == '(' || c == '[':
			pb++
			lastWord = nil
			i++
		case c == ')' || c == ']':
			if pb--; pb < 0 {
				return nil, false
			}
			lastWord = nil
			i++
		case c == '{':
			if inFunc && pb == 0 && br == 0 && string(lastWord) != "struct" && string(lastWord) != "interface" {
				j, good := matchBrace(out, i)
				if !good {
					return nil, false
				}
				for k := i + 1; k < j; k++ {
					if out[k] != '\n' {
						out[k] = ' '
					}
				}
				inFunc = false
				lastWord = nil
				i = j + 1
				continue
			}
			br++
			lastWord = nil
			i++
		case c == '}':
			if br--; br < 0 {
				return nil, false
			}
			lastWord = nil
			i++
		default:
			lastWord = nil
			i++
		}
	}
	return out, pb == 0 && br == 0
}

// skipComment returns the offset just past the comment at i (a line
// comment ends before its newline) and whether a block comment spans a
// newline; good is false for an unterminated block comment.
func skipComment(b []byte, i int) (j int, newline, good bool) {
	if b[i+1] == '/' {
		for j = i + 2; j < len(b) && b[j] != '\n'; j++ {
		}
		return j, false, true
	}
	for j = i + 2; j+1 < len(b); j++ {
		if b[j] == '\n' {
			newline = true
		}
		if b[j] == '*' && b[j+1] == '/' {
			return j + 2, newline, true
		}
	}
	return len(b), newline, false
}

// skipQuoted returns the offset just past the string, raw string or rune
// literal at i; good is false when it is unterminated (or an interpreted
// one meets a newline).
func skipQuoted(b []byte, i int) (int, bool) {
	q := b[i]
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case q:
			return j + 1, true
		case '\\':
			if q != '`' {
				j++
			}
		case '\n':
			if q != '`' {
				return 0, false
			}
		}
	}
	return 0, false
}

// matchBrace returns the offset of the brace closing the one at i.
func matchBrace(b []byte, i int) (int, bool) {
	depth := 0
	for j := i; j < len(b); {
		switch c := b[j]; {
		case c == '/' && j+1 < len(b) && (b[j+1] == '/' || b[j+1] == '*'):
			k, _, good := skipComment(b, j)
			if !good {
				return 0, false
			}
			j = k
		case c == '"' || c == '`' || c == '\'':
			k, good := skipQuoted(b, j)
			if !good {
				return 0, false
			}
			j = k
		case c == '{':
			depth++
			j++
		case c == '}':
			if depth--; depth == 0 {
				return j, true
			}
			j++
		default:
			j++
		}
	}
	return 0, false
}
