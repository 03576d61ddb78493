package datasets

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// MaxTRECElementBytes bounds one <DOC> or <top> element; larger is corrupt.
const MaxTRECElementBytes = 64 << 20

// TRECDoc is one <DOC> of a TREC collection.
type TRECDoc struct {
	DocNo string // text of <DOCNO>, trimmed
	// Text is everything between </DOCNO> and </DOC>, decoded as Latin-1
	// (ISO 8859-1) to UTF-8, with runs of white space collapsed to one
	// blank and trimmed. Other tags in that span are kept verbatim.
	Text   string
	Offset int64 // byte offset of "<DOC>"
}

// TRECTopic is one <top> of a TREC topic file.
type TRECTopic struct {
	Num    string // <num> text, "Number:" prefix removed, trimmed
	Title  string // <title> text, whitespace collapsed
	Desc   string // <desc> text, "Description:" prefix removed ("" if absent)
	Narr   string // <narr> text, "Narrative:" prefix removed ("" if absent)
	Offset int64
}

// latin1 decodes ISO 8859-1 bytes to UTF-8 (byte b is rune b).
func latin1(b []byte) string {
	ascii := true
	for _, c := range b {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + len(b)/4)
	for _, c := range b {
		sb.WriteRune(rune(c))
	}
	return sb.String()
}

// elementScanner splits a stream into <open> ... </close> elements,
// tolerating only white space between them.
type elementScanner struct {
	br          *bufio.Reader
	name        string
	open, close []byte
	off         int64 // bytes consumed
	n           int64 // elements returned
	body        []byte
	start       int64 // offset of the current element's open tag
	err         error
}

func newElementScanner(r io.Reader, name, open, close string) *elementScanner {
	return &elementScanner{br: bufio.NewReaderSize(r, 1<<16), name: name, open: []byte(open), close: []byte(close)}
}

// Next finds the next element; body is the bytes between the tags.
func (s *elementScanner) Next() bool {
	if s.err != nil {
		return false
	}
	// Skip white space up to the open tag.
	for {
		c, err := s.br.ReadByte()
		if err == io.EOF {
			return false
		}
		if err != nil {
			s.err = fmt.Errorf("datasets: %s: byte offset %d: %w", s.name, s.off, err)
			return false
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' {
			s.off++
			continue
		}
		s.br.UnreadByte()
		break
	}
	s.start = s.off
	head, _ := s.br.Peek(len(s.open))
	if !bytes.EqualFold(head, s.open) {
		s.err = corruptf(s.name, s.n, 0, s.off, "expected %s, found %q", s.open, truncateForMsg(head))
		return false
	}
	s.br.Discard(len(s.open))
	s.off += int64(len(s.open))
	s.body = s.body[:0]
	for {
		chunk, err := s.br.ReadSlice('>')
		s.body = append(s.body, chunk...)
		s.off += int64(len(chunk))
		if len(s.body) > MaxTRECElementBytes {
			s.err = corruptf(s.name, s.n, 0, s.start, "%s element longer than %d bytes", s.open, MaxTRECElementBytes)
			return false
		}
		if err == nil && len(s.body) >= len(s.close) && bytes.EqualFold(s.body[len(s.body)-len(s.close):], s.close) {
			s.body = s.body[:len(s.body)-len(s.close)]
			break
		}
		if err == io.EOF {
			s.err = corruptf(s.name, s.n, 0, s.start, "truncated: %s without %s", s.open, s.close)
			return false
		}
		if err != nil && err != bufio.ErrBufferFull {
			s.err = fmt.Errorf("datasets: %s: byte offset %d: %w", s.name, s.off, err)
			return false
		}
	}
	if i := indexFold(s.body, s.open); i >= 0 {
		s.err = corruptf(s.name, s.n, 0, s.start+int64(len(s.open)+i), "nested %s inside %s", s.open, s.open)
		return false
	}
	s.n++
	return true
}

func truncateForMsg(b []byte) string {
	if len(b) > 20 {
		b = b[:20]
	}
	return string(b)
}

// indexFold is a case-insensitive bytes.Index for an ASCII needle.
func indexFold(s, sep []byte) int {
	for i := 0; i+len(sep) <= len(s); i++ {
		if bytes.EqualFold(s[i:i+len(sep)], sep) {
			return i
		}
	}
	return -1
}

