package hnsw

import (
	"github.com/stratasearch/strata/internal/mmap"
)

// OpenFile maps path read-only (mmap on unix; read into memory elsewhere)
// and opens the index over the mapping without copying it into the heap.
// Close unmaps it. Errors name path; corrupt content gives a *CorruptError
// with the byte offset.
func OpenFile(path string) (*Index, error) {
	ix, release, err := mmap.Open("hnsw", path, openBytes)
	if err != nil {
		return nil, err
	}
	ix.closer = release
	return ix, nil
}
