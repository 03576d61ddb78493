package ingest

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine"
)

const goSrc = `// Package demo is a test.
package demo

import "fmt"

// A is a type.
type A struct {
	x int
}

type (
	// B is grouped.
	B int
	C string
)

// Hello says hello.
// Twice.
func Hello() { fmt.Println("hi") }

func (a *A) Get() int {
	return a.x
}

func (g G[K, V]) Put(k K) {}

const X, Y = 1, 2

var _ = 3
func one() {}; func two() {}
`

func TestChunkGo(t *testing.T) {
	o := Options{}
	o.EnsureDefaults()
	src := []byte(goSrc)
	got := ChunkFile("demo.go", src, o)
	want := []Chunk{
		{1, 2, "package", "demo", "", []string{"demo"}},
		{6, 9, "type", "A", "", []string{"A"}},
		{11, 15, "type", "B", "", []string{"B", "C"}},
		{17, 19, "func", "Hello", "", []string{"Hello"}},
		{21, 23, "method", "A.Get", "A", []string{"Get"}},
		{25, 25, "method", "G.Put", "G", []string{"Put"}},
		{27, 27, "const", "X", "", []string{"X", "Y"}},
		{29, 29, "var", "", "", nil},
		{30, 30, "func", "one", "", []string{"one", "two"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("chunks:\n got %+v\nwant %+v", got, want)
	}
	// Spans are exactly what engine.ReadSpan reads for #Lx-Ly.
	dir := t.TempDir()
	p := filepath.Join(dir, "demo.go")
	if err := os.WriteFile(p, src, 0o644); err != nil {
		t.Fatal(err)
	}
	lines := NewLines(src)
	for _, c := range got {
		uri := FileURI(p) + "#L" + itoa(c.StartLine) + "-L" + itoa(c.EndLine)
		b, err := engine.ReadSpan(uri)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != string(lines.Span(c.StartLine, c.EndLine)) {
			t.Errorf("%s: span %q, ReadSpan %q", uri, lines.Span(c.StartLine, c.EndLine), b)
		}
	}
	if s := string(lines.Span(17, 19)); s != "// Hello says hello.\n// Twice.\nfunc Hello() { fmt.Println(\"hi\") }\n" {
		t.Errorf("Hello span %q", s)
	}
}

func itoa(i int) string { return fmtInt(i) }

func TestChunkGoBigDeclSplit(t *testing.T) {
	o := Options{ChunkBytes: 64, MaxDeclBytes: 128}
	o.EnsureDefaults()
	src := "package p\n\nfunc Big() {\n"
	for i := 0; i < 20; i++ {
		src += "\tx := 1 // some padding text\n"
	}
	src += "}\n"
	cs := ChunkFile("p.go", []byte(src), o)
	if len(cs) < 5 {
		t.Fatalf("want the big func split, got %+v", cs)
	}
	prev := 0
	for _, c := range cs {
		if c.Symbol != "Big" || c.Kind != "func" {
			t.Errorf("piece %+v lost its symbol", c)
		}
		if c.StartLine <= prev || c.EndLine < c.StartLine {
			t.Errorf("pieces not increasing: %+v", cs)
		}
		prev = c.EndLine
	}
	if cs[0].StartLine != 3 || cs[len(cs)-1].EndLine != 24 {
		t.Errorf("pieces cover %d..%d, want 3..24", cs[0].StartLine, cs[len(cs)-1].EndLine)
	}
}

func TestChunkText(t *testing.T) {
	o := Options{ChunkBytes: 64}
	o.EnsureDefaults()
	md := "# Title\n\nintro para\n\n## Section\n\npara one line one\npara one line two\n\npara two a\npara two b\n"
	got := ChunkFile("x.md", []byte(md), o)
	want := []Chunk{
		{StartLine: 1, EndLine: 3, Kind: "text"},
		{StartLine: 5, EndLine: 8, Kind: "text"},
		{StartLine: 10, EndLine: 11, Kind: "text"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("markdown chunks:\n got %+v\nwant %+v", got, want)
	}
	// Brace depth: cut where depth returns to zero rather than mid-block.
	c := "int f() {\n  a;\n}\nint g() {\n  b;\n  c;\n}\n"
	got = ChunkText(NewLines([]byte(c)), 1, 7, false, Options{ChunkBytes: 30})
	want = []Chunk{{StartLine: 1, EndLine: 3, Kind: "text"}, {StartLine: 4, EndLine: 7, Kind: "text"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("brace chunks:\n got %+v\nwant %+v", got, want)
	}
	// Overlap repeats lines.
	got = ChunkText(NewLines([]byte(c)), 1, 7, false, Options{ChunkBytes: 30, OverlapLines: 1})
	if len(got) < 2 || got[1].StartLine != 3 {
		t.Fatalf("overlap chunks: %+v", got)
	}
	// Blank-only input: no chunks; no trailing newline: last line included.
	if got := ChunkText(NewLines([]byte("\n\n  \n")), 1, 3, false, o); len(got) != 0 {
		t.Errorf("blank input gave %+v", got)
	}
	l := NewLines([]byte("a\nb"))
	if l.N() != 2 || string(l.Span(2, 2)) != "b" || string(l.Span(1, 2)) != "a\nb" {
		t.Errorf("lines without final newline: n=%d %q", l.N(), l.Span(1, 2))
	}
}

// FuzzChunkFile checks the chunk invariants on arbitrary input: spans in
// range, ordered, unique, never blank at their ends.
func FuzzChunkFile(f *testing.F) {
	f.Add("a.go", goSrc, 64, 0)
	f.Add("a.md", "# h\n\ntext\n## h2\nmore {\n}\n", 16, 1)
	f.Add("a.txt", "x\n\n\ny{{{\n}}}\n", 8, 3)
	f.Add("a.go", "package p\nfunc f() {\n", 64, 0)
	f.Add("a.go", "package p\n\n//line x.go:1000000\nfunc f() {}\n", 64, 0)
	f.Fuzz(func(t *testing.T, name, src string, cap, overlap int) {
		if cap < 1 || cap > 1<<16 || overlap < 0 || overlap > 8 {
			return
		}
		o := Options{ChunkBytes: cap, MaxDeclBytes: 2 * cap, OverlapLines: overlap}
		o.EnsureDefaults()
		lines := NewLines([]byte(src))
		cs := ChunkFile(name, []byte(src), o)
		prevS, prevE := 0, 0
		for _, c := range cs {
			if c.StartLine < 1 || c.EndLine < c.StartLine || c.EndLine > lines.N() {
				t.Fatalf("span %d-%d out of 1..%d", c.StartLine, c.EndLine, lines.N())
			}
			if c.StartLine == prevS && c.EndLine == prevE {
				t.Fatalf("duplicate span %d-%d", c.StartLine, c.EndLine)
			}
			if c.Kind == "text" && c.StartLine < prevS {
				t.Fatalf("text spans out of order: %d after %d", c.StartLine, prevS)
			}
			prevS, prevE = c.StartLine, c.EndLine
		}
	})
}

// FuzzLoadManifest: any file content either loads or fails with an error,
// never a panic; a loaded manifest saves and reloads to the same files.
func FuzzLoadManifest(f *testing.F) {
	f.Add(`{"format_version":1,"files":{"/a.go":{"size":3,"mtime_ns":5,"hash":"ab","chunks":["L1-L2"]}}}`)
	f.Add(`{"format_version":1,"files":{"/b":{"size":1,"mtime_ns":1,"hash":"","chunks":null,"skip":"binary"}}}`)
	f.Add(`{"format_version":2}`)
	f.Add(`{"files":null,"format_version":1}`)
	f.Add(`nope`)
	f.Fuzz(func(t *testing.T, data string) {
		dir := t.TempDir()
		p := filepath.Join(dir, "m.json")
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := LoadManifest(p)
		if err != nil {
			return
		}
		if err := m.Save(p); err != nil {
			t.Fatal(err)
		}
		m2, err := LoadManifest(p)
		if err != nil || len(m2.Files) != len(m.Files) {
			t.Fatalf("reload: %v, %d files, want %d", err, len(m2.Files), len(m.Files))
		}
	})
}

// TestChunkGoFloatingComments: comments that belong to no declaration (a
// note between two declarations, a commented-out function, a closing note
// at the end of the file) are chunked as text, one run of them between two
// declarations per chunk; the copyright header before the package clause,
// comments inside an import declaration, directive-only comments, a
// repeat of a floating comment, doc comments and trailing comments of
// declarations are not chunked (again).
func TestChunkGoFloatingComments(t *testing.T) {
	o := Options{}
	o.EnsureDefaults()
	src := []byte(`// Copyright 2026 The Authors.

//go:build linux

// Package p is a demo.
package p

import (
	"fmt" // for printing
)

// Doc of A.
type A int

// A free-floating note about the layout of this file.

// func Old() { fmt.Println("removed") }

var x = 1 // trailing comment of x

func f() {
	// inside f
	fmt.Println(x)
}

// TODO(sweep): the quarterly reconciliation happens elsewhere.

//go:linkname y runtime.y

// TODO(sweep): the quarterly reconciliation happens elsewhere.

func g() {}
`)
	got := ChunkFile("p.go", src, o)
	want := []Chunk{
		{5, 6, "package", "p", "", []string{"p"}},
		{12, 13, "type", "A", "", []string{"A"}},
		{15, 17, "text", "", "", nil},
		{19, 19, "var", "x", "", []string{"x"}},
		{21, 24, "func", "f", "", []string{"f"}},
		{26, 26, "text", "", "", nil},
		{32, 32, "func", "g", "", []string{"g"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("chunks:\n got %+v\nwant %+v", got, want)
	}
	lines := NewLines(src)
	if s := string(lines.Span(26, 26)); !strings.Contains(s, "quarterly reconciliation") {
		t.Errorf("last chunk %q", s)
	}
	// The body-blanked parse gives the same chunks as a full parse.
	if full, ok := chunkGoFull(src, o); !ok || !reflect.DeepEqual(full, got) {
		t.Errorf("full parse:\n got %+v\nwant %+v", full, got)
	}
}