// ReadTRECDocs parses a TREC document file: a sequence of
// <DOC><DOCNO>id</DOCNO> text </DOC> elements separated by white space
// (tags matched case-insensitively). Errors (*CorruptError): other text
// between elements, a missing </DOC> (truncation), a <DOC> without a
// non-empty <DOCNO> first, nested <DOC>, a duplicate DOCNO.
func ReadTRECDocs(r io.Reader, name string) ([]TRECDoc, error) {
	s := newElementScanner(r, name, "<DOC>", "</DOC>")
	var docs []TRECDoc
	seen := map[string]bool{}
	for s.Next() {
		body := s.body
		rec := s.n - 1
		i := indexFold(body, []byte("<DOCNO>"))
		j := indexFold(body, []byte("</DOCNO>"))
		if i < 0 || j < i || len(bytes.TrimSpace(body[:i])) != 0 {
			return nil, corruptf(name, rec, 0, s.start, "<DOC> does not start with <DOCNO>...</DOCNO>")
		}
		no := strings.TrimSpace(latin1(body[i+len("<DOCNO>") : j]))
		if no == "" || strings.ContainsAny(no, "<>") {
			return nil, corruptf(name, rec, 0, s.start, "bad DOCNO %q", no)
		}
		if seen[no] {
			return nil, corruptf(name, rec, 0, s.start, "duplicate DOCNO %q", no)
		}
		seen[no] = true
		docs = append(docs, TRECDoc{DocNo: no, Text: collapseSpace(latin1(body[j+len("</DOCNO>"):])), Offset: s.start})
	}
	if s.err != nil {
		return nil, s.err
	}
	return docs, nil
}

// tagText returns the text after <tag> up to the next '<' (or the end),
// and whether the tag was present.
func tagText(body []byte, tag string) (string, bool) {
	i := indexFold(body, []byte(tag))
	if i < 0 {
		return "", false
	}
	rest := body[i+len(tag):]
	if k := bytes.IndexByte(rest, '<'); k >= 0 {
		rest = rest[:k]
	}
	return collapseSpace(latin1(rest)), true
}

func cutPrefixFold(s, prefix string) string {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return strings.TrimSpace(s[len(prefix):])
	}
	return s
}

// ReadTRECTopics parses a TREC topic file: <top> elements holding
// <num>, <title> and optionally <desc> and <narr>. Closing tags such as
// </num> and </title> are optional (both the classic TREC layout and the
// Vaswani <num>1</num><title>...</title> layout parse); a field's text runs
// to the next '<'. Errors (*CorruptError): text between elements, a missing
// </top>, a missing or empty <num>, a duplicate number, a missing <title>.
func ReadTRECTopics(r io.Reader, name string) ([]TRECTopic, error) {
	s := newElementScanner(r, name, "<top>", "</top>")
	var tops []TRECTopic
	seen := map[string]bool{}
	for s.Next() {
		rec := s.n - 1
		num, ok := tagText(s.body, "<num>")
		num = cutPrefixFold(num, "Number:")
		if !ok || num == "" {
			return nil, corruptf(name, rec, 0, s.start, "<top> without a <num>")
		}
		if seen[num] {
			return nil, corruptf(name, rec, 0, s.start, "duplicate topic number %q", num)
		}
		seen[num] = true
		title, ok := tagText(s.body, "<title>")
		if !ok {
			return nil, corruptf(name, rec, 0, s.start, "topic %q has no <title>", num)
		}
		desc, _ := tagText(s.body, "<desc>")
		narr, _ := tagText(s.body, "<narr>")
		tops = append(tops, TRECTopic{Num: num, Title: cutPrefixFold(title, "Topic:"),
			Desc: cutPrefixFold(desc, "Description:"), Narr: cutPrefixFold(narr, "Narrative:"), Offset: s.start})
	}
	if s.err != nil {
		return nil, s.err
	}
	return tops, nil
}

// ReadTRECDocsFile is ReadTRECDocs on a file.
func ReadTRECDocsFile(path string) ([]TRECDoc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	return ReadTRECDocs(f, path)
}

// ReadTRECTopicsFile is ReadTRECTopics on a file.
func ReadTRECTopicsFile(path string) ([]TRECTopic, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	return ReadTRECTopics(f, path)
}
