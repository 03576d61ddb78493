package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// tree lists every path under root (slash-separated, sorted).
func tree(t *testing.T, fsys FS, root string) []string {
	t.Helper()
	var out []string
	var walk func(dir, rel string)
	walk = func(dir, rel string) {
		names, err := fsys.List(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			p := filepath.Join(dir, n)
			out = append(out, rel+n)
			if fi, err := fsys.Stat(p); err == nil && fi.IsDir() {
				walk(p, rel+n+"/")
			}
		}
	}
	walk(root, "")
	sort.Strings(out)
	return out
}

func populate(t *testing.T, fsys FS, root string) {
	t.Helper()
	for _, d := range []string{"keep", "gone/a/b", "gone/c"} {
		if err := fsys.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"keep/x", "gone/y", "gone/a/z", "gone/a/b/w"} {
		fh, err := fsys.Create(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(fh, f)
		fh.Close()
	}
}

func TestRemoveAllAndReadFile(t *testing.T) {
	for name, c := range map[string]struct {
		fs   FS
		root string
	}{"mem": {NewCrashableMem(), "/r"}, "os": {Default, t.TempDir()}, "generic-os": {onlyFS{Default}, t.TempDir()}} {
		t.Run(name, func(t *testing.T) {
			populate(t, c.fs, c.root)
			if b, err := ReadFile(c.fs, filepath.Join(c.root, "gone/a/z")); err != nil || string(b) != "gone/a/z" {
				t.Fatalf("ReadFile = %q, %v", b, err)
			}
			if err := RemoveAll(c.fs, filepath.Join(c.root, "gone")); err != nil {
				t.Fatal(err)
			}
			if got := tree(t, c.fs, c.root); len(got) != 2 || got[0] != "keep" || got[1] != "keep/x" {
				t.Fatalf("after RemoveAll: %v", got)
			}
			if err := RemoveAll(c.fs, filepath.Join(c.root, "gone")); err != nil {
				t.Fatalf("RemoveAll of a missing name: %v", err)
			}
			if _, err := ReadFile(c.fs, filepath.Join(c.root, "gone/y")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("ReadFile of a removed file: %v", err)
			}
		})
	}
}

// onlyFS hides the optional interfaces of the FS it wraps.
type onlyFS struct{ FS }

func TestWriteFileAtomicModePrivate(t *testing.T) {
	p := filepath.Join(t.TempDir(), "key")
	if err := WriteFileAtomicMode(Default, p, 0o600, func(w io.Writer) error {
		fi, err := os.Stat(p + ".tmp")
		if err != nil {
			return err
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("temp file mode %v before the content is written", fi.Mode().Perm())
		}
		_, err = io.WriteString(w, "secret")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode().Perm(), err)
	}
	// The in-memory FS has no permission bits: the write still works.
	m := NewCrashableMem()
	if err := WriteFileAtomicMode(m, "/key", 0o600, func(w io.Writer) error { _, err := io.WriteString(w, "k"); return err }); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, m.CrashClone(), "/key"); got != "k" {
		t.Fatalf("got %q", got)
	}
}
