package ingest

import (
	"os"
	"testing"
	"unicode/utf8"

	"github.com/stratasearch/strata/ingest/lang"
)

// fuzzChunk checks, for any input, that the language's parser neither
// panics nor fails, and that ChunkFile's spans are sorted, disjoint, in
// range and start and end on line (so UTF-8 sequence) boundaries.
func fuzzChunk(f *testing.F, name string) {
	if src, err := os.ReadFile("lang/testdata/sample" + name[len("x"):]); err == nil {
		f.Add(src)
	}
	f.Add([]byte("class A {\n  void f() {}\n}\n\xff\xfe é \"\"\"\n"))
	f.Add([]byte("def f(:\n\treturn ü\n@\nclass"))
	var o Options
	o.ChunkBytes, o.MaxDeclBytes = 256, 1024
	o.EnsureDefaults()
	tag := Lang(name)
	f.Fuzz(func(t *testing.T, src []byte) {
		if lang.Available() {
			if _, err := lang.Parse(tag, src); err != nil {
				t.Fatalf("Parse: %v", err)
			}
		}
		lines := NewLines(src)
		valid := utf8.Valid(src)
		prev := 0
		for _, c := range ChunkFile(name, src, o) {
			if c.StartLine <= prev || c.EndLine < c.StartLine || c.EndLine > lines.N() {
				t.Fatalf("chunk %+v after line %d of %d", c, prev, lines.N())
			}
			prev = c.EndLine
			lo := lines.Start[c.StartLine-1]
			hi := len(src)
			if c.EndLine < lines.N() {
				hi = lines.Start[c.EndLine]
			}
			// A boundary just after a newline cannot split a UTF-8
			// sequence ('\n' is never part of one); in valid input every
			// span is valid UTF-8.
			if (lo > 0 && src[lo-1] != '\n') || (hi < len(src) && src[hi-1] != '\n') {
				t.Fatalf("chunk %+v does not start and end at line boundaries", c)
			}
			if valid && !utf8.Valid(src[lo:hi]) {
				t.Fatalf("chunk %+v cuts a UTF-8 sequence", c)
			}
		}
	})
}

func FuzzChunkPython(f *testing.F)     { fuzzChunk(f, "x.py") }
func FuzzChunkJavaScript(f *testing.F) { fuzzChunk(f, "x.js") }
func FuzzChunkTypeScript(f *testing.F) { fuzzChunk(f, "x.ts") }
func FuzzChunkTSX(f *testing.F)        { fuzzChunk(f, "x.tsx") }
func FuzzChunkRust(f *testing.F)       { fuzzChunk(f, "x.rs") }
func FuzzChunkJava(f *testing.F)       { fuzzChunk(f, "x.java") }
func FuzzChunkC(f *testing.F)          { fuzzChunk(f, "x.c") }
func FuzzChunkCPP(f *testing.F)        { fuzzChunk(f, "x.cpp") }
