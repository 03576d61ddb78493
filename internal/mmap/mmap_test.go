package mmap

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMap(t *testing.T) {
	dir := t.TempDir()
	want := bytes.Repeat([]byte("strata"), 10000)
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, want, 0o644); err != nil {
		t.Fatal(err)
	}
	got, release, err := Map(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("mapped bytes differ from the file")
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}

	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, release, err = Map(empty)
	if err != nil || got != nil || release() != nil {
		t.Fatalf("empty file: %v %v", got, err)
	}

	if _, _, err := Map(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestOpen: Open hands the mapping to the parser, returns its error as is
// (releasing the mapping) and prefixes mapping errors with the package.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("header+body"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, release, err := Open("pkg", p, func(b []byte, path string) (int, error) {
		if path != p {
			t.Errorf("open got path %q", path)
		}
		return len(b), nil
	})
	if err != nil || n != len("header+body") || release == nil || release() != nil {
		t.Fatalf("Open = %d, %v", n, err)
	}
	bad := errors.New("bad header")
	_, release, err = Open("pkg", p, func([]byte, string) (int, error) { return 0, bad })
	if err != bad || release != nil {
		t.Fatalf("parse failure: %v, release %v", err, release != nil)
	}
	_, _, err = Open("pkg", filepath.Join(dir, "missing"), func([]byte, string) (int, error) { return 1, nil })
	if !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "pkg: ") {
		t.Fatalf("missing file: %v", err)
	}
}
