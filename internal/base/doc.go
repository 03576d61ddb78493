// Package base holds the few types every storage package shares, so that
// there is one of each: the corruption error (ErrCorrupt, *CorruptError),
// the vector metric (Metric) and the unit-vector normalisation
// (UnitVector).
//
// It is a leaf: it imports only the standard library, and the indexes
// (engine/hnsw, engine/ivfpq, engine/bm25), the tier (engine/tier,
// engine/tier/wal), the data-set readers (datasets) and the engine import
// it. Those packages re-export what their callers use (hnsw.ErrCorrupt is
// base.ErrCorrupt; hnsw.CorruptError is an alias of base.CorruptError), so
// a caller never needs to import this package.
package base
