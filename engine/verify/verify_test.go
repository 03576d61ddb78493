package verify

import (
	"bytes"
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
