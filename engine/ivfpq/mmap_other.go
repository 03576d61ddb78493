//go:build !unix

package ivfpq

import (
	"fmt"
	"os"
)

// OpenFile reads path into memory (no mmap on this platform) and opens the
// index over it. Corrupt content gives a *CorruptError with the byte offset.
func OpenFile(path string) (*Index, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ivfpq: %w", err)
	}
	return openBytes(data, path)
}
