//go:build unix

package mmap

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Supported reports whether Map really maps (true) or reads into the heap.
const Supported = true

func mapFile(f *os.File, size int) ([]byte, func() error, error) {
	b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap %s: %w", f.Name(), err)
	}
	return b, func() error { return unix.Munmap(b) }, nil
}
