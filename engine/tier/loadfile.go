package tier

import (
	"fmt"

	"github.com/stratasearch/strata/internal/mmap"
	"github.com/stratasearch/strata/vfs"
)

// loadFile returns path's bytes: a read-only mapping (internal/mmap) under
// the OS file system, a heap copy under any other vfs.FS (the crash and
// fault tests). release, when non-nil, unmaps.
func loadFile(fs vfs.FS, path string) ([]byte, func() error, error) {
	if fs != vfs.Default {
		b, err := readAllFile(fs, path)
		return b, nil, err
	}
	data, release, err := mmap.Map(path)
	if err != nil {
		return nil, nil, fmt.Errorf("tier: %w", err)
	}
	if len(data) == 0 {
		release()
		return nil, nil, fmt.Errorf("tier: %s: empty segment file", path)
	}
	return data, release, nil
}
