package engine

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestThroughLinkResolveMatchesWalk: the one-call form of throughLink
// (openat2 with RESOLVE_NO_SYMLINKS) answers as the per-component Lstat
// walk does, for links in the middle and at the end, dangling and looping
// links, missing components and a regular file used as a directory.
func TestThroughLinkResolveMatchesWalk(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	j := func(p ...string) string { return filepath.Join(append([]string{root}, p...)...) }
	if err := os.MkdirAll(j("a", "b", "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(j("a", "b", "c", "f.go"), []byte("package c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		j("a", "l"):        j("a", "b"),
		j("a", "b", "lf"):  j("a", "b", "c", "f.go"),
		j("a", "dangling"): j("a", "nowhere"),
		j("a", "loop1"):    j("a", "loop2"),
		j("a", "loop2"):    j("a", "loop1"),
		j("a", "b", "rel"): "c",
		j("a", "b", "up"):  "..",
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		p    string
		want bool
	}{
		{j("a", "b", "c", "f.go"), false},
		{j("a", "b", "c"), false},
		{root, false},
		{j("a", "l", "c", "f.go"), true},
		{j("a", "l"), true},
		{j("a", "b", "lf"), true},
		{j("a", "dangling"), true},
		{j("a", "dangling", "x"), true},
		{j("a", "loop1"), true},
		{j("a", "b", "rel", "f.go"), true},
		{j("a", "b", "up", "b"), true},
		{j("a", "b", "missing", "x.go"), false},
		{j("a", "missing"), false},
		{j("a", "b", "c", "f.go", "x"), true}, // ENOTDIR: cannot be examined
	} {
		walk := throughLinkWalk(c.p)
		if walk != c.want {
			t.Errorf("throughLinkWalk(%s) = %v, want %v", c.p, walk, c.want)
		}
		link, ok := throughLinkResolve(c.p)
		if runtime.GOOS == "linux" && !ok {
			t.Logf("openat2 unavailable here; throughLink walks")
		}
		if ok && link != c.want {
			t.Errorf("throughLinkResolve(%s) = %v, want %v (the walk's answer)", c.p, link, c.want)
		}
		if got := throughLink(c.p); got != c.want {
			t.Errorf("throughLink(%s) = %v, want %v", c.p, got, c.want)
		}
	}
}
