package tier

import "io"

// The interfaces below are how the tier will build and open warm-segment
// indexes through the level-2 index packages (engine/hnsw, engine/ivfpq,
// engine/bm25) without those packages knowing about the tier. They are
// the agreed seam for further index kinds; the warm tier builds and opens
// HNSW (segfile.go) and IVF-PQ (segivf.go) directly, so nothing
// implements them yet.

// SegmentIndexBuilder accumulates the rows of one segment and serialises
// the finished index.
type SegmentIndexBuilder interface {
	// Add adds row (dense, from 0, in segment row order) with vector vec
	// (Dim float32s).
	Add(row uint32, vec []float32) error
	// WriteTo builds the index and writes its self-describing bytes
	// (magic, version, sections, CRC32C footer) to w. The tier writes them
	// into a temp file, fsyncs, renames, fsyncs the directory, then records
	// the segment in the manifest.
	WriteTo(w io.Writer) (int64, error)
}

// SegmentIndex is an opened, immutable segment index.
type SegmentIndex interface {
	// Search returns up to k rows nearest q (Dim float32s) with their
	// distances (smaller is better), nearest first. allow is consulted
	// for every candidate during traversal (never after the top-k is cut):
	// the tier passes a check that the row's version is live at the
	// snapshot epoch and passes the filter.
	Search(q []float32, k int, allow func(row uint32) bool) (rows []uint32, dists []float32, err error)
	// Len returns the number of rows.
	Len() int
}

// SegmentIndexKind binds one index package to the tier.
type SegmentIndexKind interface {
	// Name is the collection option value ("hnsw", "ivfpq").
	Name() string
	NewBuilder(dim int, metric Metric) (SegmentIndexBuilder, error)
	// Open opens an index from bytes produced by WriteTo: an mmap of
	// the file under vfs.Default, plain memory under the crash-test FS.
	// data must stay valid and unmodified while the index is in use.
	Open(data []byte) (SegmentIndex, error)
}
