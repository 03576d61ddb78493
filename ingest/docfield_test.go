package ingest

import (
	"context"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

func TestDocComment(t *testing.T) {
	for _, c := range []struct {
		rel, src string
		chunk    Chunk
		want     string
	}{
		{"strings/strings.go", "// TrimSpace returns s without\n// leading and trailing white space.\nfunc TrimSpace(s string) string {\n\t// not this\n\treturn s\n}\n",
			Chunk{Kind: "func", Symbol: "TrimSpace", Names: []string{"TrimSpace"}}, "TrimSpace returns s without leading and trailing white space."},
		{"a/b.go", "func F() {}\n", Chunk{Kind: "func", Symbol: "F", Names: []string{"F"}}, ""},
		{"a/b.go", "// Package b does things.\npackage b\n", Chunk{Kind: "package"}, ""},
		{"notes.txt", "// looks like a comment\n", Chunk{Kind: "text"}, ""},
		{"lib/m.py", "# Helper for paths.\n@cache\ndef join(a, b):\n    \"\"\"Join two path parts.\"\"\"\n    return a + b\n",
			Chunk{Kind: "function", Symbol: "join", Names: []string{"join"}}, "Helper for paths. Join two path parts."},
		{"src/x.ts", "/**\n * Adds two numbers.\n */\nexport function add(a, b) { return a + b }\n",
			Chunk{Kind: "function", Symbol: "add", Names: []string{"add"}}, "Adds two numbers."},
	} {
		if got := DocComment(c.rel, c.chunk, []byte(c.src)); got != c.want {
			t.Errorf("DocComment(%s, %q) = %q, want %q", c.rel, c.src, got, c.want)
		}
	}
}

// TestIndexDocField: a declaration's Content header carries its doc
// comment after the names and path line, Snippet still returns the span
// exactly, and a prose query finds the definition whose documentation
// says it above a function whose body merely uses the same words.
func TestIndexDocField(t *testing.T) {
	root := t.TempDir()
	host := "package host\n\n// Hostname returns the name of the machine.\nfunc Hostname() (string, error) { return uname() }\n"
	write(t, root, "host/host.go", host)
	write(t, root, "report/report.go", "package report\n\nfunc report() {\n\tprintln(\"name of the machine\")\n}\n")
	col, mf := openTestCollection(t)
	ctx := context.Background()
	if _, err := Index(ctx, col, mf, root, Options{}, Progress{}); err != nil {
		t.Fatal(err)
	}
	res, err := Search(ctx, col, contract.Query{Text: "name of the machine", TopK: 5, Mode: contract.Lexical})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 {
		t.Fatal("no hits")
	}
	top := res.Hits[0]
	if p, _ := top.Metadata[MetaPath].Str(); p != "host/host.go" {
		t.Fatalf("top hit %s, want host/host.go (hits %d)", p, len(res.Hits))
	}
	wantHeader := "Hostname host/host.go\nHostname returns the name of the machine.\n"
	if !strings.HasPrefix(top.Content, wantHeader) {
		t.Errorf("content %q, want the header %q", top.Content, wantHeader)
	}
	span := host[strings.Index(host, "// Hostname"):]
	if got := Snippet(top.Content, top.Metadata); got != span {
		t.Errorf("snippet %q, want the span %q", got, span)
	}
}

func TestExportedSymbol(t *testing.T) {
	for _, c := range []struct {
		sym, rel string
		want     bool
	}{
		{"EqualFold", "strings/strings.go", true},
		{"Builder.WriteString", "strings/builder.go", true},
		{"isSpace", "strings/strings.go", false},
		{"decoder.Read", "encoding/x.go", false},
		{"Reader.fill", "bufio/bufio.go", false},
		{"_helper", "lib/m.py", false},
		{"Path.__init__", "lib/m.py", true},
		{"Path._parts", "lib/m.py", false},
		{"read_text", "lib/m.py", true},
		{"helper", "src/x.ts", true},
	} {
		if got := exportedSymbol(c.sym, c.rel); got != c.want {
			t.Errorf("exportedSymbol(%q, %q) = %v, want %v", c.sym, c.rel, got, c.want)
		}
	}
}

// TestSearchPublicAboveHelper: a prose query ranks the exported function
// above an unexported helper that matches its words as well, and
// Explain.Prior shows the helper's factor; with the priors off the helper
// (shorter, so BM25's first) leads.
func TestSearchPublicAboveHelper(t *testing.T) {
	root := t.TempDir()
	write(t, root, "text/upper.go", "package text\n\n// Upper returns s where we make every letter capital.\nfunc Upper(s string) string { return upperASCII(s) }\n")
	write(t, root, "text/ascii.go", "package text\n\n// upperASCII: make every letter capital.\nfunc upperASCII(s string) string { return s }\n")
	col, mf := openTestCollection(t)
	ctx := context.Background()
	if _, err := Index(ctx, col, mf, root, Options{}, Progress{}); err != nil {
		t.Fatal(err)
	}
	q := contract.Query{Text: "make every letter capital", TopK: 5, Mode: contract.Lexical}
	top := func(o SearchOptions) contract.Envelope {
		t.Helper()
		res, err := SearchWith(ctx, col, q, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) < 2 {
			t.Fatalf("%d hits, want 2", len(res.Hits))
		}
		return res.Hits[0]
	}
	if s, _ := top(SearchOptions{NoPriors: true}).Metadata[MetaSymbol].Str(); s != "upperASCII" {
		t.Fatalf("without priors the top hit is %s; the test needs the helper first by BM25", s)
	}
	h := top(SearchOptions{})
	if s, _ := h.Metadata[MetaSymbol].Str(); s != "Upper" {
		t.Errorf("top hit %s, want Upper", s)
	}
	res, _ := SearchWith(ctx, col, q, SearchOptions{})
	if p := res.Hits[1].Explain.Prior; p != PriorUnexported {
		t.Errorf("helper's prior %g, want %g", p, PriorUnexported)
	}
}
