package verify

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSpan(t *testing.T) {
	data := []byte("l1\nl2\nl3")
	for _, c := range []struct {
		from, to int
		want     string
		ok       bool
	}{{0, 0, "l1\nl2\nl3", true}, {1, 1, "l1\n", true}, {2, 3, "l2\nl3", true}, {3, 3, "l3", true}, {3, 4, "", false}, {4, 4, "", false}} {
		got, ok := Span(data, c.from, c.to)
		if ok != c.ok || string(got) != c.want {
			t.Errorf("Span(%d,%d) = %q %v, want %q %v", c.from, c.to, got, ok, c.want, c.ok)
		}
	}
	for _, u := range []string{"http://x/a#L1", "file:///a#L0", "file:///a#L5-L2", "file:///a#foo"} {
		if _, _, _, err := ParseFileURI(u); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
}

func FuzzParseFileURI(f *testing.F) {
	for _, s := range []string{"file:///a/b.go", "file:///a/b.go#L1", "file:///a/b.go#L3-L7", "file:///a#L3-7",
		"file:///a#L0", "file:///a#L9-L2", "http://x/y#L1", "file://host/p#L1-L99999999999999999999", "%zz", ""} {
		f.Add(s, []byte("a\nb\nc\n"))
	}
	f.Fuzz(func(t *testing.T, uri string, data []byte) {
		path, from, to, err := ParseFileURI(uri)
		if err != nil {
			return
		}
		if path == "" || from < 0 || to < from || (from == 0) != (to == 0) {
			t.Fatalf("%q: path %q span %d-%d", uri, path, from, to)
		}
		b, ok := Span(data, from, to)
		if !ok {
			return
		}
		if !bytes.Contains(data, b) {
			t.Fatalf("span not in data")
		}
		if from > 0 && bytes.Count(b, []byte{'\n'}) > to-from+1 {
			t.Fatalf("span %d-%d has %d newlines", from, to, bytes.Count(b, []byte{'\n'}))
		}
	})
}

// TestConfined: real directories and links; the resolved path is what
// must be read, and it lies under the root.
func TestConfined(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	out := filepath.Join(base, "out")
	for _, d := range []string{filepath.Join(root, "sub"), out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(out, "s"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, "s"), filepath.Join(root, "ln")); err != nil {
		t.Fatal(err)
	}
	// A root named through a link resolves too.
	if err := os.Symlink(root, filepath.Join(base, "rootlink")); err != nil {
		t.Fatal(err)
	}
	for uri, want := range map[string]bool{
		"file://" + root + "/sub/a.txt":         true,
		"file://" + root:                        true,
		"file://" + root + "/ln":                false,
		"file://" + root + "/../out/s":          false,
		"file://" + root + "x/a":                false, // a sibling sharing the prefix
		"file://" + base + "/rootlink/sub/a.go": true,
		"file://other" + root + "/a":            false,
		"http://" + root:                        false,
		"file:relative/a":                       false,
	} {
		real, ok := Confined(uri, []string{root})
		if ok != want {
			t.Errorf("Confined(%s) = %v, want %v", uri, ok, want)
		}
		if ok && !strings.HasPrefix(real, root) {
			t.Errorf("Confined(%s) resolved to %s, outside %s", uri, real, root)
		}
	}
	if _, ok := Confined("file://"+root+"/a", []string{filepath.Join(base, "rootlink")}); !ok {
		t.Error("a root given through a symbolic link does not resolve")
	}
}

// FuzzConfined: Confined never panics, and whatever it accepts resolves
// under the root.
func FuzzConfined(f *testing.F) {
	root := f.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a", "b"), 0o755); err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"file://" + root + "/a/b", "file://" + root + "/../x", "file://" + root + "/%2e%2e/x",
		"file://localhost" + root + "/a#L1-L2", "file://" + root + "%2F..%2Fx", "FILE://" + root, "file:///etc/passwd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		real, ok := Confined(uri, []string{root})
		if !ok {
			return
		}
		if rel, err := filepath.Rel(root, real); err != nil || strings.HasPrefix(rel, "..") {
			t.Fatalf("%q resolved to %q, outside %q", uri, real, root)
		}
	})
}
