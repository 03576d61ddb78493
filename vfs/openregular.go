package vfs

import (
	"errors"
	"fmt"
	"os"
)

// ErrNotRegular is returned (wrapped) by OpenRegular for a path that is
// not a regular file: a symbolic link, a FIFO, a device, a socket or a
// directory.
var ErrNotRegular = errors.New("vfs: not a regular file")

// ErrChanged is returned (wrapped) by OpenRegular when the opened file is
// not the one the caller expected.
var ErrChanged = errors.New("vfs: file changed since it was listed")

// OpenRegular opens path for reading and returns it only when it is a
// regular file. A symbolic link as the last component is refused, not
// followed, and opening never blocks (a FIFO with no writer, a device):
// on unix the file is opened O_RDONLY|O_NONBLOCK|O_NOFOLLOW|O_CLOEXEC,
// checked with fstat, and switched back to blocking reads. When want is
// non-nil (the FileInfo a walk or an earlier Stat saw), the opened file
// must also be that file (os.SameFile), else ErrChanged. The returned
// FileInfo describes the opened descriptor. Symbolic links in earlier
// components are followed; callers that confine a path resolve it first.
func OpenRegular(path string, want os.FileInfo) (*os.File, os.FileInfo, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %s", ErrNotRegular, path)
	}
	if want != nil && !os.SameFile(fi, want) {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %s", ErrChanged, path)
	}
	return f, fi, nil
}
