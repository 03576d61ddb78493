//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package vfs

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

func lockFile(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if err == syscall.EWOULDBLOCK {
			return nil, fmt.Errorf("%w: %s", ErrLocked, name)
		}
		return nil, fmt.Errorf("vfs: lock %s: %w", name, err)
	}
	return f, nil // closing the descriptor releases the flock
}
