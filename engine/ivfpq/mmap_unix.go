//go:build unix

package ivfpq

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// OpenFile maps path read-only (mmap) and opens the index over the mapping:
// codes and ids are not copied into the heap. Close unmaps it. Errors name
// path; corrupt content gives a *CorruptError with the byte offset.
func OpenFile(path string) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ivfpq: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("ivfpq: %w", err)
	}
	size := st.Size()
	if size == 0 || int64(int(size)) != size {
		return openBytes(nil, path)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("ivfpq: mmap %s: %w", path, err)
	}
	ix, err := openBytes(data, path)
	if err != nil {
		unix.Munmap(data)
		return nil, err
	}
	ix.closer = func() error { return unix.Munmap(data) }
	return ix, nil
}
