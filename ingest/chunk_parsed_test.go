package ingest

import (
	"context"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// goCorpus returns the Go files of three standard packages and of this
// package, with their sources.
func goCorpus(t *testing.T) (names []string, srcs [][]byte) {
	t.Helper()
	dirs := []string{"."}
	r := goroot(t)
	for _, d := range []string{"go/ast", "go/doc", "text/template"} {
		dirs = append(dirs, filepath.Join(r, d))
	}
	for _, d := range dirs {
		ms, err := filepath.Glob(filepath.Join(d, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			b, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			names, srcs = append(names, m), append(srcs, b)
		}
	}
	if len(names) < 50 {
		t.Fatalf("only %d Go files", len(names))
	}
	return names, srcs
}

// parseFull parses src as a caller sharing its parse does: comments
// kept, objects resolved.
func parseFull(t *testing.T, name string, src []byte) *ParsedGo {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	return &ParsedGo{Src: src, Fset: fset, File: f}
}

// TestChunkFileSharedParse: chunking a Go file from a parse made with
// object resolution (the one SyntaxFragment needs) gives exactly
// ChunkFile's chunks, with the default and with a small MaxDeclBytes
// (declarations split); a parse whose Src is not the file's content is
// ignored; one whose Src matches is the one chunked.
func TestChunkFileSharedParse(t *testing.T) {
	names, srcs := goCorpus(t)
	small := Options{MaxDeclBytes: 600}
	small.EnsureDefaults()
	var def Options
	def.EnsureDefaults()
	for i, name := range names {
		pre := parseFull(t, name, srcs[i])
		for _, o := range []Options{def, small} {
			want := ChunkFile(name, srcs[i], o)
			got := chunkFile(name, srcs[i], NewLines(srcs[i]), o, pre)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s (MaxDeclBytes %d): shared parse\n%+v\nChunkFile\n%+v", name, o.MaxDeclBytes, got, want)
			}
		}
	}
	a, b := []byte("package p\n\nfunc A() {}\n"), []byte("package p\n\nvar x int\n\nfunc B() {}\n")
	stale := parseFull(t, "a.go", a)
	if got, want := chunkFile("b.go", b, NewLines(b), def, stale), ChunkFile("b.go", b, def); !reflect.DeepEqual(got, want) {
		t.Fatalf("a parse of other bytes was used: %+v, want %+v", got, want)
	}
	// Same Src, another tree: the chunks are the tree's, so the parse is
	// the one chunked.
	c := []byte("package p\n\nfunc C() {}\n")
	other := parseFull(t, "c.go", c)
	other.Src = a
	if got := chunkFile("a.go", a, NewLines(a), def, other); len(got) != 1 || got[0].Symbol != "C" {
		t.Fatalf("the matching parse was not chunked: %+v", got)
	}
}

// TestIndexParsedSameAsIndex: a pass given every Go file's parse writes
// the manifest (chunk spans and sums) a plain pass writes, and finds the
// same chunks.
func TestIndexParsedSameAsIndex(t *testing.T) {
	r := goroot(t)
	root := t.TempDir()
	for _, d := range []string{"go/ast", "text/template"} {
		ms, _ := filepath.Glob(filepath.Join(r, d, "*.go"))
		for _, m := range ms {
			b, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			write(t, root, filepath.Join(filepath.Base(d), filepath.Base(m)), string(b))
		}
	}
	ctx := context.Background()
	wantCol, wantMf := openTestCollection(t)
	want, err := NewIndexer(wantCol, wantMf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := want.Index(ctx, root, Progress{}); err != nil {
		t.Fatal(err)
	}
	parsed := map[string]*ParsedGo{}
	for path := range want.m.Files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		parsed[path] = parseFull(t, path, b)
	}
	if len(parsed) < 20 {
		t.Fatalf("only %d files indexed", len(parsed))
	}
	gotCol, gotMf := openTestCollection(t)
	got, err := NewIndexer(gotCol, gotMf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := got.IndexParsed(ctx, root, Progress{}, parsed)
	if err != nil {
		t.Fatal(err)
	}
	if st.Indexed != len(parsed) {
		t.Fatalf("indexed %d of %d", st.Indexed, len(parsed))
	}
	for path, w := range want.m.Files {
		g := got.m.Files[path]
		if g == nil || !reflect.DeepEqual(g.Chunks, w.Chunks) || !reflect.DeepEqual(g.ChunkSums, w.ChunkSums) {
			t.Fatalf("%s: manifest entry %+v, want %+v", path, g, w)
		}
	}
	for _, q := range []string{"Walk", "Inspect", "template execution", "comment group"} {
		a, b := hitKeys(search(t, wantCol, q, 10)), hitKeys(search(t, gotCol, q, 10))
		if len(a) == 0 || !reflect.DeepEqual(a, b) {
			t.Fatalf("%q: %v, want %v", q, b, a)
		}
	}
}

// hitKeys lists each hit's id, version and content (not its commit time).
func hitKeys(hs []contract.Envelope) []string {
	var ks []string
	for _, h := range hs {
		ks = append(ks, h.DocID+" "+h.VersionHash+" "+h.Content)
	}
	return ks
}
