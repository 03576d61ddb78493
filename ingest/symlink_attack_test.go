package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackPrepareFollowsSwappedSymlink: Walk lists only regular files,
// but the file is read later (prepare, in parallel, possibly seconds
// after the walk of a large tree). If the path is replaced by a symbolic
// link to a file outside the root in between, the outside file's bytes
// must not be read, chunked and indexed (and then vouched for with
// engine.VerifiableSources). The read must refuse anything that is not
// the regular file the walk saw (open with O_NOFOLLOW, or compare the
// opened file's Lstat/Stat with the walk's).
func TestAttackPrepareFollowsSwappedSymlink(t *testing.T) {
	root, secretDir := t.TempDir(), t.TempDir()
	secret := filepath.Join(secretDir, "shadow")
	if err := os.WriteFile(secret, []byte("root:TOPSECRETHASH:19000:0:99999:7:::\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	write(t, root, "a.txt", "harmless text\n")
	var o Options
	o.EnsureDefaults()
	files, _, err := Walk(root, o)
	if err != nil || len(files) != 1 {
		t.Fatalf("walk: %v %v", files, err)
	}
	p := files[0].Path
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, p); err != nil {
		t.Fatal(err)
	}
	r := prepare(files[0], nil, root, o, nil)
	for _, d := range r.docs {
		if strings.Contains(d.Content, "TOPSECRETHASH") {
			t.Fatalf("ingestion read and indexed %s through a symlink swapped in after the walk: doc %q content %q", secret, d.ID, d.Content)
		}
	}
}
