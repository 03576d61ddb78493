package verify

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestAttackCacheStaleOnSameSizeAndMtime: the hash cache trusts a file
// unchanged while its size and modification time are. Both are easy to
// keep across a real change: an edit of the same length whose mtime is
// restored (touch -r, rsync -t, tar, cp -p, or a replacement file moved
// into place with the old times). A verified search then reports the
// stale hit as current. The live hash must follow the content: key the
// cache on something a writer cannot set back, e.g. also the inode and
// ctime (st_ctim), or re-hash.
func TestAttackCacheStaleOnSameSizeAndMtime(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(p, []byte("limit = 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	vc := NewCache()
	h1, ok := vc.LiveHash(p, 0, 0)
	if !ok || h1 != VersionHash([]byte("limit = 100\n")) {
		t.Fatalf("first hash: %q %v", h1, ok)
	}
	// Same length, different bytes; mtime restored.
	if err := os.WriteFile(p, []byte("limit = 999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	h2, ok := vc.LiveHash(p, 0, 0)
	if want := VersionHash([]byte("limit = 999\n")); !ok || h2 != want {
		t.Fatalf("LiveHash after a same-size edit with the mtime restored: %s, want %s (the stale cached hash was served)", h2, want)
	}
}
