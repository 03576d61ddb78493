package vfs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes a file so that after a crash it holds either its
// old content (or is absent) or all of the new content, never a mix: write
// to name+".tmp", fsync it, rename over name, fsync the directory (the
// sequence of Tantivy's mmap_directory atomic_write and pebble's
// CURRENT-file update). write produces the content. On error the temp
// file is removed (best effort) and name is unchanged.
func WriteFileAtomic(fs FS, name string, write func(w io.Writer) error) error {
	return writeFileAtomic(fs, name, 0, write)
}

// writeFileAtomic is WriteFileAtomic; a non-zero mode is applied to the
// temp file (Chmod) before write runs.
func writeFileAtomic(fs FS, name string, mode os.FileMode, write func(w io.Writer) error) (err error) {
	tmp := name + ".tmp"
	f, err := fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("vfs: atomic write %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			fs.Remove(tmp)
		}
	}()
	if mode != 0 {
		if err = Chmod(fs, tmp, mode); err != nil {
			f.Close()
			return fmt.Errorf("vfs: atomic write %s: chmod: %w", name, err)
		}
	}
	if err = write(f); err != nil {
		f.Close()
		return fmt.Errorf("vfs: atomic write %s: %w", name, err)
	}
	if err = f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("vfs: atomic write %s: sync: %w", name, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("vfs: atomic write %s: close: %w", name, err)
	}
	if err = fs.Rename(tmp, name); err != nil {
		return fmt.Errorf("vfs: atomic write %s: rename: %w", name, err)
	}
	if err = SyncDir(fs, filepath.Dir(name)); err != nil {
		// The rename happened; only its durability is unknown. Do not
		// remove tmp (it no longer exists under that name).
		err2 := fmt.Errorf("vfs: atomic write %s: sync dir: %w", name, err)
		err = nil
		return err2
	}
	return nil
}

// MkdirAllDurable creates dir and its missing parents and fsyncs every
// ancestor directory, so the whole chain survives a crash (creating a
// directory is a directory-entry change in its parent).
func MkdirAllDurable(fs FS, dir string) error {
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for d := filepath.Clean(dir); ; {
		p := filepath.Dir(d)
		if err := SyncDir(fs, p); err != nil {
			return fmt.Errorf("vfs: sync dir %s: %w", p, err)
		}
		if p == d || p == "." || p == "/" {
			return nil
		}
		d = p
	}
}
