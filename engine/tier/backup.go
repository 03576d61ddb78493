package tier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stratasearch/strata/vfs"
)

// BackupStats reports what Store.Backup wrote.
type BackupStats struct {
	// Linked and Copied count the segment and archive files hard-linked
	// or copied; WALFiles the WAL segments copied.
	Linked, Copied, WALFiles int
	// CopiedBytes is the number of bytes copied (links excluded).
	CopiedBytes int64
	// Epoch is the visible epoch when the backup started: every write
	// acknowledged before Backup was called is at or below it and is in
	// the backup. Later writes may be in it too, always as a prefix of
	// the epoch order (the WAL is copied in order; a batch cut off mid
	// record is a torn tail that the restored store truncates on open).
	Epoch uint64
}

// Backup writes a copy of the store into dir, which must be empty or
// absent, while writes continue; restoring is opening dir as a store
// (Open with Options.Dir = dir). The segment set is frozen while it runs
// (Flush, Compact, Archive and Promote wait; writes and reads do not):
//
//  1. every warm segment and cold archive file the manifest lists is
//     hard-linked into dir (they are immutable), or copied when linking is
//     impossible (another device, a non-OS file system);
//  2. the WAL segments are copied, oldest first, each up to its current
//     end: they hold every acknowledged write after the durable epoch;
//  3. a fresh manifest (MANIFEST-000001: a checkpoint of the empty state,
//     written with CURRENT before step 1, then one edit with the segment
//     set, archives, tombstones and durable epoch);
//  4. every file and directory is fsynced.
//
// Errors: ErrClosed, a non-empty dir, the context's error, I/O errors (a
// failed backup may leave a partial dir; delete it).
func (s *Store) Backup(ctx context.Context, dir string) (BackupStats, error) {
	var bs BackupStats
	if s.closed.Load() {
		return bs, ErrClosed
	}
	s.maintMu.Lock()
	defer s.maintMu.Unlock()
	if s.closed.Load() {
		return bs, ErrClosed
	}
	bs.Epoch = s.visible.Load()
	fs := s.o.FS
	if names, err := fs.List(dir); err == nil && len(names) > 0 {
		return bs, fmt.Errorf("tier: backup directory %s is not empty", dir)
	}
	walDir := filepath.Join(dir, "wal")
	if err := vfs.MkdirAllDurable(fs, walDir); err != nil {
		return bs, fmt.Errorf("tier: backup: %w", err)
	}
	// The manifest first, empty: a directory holding segment files but
	// no CURRENT is a damaged store, never a new one.
	m, err := OpenManifest(fs, dir, ManifestOptions{Logger: s.o.Logger})
	if err != nil {
		return bs, fmt.Errorf("tier: backup manifest: %w", err)
	}
	mclose := func(err error) (BackupStats, error) { m.Close(); return bs, err }
	st := s.manifest.State()
	var files []string
	for _, sg := range st.Segments {
		files = append(files, sg.File)
	}
	for _, a := range st.Archives {
		files = append(files, a.File)
	}
	for _, name := range files {
		if err := ctx.Err(); err != nil {
			return mclose(err)
		}
		src, dst := filepath.Join(s.o.Dir, name), filepath.Join(dir, name)
		if fs == vfs.Default {
			if err := os.Link(src, dst); err == nil {
				bs.Linked++
				continue
			}
		}
		n, err := copyFile(fs, src, dst)
		if err != nil {
			return mclose(err)
		}
		bs.Copied++
		bs.CopiedBytes += n
	}
	// The WAL after the segment files: its records after the durable
	// epoch are what the restored store replays.
	for _, name := range s.wal.Segments() {
		if err := ctx.Err(); err != nil {
			return mclose(err)
		}
		n, err := copyFile(fs, filepath.Join(s.o.Dir, "wal", name), filepath.Join(walDir, name))
		if err != nil {
			return mclose(err)
		}
		bs.WALFiles++
		bs.CopiedBytes += n
	}
	if err := vfs.SyncDir(fs, walDir); err != nil {
		return mclose(fmt.Errorf("tier: backup: %w", err))
	}
	err = m.Apply(Edit{DurableEpoch: st.DurableEpoch, NextSegmentID: st.NextSegmentID, Add: st.Segments,
		Tombstones: st.Tombstones, AddArchives: st.Archives})
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return bs, fmt.Errorf("tier: backup manifest: %w", err)
	}
	if err := vfs.SyncDir(fs, dir); err != nil {
		return bs, fmt.Errorf("tier: backup: %w", err)
	}
	return bs, nil
}

// copyFile copies src to dst (created) and fsyncs it; it returns the
// number of bytes copied.
func copyFile(fs vfs.FS, src, dst string) (int64, error) {
	in, err := fs.Open(src)
	if err != nil {
		return 0, fmt.Errorf("tier: backup: open %s: %w", src, err)
	}
	defer in.Close()
	out, err := fs.Create(dst)
	if err != nil {
		return 0, fmt.Errorf("tier: backup: create %s: %w", dst, err)
	}
	n, err := io.Copy(struct{ io.Writer }{out}, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("tier: backup: copy %s to %s: %w", src, dst, errors.Join(err))
	}
	return n, nil
}
