//go:build !unix

package mmap

import (
	"io"
	"os"
)

// Supported reports whether Map really maps (true) or reads into the heap.
const Supported = false

func mapFile(f *os.File, size int) ([]byte, func() error, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}
