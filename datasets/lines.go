package datasets

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// lineReader yields lines (without "\n" or "\r\n") with their 1-based line
// number and starting byte offset. Memory is bounded by the longest line.
type lineReader struct {
	br   *bufio.Reader
	name string
	line int64
	off  int64 // offset of the current line
	next int64 // offset of the following line
	text string
	err  error
	noNL bool // last line lacked a trailing newline
}

func newLineReader(r io.Reader, name string) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 1<<16), name: name}
}

func (l *lineReader) Next() bool {
	if l.err != nil {
		return false
	}
	s, err := l.br.ReadString('\n')
	if err != nil && err != io.EOF {
		l.err = fmt.Errorf("datasets: %s: line %d: byte offset %d: %w", l.name, l.line+1, l.next, err)
		return false
	}
	if len(s) == 0 && err == io.EOF {
		return false
	}
	l.line++
	l.off = l.next
	l.next += int64(len(s))
	l.noNL = err == io.EOF
	s = strings.TrimSuffix(s, "\n")
	l.text = strings.TrimSuffix(s, "\r")
	return true
}

func (l *lineReader) corrupt(record int64, format string, args ...any) error {
	return corruptf(l.name, record, l.line, l.off, format, args...)
}

// collapseSpace trims s and replaces every run of white space by one blank.
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
