package bm25

import (
	"errors"

	"github.com/stratasearch/strata/internal/base"
)

// ErrCorrupt is matched (errors.Is) by every error reporting malformed
// segment or postings bytes; such errors are *CorruptError of Kind
// "bm25 segment". It is base.ErrCorrupt, shared by every format.
var ErrCorrupt = base.ErrCorrupt

// ErrInvalidOptions is matched by every Options/SearchParams validation
// error.
var ErrInvalidOptions = errors.New("bm25: invalid options")

// CorruptError describes malformed input: the file (or the name given to
// Open) and the byte offset where the problem was found. It is the type
// every format shares.
type CorruptError = base.CorruptError

func corruptf(path string, off int64, format string, args ...any) error {
	return base.Corruptf("bm25 segment", path, off, format, args...)
}
