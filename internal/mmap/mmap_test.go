package mmap

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
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
