package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/vfs"
)

// maxReadFileBytes bounds the file read serves (ingestion skips files over
// 1 MiB by default, so an indexed file is normally far smaller).
const maxReadFileBytes = 16 << 20

type readArgs struct {
	URI       string `json:"uri"`
	StartLine *int   `json:"start_line"`
	EndLine   *int   `json:"end_line"`
	Cursor    string `json:"cursor"`
}

// readCursor continues a truncated read: the file, the first omitted line
// and the byte offset within it, and the span's last line.
type readCursor struct {
	Path string `json:"p"`
	Line int    `json:"l"`
	Off  int    `json:"o,omitempty"`
	End  int    `json:"e"`
}

func (a *readArgs) validate(c *call) []contract.FieldError {
	var fes []contract.FieldError
	if a.Cursor != "" {
		if a.URI != "" || a.StartLine != nil || a.EndLine != nil {
			fes = append(fes, contract.FieldError{Loc: []any{"arguments", "cursor"}, InputValue: nil, ErrorType: contract.ErrTypeConflict,
				Message: "cursor replaces uri, start_line and end_line", ExpectedDomain: "cursor alone, or uri with optional start_line and end_line"})
		}
		var rc readCursor
		if !c.openCursor("read", a.Cursor, &rc) {
			fes = append(fes, badCursor(a.Cursor))
		}
		return fes
	}
	fes = append(fes, checkText([]any{"arguments", "uri"}, a.URI, 1, 4096)...)
	for _, p := range []struct {
		name string
		v    *int
	}{{"start_line", a.StartLine}, {"end_line", a.EndLine}} {
		if p.v != nil && *p.v < 1 {
			fes = append(fes, contract.FieldError{Loc: []any{"arguments", p.name}, InputValue: *p.v, ErrorType: contract.ErrTypeOutOfRange,
				Message: p.name + " out of range", ExpectedDomain: "integer ≥ 1 (1-based line number)"})
		}
	}
	if a.StartLine != nil && a.EndLine != nil && *a.EndLine < *a.StartLine {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "end_line"}, InputValue: *a.EndLine, ErrorType: contract.ErrTypeEmptyRange,
			Message: "end_line is before start_line", ExpectedDomain: fmt.Sprintf("integer ≥ start_line (%d)", *a.StartLine)})
	}
	return fes
}

// readResult is read's structured content.
type readResult struct {
	URI          string `json:"uri"`
	StartLine    int    `json:"start_line"`
	EndLine      int    `json:"end_line"`
	Lines        int    `json:"lines"` // lines in the file
	Truncated    bool   `json:"truncated"`
	OmittedLines int    `json:"omitted_lines,omitempty"`
	OmittedBytes int    `json:"omitted_bytes,omitempty"`
	NextCursor   string `json:"next_cursor,omitempty"`
	Tokens       int    `json:"tokens"`
	Nonce        string `json:"nonce"`
	// Sanitized counts what framing removed or repaired in the body
	// (escape sequences, control characters, invalid UTF-8).
	Sanitized *contract.SanitizeStats `json:"sanitized,omitempty"`
}

