package datasets

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// IRecord is one record of a ".I" collection (Cranfield, CISI, CACM,
// Medline style).
type IRecord struct {
	// ID is the text after ".I", trimmed (e.g. "001" in cran.qry).
	ID string
	// Ordinal is the 1-based position of the record in the file. Cranfield
	// judgements refer to queries by this number, not by ID.
	Ordinal int
	// Fields maps a marker letter ("T", "A", "B", "W", "X", ...) to its text:
	// the lines after the marker joined with "\n" (text on the marker line
	// itself comes first). A marker that occurs twice before ".W" appends to
	// its field with "\n".
	Fields map[string]string
	// Line and Offset locate the ".I" line (1-based line, byte offset).
	Line, Offset int64
}

// Field returns the text of marker m ("T", "W" ...), or "".
func (r *IRecord) Field(m string) string { return r.Fields[m] }

// isMarker reports whether line is a field marker: '.', an ASCII capital,
// then end of line or white space. It returns the letter and the rest.
func isMarker(line string) (letter, rest string, ok bool) {
	if len(line) < 2 || line[0] != '.' || line[1] < 'A' || line[1] > 'Z' {
		return "", "", false
	}
	if len(line) > 2 && line[2] != ' ' && line[2] != '\t' {
		return "", "", false
	}
	return line[1:2], strings.TrimSpace(line[2:]), true
}

// ReadIRecords parses a ".I"-record collection. Layout:
//
//	.I <id>
//	.T
//	<title lines>
//	.A
//	<author lines>
//	.B
//	<source lines>
//	.W
//	<abstract lines>
//	.X            (CISI: cross-references)
//	<lines>
//
// Quirks handled (Cranfield): once ".W" has been seen in a record, any
// marker line other than ".I" and ".X" is ordinary text appended (marker
// included) to the current field; so record 240's stray ".A" / ".B" lines
// and the repeated ".W" of records 576 and 578 stay in the abstract. Empty
// records (Cranfield 471, 995) are valid. Errors (*CorruptError): text
// before the first ".I" or before a record's first marker, a ".I" without
// an id, a duplicate id.
func ReadIRecords(r io.Reader, name string) ([]IRecord, error) {
	lr := newLineReader(r, name)
	var recs []IRecord
	seen := map[string]bool{}
	var cur *IRecord
	field := ""     // current field letter, "" before the first marker
	afterW := false // ".W" seen in this record
	// The fields of cur are built here (linear time: re-concatenating a
	// field per line would be quadratic) and moved to cur.Fields by flush.
	texts := map[string]*strings.Builder{}
	appendText := func(f, text string) {
		b := texts[f]
		if b == nil {
			b = new(strings.Builder)
			texts[f] = b
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(text)
	}
	flush := func() {
		for f, b := range texts {
			cur.Fields[f] = strings.TrimRight(b.String(), " \t\n")
		}
		clear(texts)
	}
	for lr.Next() {
		line := lr.text
		letter, rest, marker := isMarker(line)
		if marker && letter == "I" {
			if rest == "" {
				return nil, lr.corrupt(int64(len(recs)), ".I without an id")
			}
			if seen[rest] {
				return nil, lr.corrupt(int64(len(recs)), "duplicate record id %q", rest)
			}
			seen[rest] = true
			if cur != nil {
				flush()
			}
			recs = append(recs, IRecord{ID: rest, Ordinal: len(recs) + 1, Fields: map[string]string{}, Line: lr.line, Offset: lr.off})
			cur, field, afterW = &recs[len(recs)-1], "", false
			continue
		}
		if cur == nil {
			if strings.TrimSpace(line) != "" {
				return nil, lr.corrupt(-1, "text before the first .I record")
			}
			continue
		}
		if marker && (!afterW || letter == "X") {
			field = letter
			if letter == "W" {
				afterW = true
			}
			if texts[field] == nil {
				texts[field] = new(strings.Builder)
			}
			if rest != "" {
				appendText(field, rest)
			}
			continue
		}
		if field == "" {
			if strings.TrimSpace(line) == "" {
				continue
			}
			return nil, lr.corrupt(int64(len(recs)-1), "text before the first field marker of record %q", cur.ID)
		}
		appendText(field, line)
	}
	if lr.err != nil {
		return nil, lr.err
	}
	if cur != nil {
		flush()
	}
	return recs, nil
}

// ReadIRecordsFile is ReadIRecords on a file.
func ReadIRecordsFile(path string) ([]IRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	return ReadIRecords(f, path)
}
