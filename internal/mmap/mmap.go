// Package mmap maps whole files read-only into memory, for the index and
// dataset readers that open from a []byte. On unix it uses mmap(2) through
// golang.org/x/sys/unix; elsewhere it reads the file into the heap, so
// callers get the same API everywhere.
package mmap

import (
	"fmt"
	"os"
)

// Map returns the contents of path and a function that releases them. The
// bytes are read-only: writing to them faults on unix. An empty file gives
// a nil slice. Errors wrap the *os.PathError and name path.
func Map(path string) (data []byte, release func() error, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return MapFile(f)
}

// MapFile is Map over an open file, which it does not close.
func MapFile(f *os.File) (data []byte, release func() error, err error) {
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := st.Size()
	if size == 0 {
		return nil, func() error { return nil }, nil
	}
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("mmap %s: file of %d bytes does not fit the address space", f.Name(), size)
	}
	return mapFile(f, int(size))
}

// Open maps path (Map) and passes the mapping to open, which parses it in
// place. If open fails the mapping is released and open's error returned
// as is; a mapping error is returned prefixed with pkg ("hnsw: open
// x.hnsw: no such file or directory"). On success the caller owns release
// and calls it once the value no longer uses the bytes (its Close).
func Open[T any](pkg, path string, open func(data []byte, path string) (T, error)) (v T, release func() error, err error) {
	data, release, err := Map(path)
	if err != nil {
		return v, nil, fmt.Errorf("%s: %w", pkg, err)
	}
	if v, err = open(data, path); err != nil {
		release()
		return v, nil, err
	}
	return v, release, nil
}
