package engine

import (
	"bytes"
	"errors"
	"testing"
)

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
		b, ok := span(data, from, to)
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

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"format_version":1,"name":"c","options":{"dim":4,"metric":"l2","analyzer":"code","sync":"none","on_stale":"drop"}}`))
	f.Add([]byte(`{"format_version":2,"name":"c","options":{"dim":4}}`))
	f.Add([]byte(`{"format_version":1,"name":"c","options":{"dim":0,"bogus":1}}`))
	f.Add([]byte(`{"format_version":1,"name":"c","options":{"dim":4}} {}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := parseConfig(b, "/x/c/collection.json")
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
			return
		}
		if cfg.Name != "c" || cfg.Options.Validate() != nil {
			t.Fatalf("accepted invalid config %+v", cfg)
		}
	})
}
