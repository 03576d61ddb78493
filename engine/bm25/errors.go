package bm25

import (
	"errors"
	"fmt"

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

// ErrNoExtIDs is matched by the error of a search over a segment whose
// file stores no external ids (Options.OmitExtIDs) and that was opened
// without them (OpenOptions.ExtIDs): its hits could not be ordered.
var ErrNoExtIDs = errors.New("bm25: segment has no external ids")

func errNoExtIDs(view int, s *Segment) error {
	return fmt.Errorf("%w: view %d: %s stores none and none were given to OpenWith", ErrNoExtIDs, view, s.path)
}
