package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratasearch/strata/vfs"
)

// TestPrepareRefusesReplacedFile: prepare reads only the file the walk
// listed. A path replaced afterwards by another regular file (rename
// over it) or by a directory is refused with an error, not read; the
// file the walk saw is read as it is.
func TestPrepareRefusesReplacedFile(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "first text\n")
	write(t, root, "b.txt", "second text\n")
	var o Options
	o.EnsureDefaults()
	files, _, err := Walk(root, o)
	if err != nil || len(files) != 2 {
		t.Fatalf("walk: %v %v", files, err)
	}
	if r := prepare(files[1], nil, root, o, nil); r.err != nil || len(r.docs) == 0 {
		t.Fatalf("unchanged file: err %v, %d docs", r.err, len(r.docs))
	}
	other := filepath.Join(t.TempDir(), "new.txt")
	if err := os.WriteFile(other, []byte("replacement\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, files[0].Path); err != nil {
		t.Fatal(err)
	}
	if r := prepare(files[0], nil, root, o, nil); !errors.Is(r.err, vfs.ErrChanged) || len(r.docs) != 0 {
		t.Fatalf("replaced file: want ErrChanged and no docs, got %v, %d docs", r.err, len(r.docs))
	}
	if err := os.Remove(files[1].Path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(files[1].Path, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := prepare(files[1], nil, root, o, nil); !errors.Is(r.err, vfs.ErrNotRegular) {
		t.Fatalf("directory: want ErrNotRegular, got %v", r.err)
	}
}

// TestPrepareRootLinkToFile: a root that is itself a symbolic link to a
// file is followed, as Walk's Stat of it is: the file is read.
func TestPrepareRootLinkToFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "real.txt", "linked text\n")
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink(filepath.Join(dir, "real.txt"), link); err != nil {
		t.Fatal(err)
	}
	var o Options
	o.EnsureDefaults()
	files, _, err := Walk(link, o)
	if err != nil || len(files) != 1 {
		t.Fatalf("walk: %v %v", files, err)
	}
	r := prepare(files[0], nil, "", o, nil)
	if r.err != nil || len(r.docs) == 0 {
		t.Fatalf("root link to a file: err %v, %d docs", r.err, len(r.docs))
	}
}
