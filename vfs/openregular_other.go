//go:build !unix

package vfs

import (
	"fmt"
	"os"
)

// openNoFollow is the portable fallback: it refuses a path that Lstat
// shows is not a regular file, opens it, and requires the opened file to
// be the one Lstat saw (a swap in between is refused, not followed).
func openNoFollow(path string) (*os.File, error) {
	lfi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !lfi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s", ErrNotRegular, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !os.SameFile(fi, lfi) {
		f.Close()
		return nil, fmt.Errorf("%w: %s", ErrChanged, path)
	}
	return f, nil
}
