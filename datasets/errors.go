package datasets

import (
	"errors"
	"fmt"
)

// ErrCorrupt is matched (errors.Is) by every error that reports malformed,
// truncated or inconsistent input. The concrete type is *CorruptError, which
// names the file, the record or line and the byte offset.
var ErrCorrupt = errors.New("datasets: corrupt input")

// CorruptError describes malformed input. File is the name given by the
// caller (usually the path); Record is the 0-based record number (vector,
// image, document ...) or -1 when not applicable; Line is the 1-based line
// number for text formats or 0 when not applicable; Offset is the byte offset
// of the offending record, field or line from the start of the (decompressed)
// stream.
type CorruptError struct {
	File   string
	Record int64
	Line   int64
	Offset int64
	Msg    string
	Err    error // optional cause
}

func (e *CorruptError) Error() string {
	s := "datasets: " + e.File + ": "
	if e.Line > 0 {
		s += fmt.Sprintf("line %d: ", e.Line)
	}
	if e.Record >= 0 {
		s += fmt.Sprintf("record %d: ", e.Record)
	}
	s += fmt.Sprintf("byte offset %d: %s", e.Offset, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Unwrap returns the cause, if any.
func (e *CorruptError) Unwrap() error { return e.Err }

func corruptf(file string, record, line, offset int64, format string, args ...any) *CorruptError {
	return &CorruptError{File: file, Record: record, Line: line, Offset: offset, Msg: fmt.Sprintf(format, args...)}
}