func runRead(ctx context.Context, c *call, a *readArgs) (readResult, string, error) {
	cat, err := c.s.catalog(ctx)
	if err != nil {
		return readResult{}, "", err
	}
	var path string
	from, to, off := 0, 0, 0
	if a.Cursor != "" {
		var rc readCursor
		c.openCursor("read", a.Cursor, &rc) // validated
		path, from, to, off = rc.Path, rc.Line, rc.End, rc.Off
	} else {
		var fe *contract.FieldError
		path, from, to, fe = c.s.resolveURI(cat, a.URI)
		if fe != nil {
			return readResult{}, "", &contract.ValidationError{Errors: []contract.FieldError{*fe}}
		}
		if a.StartLine != nil {
			from = *a.StartLine
			if a.EndLine == nil {
				to = 0
			}
		}
		if a.EndLine != nil {
			to = *a.EndLine
		}
	}
	f := cat.byAbs[path]
	if f == nil || !cat.visible(c.caller.Principal, c.s.o.Namespace).file[f.idx] {
		return readResult{}, "", &notFoundError{what: "uri"}
	}
	data, fe := c.s.readConfined(f)
	if fe != nil {
		return readResult{}, "", &contract.ValidationError{Errors: []contract.FieldError{*fe}}
	}
	lines := ingest.NewLines(data)
	n := lines.N()
	if from == 0 {
		from = 1
	}
	if to == 0 || to > n {
		to = n
	}
	if from > n {
		return readResult{}, "", &contract.ValidationError{Errors: []contract.FieldError{{Loc: []any{"arguments", "start_line"}, InputValue: from,
			ErrorType: contract.ErrTypeOutOfRange, Message: "start_line is past the end of the file", ExpectedDomain: fmt.Sprintf("integer 1..%d (the file's lines)", n)}}}
	}
	span := lines.Span(from, to)
	if off > 0 && off < len(span) {
		span = span[off:]
	}
	uri := ingest.FileURI(f.abs) + fmt.Sprintf("#L%d-L%d", from, to)
	// Budget the body to what the frame leaves; escaping (& < > become
	// entities) can grow it, so shrink and cut again until the frame fits.
	budget := c.s.o.TokenBudget * contract.DefaultBytesPerToken
	bodyBytes := max(budget-frameOverhead(f.abs), 256)
	var res readResult
	var text string
	for attempt := 0; ; attempt++ {
		body, cut := truncateSpan(span, bodyBytes)
		res = readResult{URI: uri, StartLine: from, EndLine: to, Lines: n, Nonce: c.nonce}
		if cut != nil {
			res.Truncated, res.OmittedLines, res.OmittedBytes = true, cut.lines, cut.bytes
			// Continue at the first omitted byte: its line and offset.
			line, lineStart := from, 0
			if off > 0 {
				lineStart = -off // the span's first line started off bytes earlier
			}
			for i := 0; i < cut.at; i++ {
				if span[i] == '\n' {
					line++
					lineStart = i + 1
				}
			}
			res.NextCursor = c.sealCursor("read", readCursor{Path: f.abs, Line: line, Off: cut.at - lineStart, End: to})
		}
		env := contract.Envelope{DocID: safeName(f.rel) + fmt.Sprintf("#L%d-L%d", from, to), SourceURI: uri, Content: body, Score: 1,
			Trust: f.trust, VersionHash: engine.VersionHash(lines.Span(from, to))}
		var err error
		if text, err = contract.FrameHit(env, c.nonce); err != nil {
			return readResult{}, "", err
		}
		if _, st := contract.Sanitize(body); st.Changed() {
			res.Sanitized = &st
		}
		if res.Truncated {
			text += "truncated: call read with cursor=next_cursor for the rest\n"
		}
		if len(text) <= budget || bodyBytes <= 256 || attempt == 4 {
			break
		}
		bodyBytes = max(256, bodyBytes*budget/len(text)-32)
	}
	res.Tokens = (len(text) + contract.DefaultBytesPerToken - 1) / contract.DefaultBytesPerToken
	return res, text, nil
}

// frameOverhead bounds a frame's tag bytes for a file path (the body's
// escaping can grow it further; truncateSpan leaves room for that).
func frameOverhead(p string) int { return 2*len(p) + 400 }

// resolveURI maps a read uri (a file:// URI with an optional #Lx-Ly, an
// absolute path, or a path relative to a root) to the indexed path and its
// line span. A path outside every root is refused with a field error; an
// unknown path inside one resolves (and is then not found).
func (s *Server) resolveURI(cat *catalog, uri string) (string, int, int, *contract.FieldError) {
	bad := func(msg string) *contract.FieldError {
		return &contract.FieldError{Loc: []any{"arguments", "uri"}, InputValue: clip(uri), ErrorType: "outside_roots", Message: msg,
			ExpectedDomain: "a file under the indexed roots (file:// URI, absolute path, or path relative to the root)"}
	}
	var p string
	from, to := 0, 0
	switch {
	case strings.HasPrefix(uri, "file:"):
		var err error
		p, from, to, err = engine.ParseFileURI(uri)
		if err != nil {
			return "", 0, 0, &contract.FieldError{Loc: []any{"arguments", "uri"}, InputValue: clip(uri), ErrorType: contract.ErrTypeInvalidFormat,
				Message: "malformed file:// URI", ExpectedDomain: "file:///ABS/PATH or file:///ABS/PATH#Lx-Ly"}
		}
	case filepath.IsAbs(uri):
		p = uri
	default:
		rel := filepath.FromSlash(uri)
		if !filepath.IsLocal(rel) {
			return "", 0, 0, bad("relative path leaves the root")
		}
		if len(s.roots) == 0 {
			return "", 0, 0, bad("the server has no indexed roots")
		}
		p = filepath.Join(s.roots[0], rel)
		for _, r := range s.roots {
			if q := filepath.Join(r, rel); cat.byAbs[q] != nil {
				p = q
				break
			}
		}
	}
	p = filepath.Clean(p)
	if _, _, ok := underRoot(s.roots, p); !ok {
		return "", 0, 0, bad("path is outside the indexed roots")
	}
	return p, from, to, nil
}

