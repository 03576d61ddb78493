package datasets

import (
	"github.com/stratasearch/strata/internal/base"
)

// ErrCorrupt is matched (errors.Is) by every error that reports malformed,
// truncated or inconsistent input. The concrete type is *CorruptError, which
// names the file, the record or line and the byte offset. It is
// base.ErrCorrupt, shared by every format.
var ErrCorrupt = base.ErrCorrupt

// CorruptError describes malformed input (Kind "dataset"; the type every
// format shares). Path is the name given by the caller (usually the path);
// Record is the 1-based record number (vector, image, document ...) or 0
// when not applicable; Line is the 1-based line number for text formats or
// 0 when not applicable; Offset is the byte offset of the offending record,
// field or line from the start of the (decompressed) stream; Err is the
// cause, if any.
type CorruptError = base.CorruptError

// corruptKind is the Kind of this package's *CorruptError.
const corruptKind = "dataset"

// corruptf reports malformed input in file; record is the 0-based record
// number or -1 when not applicable, line the 1-based line number or 0.
func corruptf(file string, record, line, offset int64, format string, args ...any) *CorruptError {
	e := base.Corruptf(corruptKind, file, offset, format, args...)
	e.Record, e.Line = recordNumber(record), line
	return e
}

// recordNumber maps a 0-based record index (or -1 for none) onto
// CorruptError.Record (1-based, 0 for none).
func recordNumber(i int64) int64 {
	if i < 0 {
		return 0
	}
	return i + 1
}
