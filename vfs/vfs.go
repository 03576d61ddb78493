package vfs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// File is an open file. Writes are sequential: Write appends at the file's
// current write position (the end for files from Create and OpenAppend).
// ReadAt never moves that position. Sync makes the file's data durable; it
// does NOT make the file's directory entry durable (sync the parent
// directory for that, see FS.OpenDir and SyncDir).
type File interface {
	io.Writer
	io.Reader
	io.ReaderAt
	io.Closer
	// Sync flushes the file's data to stable storage (fsync(2)).
	Sync() error
	// Stat returns the file's metadata; Size() is in bytes.
	Stat() (os.FileInfo, error)
	// Truncate changes the file's size to size bytes.
	Truncate(size int64) error
}

// FS is the file system every storage component goes through, so tests can
// swap in the crashable in-memory FS (NewCrashableMem) or the error-injecting
// wrapper (package errorfs). Names are slash- or OS-separated paths.
type FS interface {
	// Create creates or truncates name and opens it for reading and
	// appending. The new directory entry is durable only after the parent
	// directory is synced.
	Create(name string) (File, error)
	// Open opens an existing file read-only.
	Open(name string) (File, error)
	// OpenReadWrite opens an existing file for reading and appending
	// (writes go to the end), e.g. to truncate a torn tail.
	OpenReadWrite(name string) (File, error)
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// Rename atomically renames oldname to newname, replacing newname.
	// Durable only after the parent directory (both, if they differ) is
	// synced.
	Rename(oldname, newname string) error
	// MkdirAll creates dir and its missing parents.
	MkdirAll(dir string, perm os.FileMode) error
	// List returns the names (not paths) of the entries of dir, unsorted.
	List(dir string) ([]string, error)
	// Stat returns metadata for name.
	Stat(name string) (os.FileInfo, error)
	// OpenDir opens a directory so that its entries can be synced with
	// File.Sync.
	OpenDir(dir string) (File, error)
	// Lock takes an exclusive advisory lock on name (created if missing),
	// held until the returned Closer is closed. A second Lock on a held
	// name fails.
	Lock(name string) (io.Closer, error)
}

// ErrLocked is returned by FS.Lock when the lock is already held.
var ErrLocked = errors.New("vfs: lock already held")

// SyncDir fsyncs the directory dir, making entries created, renamed or
// removed in it durable.
func SyncDir(fs FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}

// Default is the operating system's file system.
var Default FS = osFS{}

type osFS struct{}

func (osFS) Create(name string) (File, error) {
	return os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o644)
}
func (osFS) Open(name string) (File, error) { return os.Open(name) }
func (osFS) OpenReadWrite(name string) (File, error) {
	return os.OpenFile(name, os.O_RDWR|os.O_APPEND, 0)
}
func (osFS) Remove(name string) error                    { return os.Remove(name) }
func (osFS) Rename(oldname, newname string) error        { return os.Rename(oldname, newname) }
func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }
func (osFS) List(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
func (osFS) Stat(name string) (os.FileInfo, error) { return os.Stat(name) }
func (osFS) OpenDir(dir string) (File, error)      { return os.Open(dir) }
func (osFS) Lock(name string) (io.Closer, error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, err
	}
	return lockFile(name)
}