// readConfined reads an indexed file after checking that, with every
// symbolic link resolved, it still lies under its root (also resolved).
func (s *Server) readConfined(f *file) ([]byte, *contract.FieldError) {
	refused := &contract.FieldError{Loc: []any{"arguments", "uri"}, InputValue: nil, ErrorType: "outside_roots",
		Message: "the file resolves (through a symbolic link) outside the indexed roots", ExpectedDomain: "a file under the indexed roots"}
	root, err1 := filepath.EvalSymlinks(s.roots[f.root])
	real, err2 := filepath.EvalSymlinks(f.abs)
	if err1 != nil || err2 != nil {
		return nil, &contract.FieldError{Loc: []any{"arguments", "uri"}, InputValue: nil, ErrorType: "not_found",
			Message: "the indexed file no longer exists", ExpectedDomain: "an indexed file"}
	}
	if _, _, ok := underRoot([]string{root}, real); !ok {
		return nil, refused
	}
	// OpenRegular neither blocks (a FIFO, a device) nor follows a link
	// swapped in as the last component since resolving.
	fh, st, err := vfs.OpenRegular(real, nil)
	if errors.Is(err, vfs.ErrNotRegular) {
		return nil, &contract.FieldError{Loc: []any{"arguments", "uri"}, InputValue: nil, ErrorType: "not_found",
			Message: "the indexed file is no longer a regular file", ExpectedDomain: "an indexed file"}
	}
	if err != nil {
		return nil, &contract.FieldError{Loc: []any{"arguments", "uri"}, InputValue: nil, ErrorType: "not_found",
			Message: "the indexed file cannot be read", ExpectedDomain: "an indexed file"}
	}
	defer fh.Close()
	// The path may have changed between resolving and opening it: the
	// opened file must still be what the path resolves to.
	again, err := filepath.EvalSymlinks(f.abs)
	if st2, err2 := os.Stat(again); err != nil || err2 != nil || again != real || !os.SameFile(st, st2) {
		return nil, refused
	}
	data, err := io.ReadAll(io.LimitReader(fh, maxReadFileBytes+1))
	if err != nil || len(data) > maxReadFileBytes {
		return nil, &contract.FieldError{Loc: []any{"arguments", "uri"}, InputValue: nil, ErrorType: contract.ErrTypeOutOfRange,
			Message: "the file is too large to read", ExpectedDomain: fmt.Sprintf("files of at most %d bytes", maxReadFileBytes)}
	}
	return data, nil
}

// spanCut describes what truncateSpan left out: span[at:at+bytes], which
// holds (parts of) lines lines.
type spanCut struct {
	at, bytes, lines int
}

// truncateMarker is the line that stands for the omitted middle.
func truncateMarker(lines, bytes int) string {
	return fmt.Sprintf("[... %d lines and %d bytes truncated ...]\n", lines, bytes)
}

// truncateSpan returns span whole when it fits maxBytes, else its head
// and tail around a truncateMarker line, all within maxBytes. Cuts fall on
// line boundaries: the head takes whole lines up to half the budget, the
// tail whole lines from the end in what remains. Only when the first line
// alone exceeds the head's half is it cut inside, at a UTF-8 boundary.
func truncateSpan(span []byte, maxBytes int) (string, *spanCut) {
	if len(span) <= maxBytes {
		return string(span), nil
	}
	markerRoom := len(truncateMarker(len(span), len(span))) + 1 // the longest marker, and a newline after a cut line
	avail := max(maxBytes-markerRoom, 2)
	half := avail / 2
	head := 0
	for head < len(span) {
		nl := indexByteFrom(span, head, '\n')
		end := len(span)
		if nl >= 0 {
			end = nl + 1
		}
		if end > half {
			break
		}
		head = end
	}
	if head == 0 { // the first line alone is over half: cut it at a rune start
		head = half
		for head > 0 && !utf8.RuneStart(span[head]) {
			head--
		}
	}
	tail := len(span)
	budget := avail - head
	for tail > head {
		// the start of the line ending at tail
		start := lastIndexByteBefore(span, tail-1, '\n') + 1
		if start < head || tail-start > budget-(len(span)-tail) {
			break
		}
		tail = start
	}
	omitted := span[head:tail]
	n := strings.Count(string(omitted), "\n")
	if len(omitted) > 0 && omitted[len(omitted)-1] != '\n' {
		n++
	}
	var b strings.Builder
	b.Write(span[:head])
	if head > 0 && span[head-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(truncateMarker(n, len(omitted)))
	b.Write(span[tail:])
	return b.String(), &spanCut{at: head, bytes: len(omitted), lines: n}
}

func indexByteFrom(b []byte, from int, c byte) int {
	for i := from; i < len(b); i++ {
		if b[i] == c {
			return i
		}
	}
	return -1
}

// lastIndexByteBefore is the last index < before of c in b, or -1.
func lastIndexByteBefore(b []byte, before int, c byte) int {
	for i := before - 1; i >= 0; i-- {
		if b[i] == c {
			return i
		}
	}
	return -1
}

// safeName is a path or name as a frame attribute may carry it: sanitised
// (contract.Sanitize) and with newlines and tabs as spaces.
func safeName(s string) string {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7F {
			plain = false
			break
		}
	}
	if plain {
		return s // printable ASCII: nothing to sanitise or replace
	}
	s, _ = contract.Sanitize(strings.ToValidUTF8(s, "\uFFFD"))
	return nameSpaces.Replace(s)
}

// nameSpaces turns the line breaks and tabs a sanitised name may keep into
// spaces.
var nameSpaces = strings.NewReplacer("\n", " ", "\t", " ")
