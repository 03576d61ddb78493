//go:build linux || darwin

package datasets

import (
	"os"

	"golang.org/x/sys/unix"
)

const mmapSupported = true

func mmapFile(f *os.File, size int) ([]byte, func() error, error) {
	b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return unix.Munmap(b) }, nil
}
