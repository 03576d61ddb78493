package ingest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func defaultOptions() Options {
	var o Options
	o.EnsureDefaults()
	return o
}

// chunkGoFull is ChunkGo as it was before blankFuncBodies: the chunks of
// a full parse (the reference).
func chunkGoFull(src []byte, o Options) ([]Chunk, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, false
	}
	return ChunkGoFile(fset, f, NewLines(src), o), true
}

// TestBlankFuncBodiesGoroot: over the Go files of $GOROOT/src (every
// 16th with -short) that parse, ChunkGo (bodies blanked) gives exactly
// the chunks of a full parse, with the default options and with
// declarations split; and blanking keeps every byte offset and line.
func TestBlankFuncBodiesGoroot(t *testing.T) {
	root := goroot(t)
	small := defaultOptions()
	small.MaxDeclBytes = 300
	step := 1
	if testing.Short() {
		step = 16
	}
	var files, parsed, blanked int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		if files++; files%step != 0 {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var buf []byte
		out, ok := blankFuncBodies(src, &buf)
		if ok {
			blanked++
			if len(out) != len(src) || strings.Count(string(out), "\n") != strings.Count(string(src), "\n") {
				t.Fatalf("%s: blanking changed offsets", path)
			}
		}
		for _, o := range []Options{defaultOptions(), small} {
			want, wok := chunkGoFull(src, o)
			if !wok {
				continue
			}
			parsed++
			got, gok := ChunkGo(src, NewLines(src), o)
			if !gok || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s (MaxDeclBytes %d): chunks differ from a full parse\n got %+v\nwant %+v", path, o.MaxDeclBytes, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if parsed < 1000/step || blanked < parsed/2*9/10 {
		t.Fatalf("%d files, %d parse checks, %d blanked: too few", files, parsed, blanked)
	}
}

// TestBlankFuncBodiesCases: which braces are bodies, and what the scan
// refuses.
func TestBlankFuncBodiesCases(t *testing.T) {
	// body: the text blanked (its newlines kept), "" for none.
	for _, c := range []struct{ src, body string }{
		{"package p\nfunc f() { x := 1 }\n", " x := 1 "},
		{"package p\nfunc f() struct{ a int } { return }\n", " return "},
		{"package p\nfunc (r *T) M(x interface{ M() }) interface{} {\n\ty := \"}\"\n}\n", "\n\ty := \"}\"\n"},
		{"package p\nfunc asm()\ntype T struct{ f func() }\n", ""},
		{"package p\nvar f = func() { g('{') }\n", " g('{') "},
		{"package p\nvar g = h(func() { g() })\n", ""},
		{"package p\nfunc F[T interface{ ~int }](x T) T { /* } */ return x }\n", " /* } */ return x "},
		{"package p\ntype F func() int\nfunc g() {\n`\n}`\n}\n", "\n`\n}`\n"},
	} {
		want := c.src
		if c.body != "" {
			blank := []byte(c.body)
			for i := range blank {
				if blank[i] != '\n' {
					blank[i] = ' '
				}
			}
			want = strings.Replace(c.src, "{"+c.body+"}", "{"+string(blank)+"}", 1)
			if want == c.src {
				t.Fatalf("case %q: body %q not found", c.src, c.body)
			}
		}
		var buf []byte
		got, ok := blankFuncBodies([]byte(c.src), &buf)
		if !ok || string(got) != want {
			t.Errorf("blank(%q) = %q, %v; want %q", c.src, got, ok, want)
		}
	}
	for _, bad := range []string{"package p\nfunc f() { \"x }\n", "package p\nfunc f() { /* }\n", "package p\nfunc f() {\n", "package p\n)\n", "package p\nvar s = `x\n"} {
		var buf []byte
		if _, ok := blankFuncBodies([]byte(bad), &buf); ok {
			t.Errorf("blank(%q) ok, want refused", bad)
		}
	}
}

// FuzzBlankFuncBodies: on any input the scan returns a copy of the same
// length and lines or refuses; when src parses, ChunkGo's chunks are a
// full parse's.
func FuzzBlankFuncBodies(f *testing.F) {
	f.Add([]byte("package p\nfunc f() struct{ a int } { return }\n"))
	f.Add([]byte("package p\nvar m = map[string]func(){\"a\": func() {}}\n// c\nfunc (T) M() {}\n"))
	f.Add([]byte("package p\nfunc f() { '\\'' ; \"\\\"{\" ; `{` }\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		var buf []byte
		if out, ok := blankFuncBodies(src, &buf); ok && (len(out) != len(src) || strings.Count(string(out), "\n") != strings.Count(string(src), "\n")) {
			t.Fatal("blanking changed offsets")
		}
		want, ok := chunkGoFull(src, defaultOptions())
		if !ok {
			return
		}
		if got, gok := ChunkGo(src, NewLines(src), defaultOptions()); !gok || !reflect.DeepEqual(got, want) {
			t.Fatalf("chunks differ from a full parse\n got %+v\nwant %+v", got, want)
		}
	})
}
