package ingest

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/ingest/lang"
)

const pySrc = `"""Module doc."""
import os

LIMIT = 10


@dataclass
class Point:
    """A point."""
    x: int = 0

    def norm(self):
        """Its length."""
        return os.path.join("a", "b")


def top():
    return 1
`

func TestChunkFilePython(t *testing.T) {
	var o Options
	o.EnsureDefaults()
	lines := NewLines([]byte(pySrc))
	got := ChunkFile("m.py", []byte(pySrc), o)
	if !lang.Available() {
		// Without cgo: today's structural chunker.
		if want := ChunkText(lines, 1, lines.N(), false, o); !reflect.DeepEqual(got, want) {
			t.Fatalf("without cgo ChunkFile = %+v, want ChunkText's %+v", got, want)
		}
		return
	}
	want := []Chunk{
		{StartLine: 1, EndLine: 4, Kind: "decl", Symbol: "LIMIT", Names: []string{"LIMIT"}},
		{StartLine: 7, EndLine: 11, Kind: "class", Symbol: "Point", Names: []string{"Point", "x"}},
		{StartLine: 12, EndLine: 14, Kind: "method", Symbol: "Point.norm", Receiver: "Point", Names: []string{"norm"}},
		{StartLine: 17, EndLine: 18, Kind: "func", Symbol: "top", Names: []string{"top"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ChunkFile:\n got %+v\nwant %+v", got, want)
	}
}

// An oversized definition is cut into ChunkBytes pieces that keep its
// symbol, kind and names, and the pieces cover it.
func TestChunkLangOversized(t *testing.T) {
	if !lang.Available() {
		t.Skip("tree-sitter needs cgo")
	}
	var b strings.Builder
	b.WriteString("class Big:\n    def huge(self):\n")
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&b, "        x%d = %d\n\n", i, i)
	}
	b.WriteString("\ndef after():\n    pass\n")
	src := []byte(b.String())
	o := Options{ChunkBytes: 512, MaxDeclBytes: 2048}
	o.EnsureDefaults()
	cs := ChunkFile("big.py", src, o)
	var pieces int
	for _, c := range cs {
		if c.Symbol == "Big.huge" {
			pieces++
			if c.Kind != "method" || c.Receiver != "Big" || !reflect.DeepEqual(c.Names, []string{"huge"}) {
				t.Fatalf("piece %+v lost its metadata", c)
			}
			if n := len(NewLines(src).Span(c.StartLine, c.EndLine)); n > o.ChunkBytes {
				t.Fatalf("piece %+v is %d bytes", c, n)
			}
		}
	}
	if pieces < 2 {
		t.Fatalf("Big.huge in %d pieces: %+v", pieces, cs)
	}
	if last := cs[len(cs)-1]; last.Symbol != "after" {
		t.Fatalf("last chunk %+v, want after", last)
	}
}

// Every sample in ingest/lang/testdata chunks into sorted, unique,
// in-range spans, and each language's definitions carry symbols.
func TestChunkFileLanguages(t *testing.T) {
	var o Options
	o.EnsureDefaults()
	for _, name := range []string{"sample.py", "sample.js", "sample.ts", "sample.tsx", "sample.rs", "sample.java", "sample.c", "sample.cpp"} {
		src, err := os.ReadFile("lang/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if tag := Lang(name); !lang.Supported(tag) {
			t.Fatalf("%s: Lang %q has no grammar", name, tag)
		}
		cs := ChunkFile(name, src, o)
		n := NewLines(src).N()
		prev, syms := 0, 0
		for _, c := range cs {
			if c.StartLine <= prev || c.EndLine < c.StartLine || c.EndLine > n {
				t.Fatalf("%s: chunk %+v after line %d (of %d)", name, c, prev, n)
			}
			prev = c.EndLine
			if c.Symbol != "" {
				syms++
			}
		}
		if lang.Available() && syms < 4 {
			t.Errorf("%s: only %d chunks with symbols: %+v", name, syms, cs)
		}
	}
}

// EmbedText of a definition in another language: its doc comment without
// markers (decorators and attributes skipped), its first line, and a
// Python docstring's first line.
func TestEmbedTextLanguages(t *testing.T) {
	for _, tc := range []struct {
		rel, span string
		c         Chunk
		want      string
	}{
		{"m.py", "@property\ndef norm(self):\n    \"\"\"Its length.\"\"\"\n    return 1\n",
			Chunk{Kind: "method", Symbol: "Point.norm", Names: []string{"norm"}},
			"Point.norm (point norm). def norm(self): Its length. (in m.py)"},
		{"p.rs", "/// A point.\n#[derive(Debug)]\npub struct Point {\n    x: i32,\n}\n",
			Chunk{Kind: "struct", Symbol: "Point", Names: []string{"Point"}},
			"Point. A point. pub struct Point (in p.rs)"},
		{"a.java", "/**\n * Adds them.\n */\npublic int add(int a) {\n",
			Chunk{Kind: "method", Symbol: "Calc.add", Names: []string{"add"}},
			"Calc.add (calc add). Adds them. public int add(int a) (in a.java)"},
	} {
		if got := EmbedText(tc.rel, tc.c, []byte(tc.span), 256); got != tc.want {
			t.Errorf("EmbedText(%s) = %q, want %q", tc.rel, got, tc.want)
		}
	}
}

