package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ReadFile returns the whole content of name.
func ReadFile(fs FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return b, err
}

// RemoveAll removes name and, if it is a directory, everything below it,
// like os.RemoveAll: a missing name is not an error. The removals are not
// synced; sync the parent directory to make them durable.
func RemoveAll(fsys FS, name string) error {
	if ra, ok := fsys.(interface{ RemoveAll(string) error }); ok {
		return ra.RemoveAll(name)
	}
	fi, err := fsys.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		names, err := fsys.List(name)
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := RemoveAll(fsys, filepath.Join(name, n)); err != nil {
				return err
			}
		}
	}
	if err := fsys.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// ChmodFS is implemented by file systems with permission bits (Default).
type ChmodFS interface {
	Chmod(name string, mode os.FileMode) error
}

// Chmod sets name's permission bits when fs has them (ChmodFS) and does
// nothing otherwise (the in-memory FS, wrappers).
func Chmod(fs FS, name string, mode os.FileMode) error {
	if c, ok := fs.(ChmodFS); ok {
		return c.Chmod(name, mode)
	}
	return nil
}

// WriteFileAtomicMode is WriteFileAtomic with the file's permission bits
// set to mode (through Chmod) right after the temp file is created, before
// any content is written, so a private file (a key) is never readable by
// others, not even as a temp file.
func WriteFileAtomicMode(fs FS, name string, mode os.FileMode, write func(w io.Writer) error) error {
	return writeFileAtomic(fs, name, mode, write)
}

func (osFS) RemoveAll(name string) error               { return os.RemoveAll(name) }
func (osFS) Chmod(name string, mode os.FileMode) error { return os.Chmod(name, mode) }
