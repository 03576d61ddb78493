package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stratasearch/strata/engine"
)

// FuzzInvalidUTF8Loc: the locator never panics, always roots at "body",
// and for an invalid string value names a path whose input is that string.
func FuzzInvalidUTF8Loc(f *testing.F) {
	f.Add([]byte("{\"a\":\"\xff\"}"))
	f.Add([]byte("{\"a\":[1,{\"b\":\"x\xc3\"}]}"))
	f.Add([]byte("[\"\xe2\x82\", 2]"))
	f.Add([]byte("{\"k\xff\":1}"))
	f.Add([]byte("\xff"))
	f.Add([]byte("{\"a\":{\"b\":{\"c\":[[\"ok\",\"\xf0\x9f\"]]}}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if utf8.Valid(data) {
			return
		}
		loc, _ := invalidUTF8Loc(data)
		if len(loc) == 0 || loc[0] != "body" {
			t.Fatalf("loc %v", loc)
		}
	})
}

func TestInvalidUTF8LocPaths(t *testing.T) {
	for in, want := range map[string]string{
		"{\"a\":\"\xff\"}":                                       "[body a]",
		"{\"a\":[1,{\"b\":\"x\xc3\"}]}":                          "[body a 1 b]",
		"[\"ok\", \"\xe2\x82\"]":                                 "[body 1]",
		"{\"x\":1,\"k\xff\":1}":                                  "[body k\ufffd]",
		"{\"d\":[{\"id\":\"a\"},{\"id\":\"b\",\"c\":\"\xff\"}]}": "[body d 1 c]",
	} {
		loc, _ := invalidUTF8Loc([]byte(in))
		if got := fmtLoc(loc); got != want {
			t.Errorf("%q: loc %s, want %s", in, got, want)
		}
	}
}

func fmtLoc(loc []any) string {
	b, _ := json.Marshal(loc)
	s := strings.NewReplacer(`"`, "", ",", " ").Replace(string(b))
	return s
}

// FuzzCursor: decoding arbitrary text never panics and never accepts a
// cursor that was not signed; signed cursors round-trip.
func FuzzCursor(f *testing.F) {
	cs := &cursorSigner{keys: [][]byte{bytes.Repeat([]byte{7}, 32)}}
	good := cs.encode("docs", "alice", "id-17")
	f.Add(good, "id")
	f.Add("", "")
	f.Add("abc.def", "x")
	f.Add(good[:len(good)-2]+"AA", "y")
	f.Fuzz(func(t *testing.T, cur, after string) {
		if a, err := cs.decode(cur, "docs", "alice"); err == nil && cur != cs.encode("docs", "alice", a) {
			t.Fatalf("accepted an unsigned cursor %q", cur)
		}
		if !utf8.ValidString(after) {
			return
		}
		enc := cs.encode("docs", "alice", after)
		if a, err := cs.decode(enc, "docs", "alice"); err != nil || a != after {
			t.Fatalf("round trip %q: %q %v", after, a, err)
		}
		if _, err := cs.decode(enc, "docs", "bob"); err == nil {
			t.Fatal("cursor accepted for another principal")
		}
	})
}

// FuzzCheckSourceURI: never panics; an accepted file:// URI has a clean
// absolute path.
func FuzzCheckSourceURI(f *testing.F) {
	for _, s := range []string{"file:///a/b.go#L1-L9", "file:///a/../../etc/passwd", "file:///a/%2e%2e/x", "https://x/y",
		"file://host/a", "file:a", "file:///a//b", "file:///a/./b", "file:///a#L9-L1", "file:///a?x=1", "%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		if checkSourceURI(uri, []any{"x"}) != nil {
			return
		}
		u, err := url.Parse(uri)
		if err != nil {
			t.Fatalf("accepted unparsable %q", uri)
		}
		if u.Scheme == "file" && (path.Clean(u.Path) != u.Path || !strings.HasPrefix(u.Path, "/")) {
			t.Fatalf("accepted unclean %q (path %q)", uri, u.Path)
		}
	})
}

// FuzzUpsertBody sends arbitrary bodies through the real upsert and search
// handlers: the answer is 200 or a 4xx in the error shape, never a 5xx.
func FuzzUpsertBody(f *testing.F) {
	f.Add([]byte(`{"documents":[{"id":"a","content":"x","trust":"authoritative"}]}`), false)
	f.Add([]byte(`{"documents":[{"id":"a","content":"x","vector":[1,2,3,4],"trust":"derived","metadata":{"k":["a"]}}]}`), false)
	f.Add([]byte(`{"documents":[{"id":"a","vector":[1e39,0,0,0],"trust":"authoritative"}]}`), false)
	f.Add([]byte(`{"text":"x","top_k":5,"filter":{"eq":{"field":"k","value":"a"}}}`), true)
	f.Add([]byte(`{"vector":[0,0,0,0]}`), true)
	f.Add([]byte("{\"text\":\"\xff\"}"), true)
	f.Add([]byte(`{"Documents":[{"id":"a","content":"x","trust":"authoritative"}]}`), false)
	f.Add([]byte(`{"documents":[{"id":"a","content":"x","vector":[1,null,0,0],"trust":"authoritative"}]}`), false)
	f.Add([]byte(`{"documents":[{"id":"a","id":"b","content":"x","trust":"authoritative"}]}`), false)
	f.Add([]byte(`{"text":"x","top_k":5,"TOP_K":0}`), true)
	f.Add([]byte(`{"text":"x","top_k":null}`), true)
	dir := f.TempDir()
	db, err := engine.Open(dir, engine.Options{Logger: quietLogger()})
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	if _, err := db.CreateCollection("docs", engine.CollectionOptions{Dim: 4, Sync: "none"}); err != nil {
		f.Fatal(err)
	}
	s, err := New(db, Options{DataDir: dir, Logger: quietLogger()})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	f.Fuzz(func(t *testing.T, body []byte, search bool) {
		p := "/v1/collections/docs/documents"
		if search {
			p = "/v1/collections/docs/search"
		}
		req := httptest.NewRequest("POST", p, bytes.NewReader(body))
		req.Host = "localhost" // open mode serves loopback Hosts only
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %q: %d %s", p, body, w.Code, w.Body.Bytes())
		}
		if w.Code == http.StatusForbidden {
			t.Fatalf("%s: 403 in open mode (Host check?): %s", p, w.Body.Bytes())
		}
		if w.Code != http.StatusOK {
			checkErrShape(t, w.Body.Bytes())
			return
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("invalid JSON response %s", w.Body.Bytes())
		}
		// Accepted bodies have no key twice in any object and, for an
		// upsert, exactly the schema's top-level keys.
		if k := duplicateKey(body); k != "" {
			t.Fatalf("accepted a body with key %q twice: %s", k, body)
		}
		if !search {
			var top map[string]json.RawMessage
			_ = json.Unmarshal(body, &top)
			for k := range top {
				if k != "documents" && k != "if_match" {
					t.Fatalf("accepted top-level key %q: %s", k, body)
				}
			}
		}
	})
}

// duplicateKey returns a key that appears twice in one object of data
// (valid JSON), or "".
func duplicateKey(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		obj     bool
		wantKey bool
		seen    map[string]bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if top != nil && top.obj {
					top.wantKey = true
				}
				stack = append(stack, &frame{obj: d == '{', wantKey: d == '{', seen: map[string]bool{}})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if top != nil && top.obj {
			if top.wantKey {
				k := tok.(string)
				if top.seen[k] {
					return k
				}
				top.seen[k] = true
				top.wantKey = false
			} else {
				top.wantKey = true
			}
		}
	}
}
