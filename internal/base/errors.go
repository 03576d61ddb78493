package base

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrCorrupt is matched (errors.Is) by every error that reports malformed,
// truncated or checksum-failing data, whatever its format. The concrete
// type is *CorruptError, which names the format, the file and the byte
// offset.
var ErrCorrupt = errors.New("corrupt data")

// CorruptError describes damaged data: what it is (Kind), where it is
// (Path, Offset and, for record and text formats, Record and Line) and
// what is wrong (Reason, and the underlying error Err if there is one).
//
// The error text is
//
//	<kind> <path>: corrupt at byte offset <offset>[, line <l>][, record <r>]: <reason>[: <err>]
//
// for example `hnsw index /data/seg-7.hnsw: corrupt at byte offset 64:
// level 9 above max level 4`.
type CorruptError struct {
	// Kind names the format: "hnsw index", "ivfpq index", "bm25 segment",
	// "wal record log", "manifest", "segment", "dataset", ...
	Kind string
	// Path is the file (or the name the caller gave the input); "" for an
	// in-memory buffer, printed as "<bytes>".
	Path string
	// Offset is the byte offset of the problem from the start of the file
	// (for compressed inputs, of the decompressed stream).
	Offset int64
	// Record is the 1-based number of the record (vector, image, document,
	// topic) the problem is in, or 0 when not applicable.
	Record int64
	// Line is the 1-based line number for text formats, or 0 when not
	// applicable.
	Line int64
	// Reason says what is wrong.
	Reason string
	// Err is the underlying error, if any (returned by Unwrap).
	Err error
}

// Corruptf returns a *CorruptError of the given kind for path at byte
// offset off, with the formatted reason.
func Corruptf(kind, path string, off int64, format string, args ...any) *CorruptError {
	return &CorruptError{Kind: kind, Path: path, Offset: off, Reason: fmt.Sprintf(format, args...)}
}

func (e *CorruptError) Error() string {
	var b strings.Builder
	if e.Kind != "" {
		b.WriteString(e.Kind)
		b.WriteByte(' ')
	}
	if e.Path == "" {
		b.WriteString("<bytes>")
	} else {
		b.WriteString(e.Path)
	}
	b.WriteString(": corrupt at byte offset ")
	b.WriteString(strconv.FormatInt(e.Offset, 10))
	if e.Line > 0 {
		b.WriteString(", line ")
		b.WriteString(strconv.FormatInt(e.Line, 10))
	}
	if e.Record > 0 {
		b.WriteString(", record ")
		b.WriteString(strconv.FormatInt(e.Record, 10))
	}
	if e.Reason != "" {
		b.WriteString(": ")
		b.WriteString(e.Reason)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Unwrap returns the underlying error, if any.
func (e *CorruptError) Unwrap() error { return e.Err }
