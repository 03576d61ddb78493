package tier

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/stratasearch/strata/vfs"
)

// LinkState hard-links (or copies, when linking is impossible) every warm
// segment and cold archive file the manifest lists into dir (created if
// missing), and returns that manifest state. It runs under the
// maintenance lock, so the state and the files agree: Flush, Compact,
// Archive and Promote wait meanwhile (briefly: links, not copies, under
// vfs.Default), writes and reads do not. The linked files stay readable
// however the store changes later; the caller removes them. Publishing a
// store to object storage starts here (engine/remote).
//
// Errors: ErrClosed, I/O errors.
func (s *Store) LinkState(dir string) (ManifestState, error) {
	if s.closed.Load() {
		return ManifestState{}, ErrClosed
	}
	s.maintMu.Lock()
	defer s.maintMu.Unlock()
	if s.closed.Load() {
		return ManifestState{}, ErrClosed
	}
	fs := s.o.FS
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return ManifestState{}, fmt.Errorf("tier: link state: %w", err)
	}
	st := s.manifest.State()
	var files []string
	for _, sg := range st.Segments {
		files = append(files, sg.File)
	}
	for _, a := range st.Archives {
		files = append(files, a.File)
	}
	for _, name := range files {
		src, dst := filepath.Join(s.o.Dir, name), filepath.Join(dir, name)
		if _, err := fs.Stat(dst); err == nil {
			continue // linked by an earlier call (files are immutable)
		}
		if fs == vfs.Default {
			if err := os.Link(src, dst); err == nil {
				continue
			}
		}
		if _, err := copyFile(fs, src, dst); err != nil {
			return ManifestState{}, fmt.Errorf("tier: link state: %w", err)
		}
	}
	return st, nil
}

// WriteStoreDir makes dir (empty or absent) a store holding exactly the
// manifest state st, as Backup's step 3 does: a fresh MANIFEST-000001
// (a checkpoint of the empty state, then one edit with st's segment set,
// archives, tombstones and durable epoch), CURRENT, and an empty wal/.
// The segment and archive files st lists must be placed in dir by the
// caller before Open. Synced epoch and active WAL are left unknown (0),
// so Open accepts the empty WAL and replays nothing.
func WriteStoreDir(fs vfs.FS, dir string, st ManifestState) error {
	if names, err := fs.List(dir); err == nil && len(names) > 0 {
		return fmt.Errorf("tier: store directory %s is not empty", dir)
	}
	if err := vfs.MkdirAllDurable(fs, filepath.Join(dir, "wal")); err != nil {
		return fmt.Errorf("tier: write store dir: %w", err)
	}
	m, err := OpenManifest(fs, dir, ManifestOptions{})
	if err != nil {
		return fmt.Errorf("tier: write store dir: %w", err)
	}
	err = m.Apply(Edit{DurableEpoch: st.DurableEpoch, NextSegmentID: st.NextSegmentID, Add: st.Segments,
		Tombstones: st.Tombstones, AddArchives: st.Archives})
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("tier: write store dir: %w", err)
	}
	return vfs.SyncDir(fs, dir)
}
