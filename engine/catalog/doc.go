// Package catalog is the engine's lexical catalog: the per-row view of the
// documents a query's snapshot holds, built from the tier and cached.
//
//   - Row: a stored document (shared with the tier, read-only) and its
//     decoded metadata (a warm or cold row's, decoded once; a MemTable
//     version's is decoded field by field when read, Row.Value);
//     EncodeMeta / DecodeMeta are the metadata's stored form (each value
//     as its JSON text in the tier's string map).
//   - FieldIndex: per-value bitmaps of the indexed metadata fields over
//     rows, compiling a contract.Filter to a bitmap when every leaf names
//     an indexed field.
//   - Segments: the tier's lexical segment builder and merger (the BM25
//     section of a warm segment; ExtID is a document's BM25 external id).
//   - Warm / WarmCache: one warm segment set's BM25 segments, rows, key
//     bases and field index, cached for the most recent sets.
//   - Cold / ColdCache: one cold archive's in-memory BM25 segment and rows,
//     cached while the archive lives.
//   - Listing / ListingCache: one row set's ids in order, per namespace and
//     ACL entry (the listing's scope and ACL pre-filter; Merge walks a
//     principal's classes from a cursor); cached per warm segment and cold
//     archive, and kept by each MemTable's lexical index as it grows.
//
// The MemTable's lexical index (the hot rows) stays in the engine, which
// assigns the query's key space: warm rows first (Warm.Bases), then each
// hot MemTable's versions, then cold rows.
package catalog