// Overload signatures of a function defined in the same file do not name
// the text around them; a prototype of a function defined elsewhere does.
func TestChunkLangSignatures(t *testing.T) {
	if !lang.Available() {
		t.Skip("tree-sitter needs cgo")
	}
	src := "export function pick(a: string): string;\nexport function pick(a: number): number;\n" +
		"export declare function other(a: string): void;\n\nexport function pick(a: any): any {\n  return a;\n}\n"
	var o Options
	o.EnsureDefaults()
	cs := ChunkFile("p.ts", []byte(src), o)
	want := []Chunk{
		{StartLine: 1, EndLine: 3, Kind: "decl", Symbol: "other", Names: []string{"other"}},
		{StartLine: 5, EndLine: 7, Kind: "func", Symbol: "pick", Names: []string{"pick"}},
	}
	if !reflect.DeepEqual(cs, want) {
		t.Fatalf("ChunkFile:\n got %+v\nwant %+v", cs, want)
	}
}

// An index made by the structural chunker (or a build without cgo) is
// re-chunked by tree-sitter on the next run, though the file is unchanged;
// a second run then reads nothing.
func TestIndexRechunksOnChunkerChange(t *testing.T) {
	if !lang.Available() {
		t.Skip("tree-sitter needs cgo")
	}
	root := t.TempDir()
	write(t, root, "m.py", pySrc)
	col, mf := openTestCollection(t)
	ctx := context.Background()
	useLang = false
	st, err := Index(ctx, col, mf, root, Options{}, Progress{})
	useLang = true
	if err != nil {
		t.Fatal(err)
	}
	if st.Indexed != 1 {
		t.Fatalf("structural run %+v", st)
	}
	if h := search(t, col, "Point.norm", 3); len(h) == 0 || symbolOf(h[0]) == "Point.norm" {
		t.Fatalf("structural chunks already carry symbols: %+v", h)
	}
	st, err = Index(ctx, col, mf, root, Options{}, Progress{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Indexed != 1 || st.Read != 1 {
		t.Fatalf("run after the chunker changed %+v, want the file re-chunked", st)
	}
	h := search(t, col, "Point.norm", 3)
	if len(h) == 0 || symbolOf(h[0]) != "Point.norm" || !strings.HasSuffix(h[0].SourceURI, "m.py#L12-L14") {
		t.Fatalf("Point.norm hits %+v", h)
	}
	st, err = Index(ctx, col, mf, root, Options{}, Progress{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Read != 0 || st.Unchanged != 1 {
		t.Fatalf("third run %+v", st)
	}
}

func symbolOf(h contract.Envelope) string {
	s, _ := h.Metadata[MetaSymbol].Str()
	return s
}

// TestLangOfHeader: a .h header is C unless it shows C++; a C++ header
// is chunked by the C++ grammar (its class is a class, with its method).
func TestLangOfHeader(t *testing.T) {
	cHdr := "#include <stdio.h>\n/* A point. */\nstruct point { int x, y; };\nint area(struct point *p);\n"
	cppHdr := "#include <vector>\n\nnamespace geo {\n\n/// A shape.\nclass Shape {\n public:\n  int sides() const { return n_; }\n private:\n  int n_;\n};\n\n}  // namespace geo\n"
	for _, tc := range []struct{ src, want string }{
		{cHdr, "c"},
		{cppHdr, "cpp"},
		{"template <typename T>\nT max(T a, T b);\n", "cpp"},
		{"int std_count;\n", "c"},
	} {
		if got := LangOf("x.h", []byte(tc.src)); got != tc.want {
			t.Errorf("LangOf(%q) = %s, want %s", tc.src, got, tc.want)
		}
	}
	if LangOf("x.c", []byte(cppHdr)) != "c" || LangOf("x.hpp", []byte(cHdr)) != "cpp" {
		t.Error("only .h is sniffed")
	}
	if !lang.Available() {
		t.Skip("tree-sitter needs cgo")
	}
	var class bool
	for _, c := range ChunkFile("shape.h", []byte(cppHdr), Options{}) {
		class = class || (c.Kind == "class" && strings.Contains(c.Symbol, "Shape"))
	}
	if !class {
		t.Fatalf("the C++ header's class is not a class chunk: %+v", ChunkFile("shape.h", []byte(cppHdr), Options{}))
	}
}
