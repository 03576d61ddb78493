//go:build !(linux || darwin)

package datasets

import (
	"errors"
	"os"
)

const mmapSupported = false

func mmapFile(f *os.File, size int) ([]byte, func() error, error) {
	return nil, nil, errors.New("mmap not supported on this platform")
}
