//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package vfs

import (
	"fmt"
	"io"
	"os"
)

type removeOnClose struct {
	*os.File
	name string
}

func (r removeOnClose) Close() error {
	err := r.File.Close()
	os.Remove(r.name)
	return err
}

// lockFile falls back to an exclusively created lock file where flock(2)
// is unavailable. A crash leaves the file behind; remove it by hand.
func lockFile(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if os.IsExist(err) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, name)
		}
		return nil, err
	}
	return removeOnClose{f, name}, nil
}
