package bm25

import (
	"errors"
	"fmt"
)

// ErrCorrupt is matched (errors.Is) by every error reporting malformed
// segment or postings bytes.
var ErrCorrupt = errors.New("bm25: corrupt data")

// ErrInvalidOptions is matched by every Options/SearchParams validation
// error.
var ErrInvalidOptions = errors.New("bm25: invalid options")

// CorruptError describes malformed input: the file (or the name given to
// Open) and the byte offset where the problem was found.
type CorruptError struct {
	Path   string
	Offset int64
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("bm25: corrupt segment %q at offset %d: %s", e.Path, e.Offset, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

func corruptf(path string, off int64, format string, args ...any) error {
	return &CorruptError{Path: path, Offset: off, Reason: fmt.Sprintf(format, args...)}
}
