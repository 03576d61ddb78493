package codegraph

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
)

// TestSyntaxBatchSharedParse: fragments built from files parsed
// beforehand (parseAll, the parse the Updater shares with the index
// pass) equal those syntaxBatch builds parsing the files itself, and
// each equals SyntaxFragment's when the batch declares nothing new for
// the others (one file per batch).
func TestSyntaxBatchSharedParse(t *testing.T) {
	var files []syntaxFile
	for _, d := range []string{"go/ast", "text/template"} {
		ms, _ := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", d, "*.go"))
		for _, m := range ms {
			b, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, syntaxFile{path: m, pkg: d, src: b})
		}
	}
	if len(files) < 20 {
		t.Skipf("no GOROOT source (%d files)", len(files))
	}
	files = append(files, syntaxFile{path: "/x/bad.go", pkg: "x", src: []byte("package x\nfunc (")})
	fresh := func() []syntaxFile {
		c := make([]syntaxFile, len(files))
		for i, f := range files {
			c[i] = syntaxFile{path: f.path, pkg: f.pkg, src: f.src}
		}
		return c
	}
	want := syntaxBatch(fresh(), nil, ingest.Options{}, nil)
	pre := fresh()
	parseAll(pre)
	got := syntaxBatch(pre, nil, ingest.Options{}, nil)
	if len(got) != len(want) {
		t.Fatalf("%d fragments, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("%s: fragment from the shared parse differs", files[i].path)
		}
	}
	if n := len(got[len(got)-1].Nodes); n != 0 {
		t.Fatalf("a file that does not parse has %d nodes", n)
	}
	for _, f := range files[:5] {
		one := []syntaxFile{{path: f.path, pkg: f.pkg, src: f.src}}
		parseAll(one)
		fr := syntaxBatch(one, nil, ingest.Options{}, nil)[0]
		sf, err := SyntaxFragment(f.path, f.src, f.pkg, nil, ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fr, sf) {
			t.Fatalf("%s: shared-parse fragment differs from SyntaxFragment's", f.path)
		}
	}
}

// TestSigCache: fragments built with the signature cache, cold, warm
// from the same files, and warm from other files, equal those built
// without it; a cached head is the one used; after a rotate the cache
// holds only the last batch's heads.
func TestSigCache(t *testing.T) {
	load := func(d string) []syntaxFile {
		ms, _ := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", d, "*.go"))
		var fs []syntaxFile
		for _, m := range ms {
			b, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			fs = append(fs, syntaxFile{path: m, pkg: d, src: b})
		}
		if len(fs) < 5 {
			t.Skipf("no GOROOT source for %s", d)
		}
		return fs
	}
	a, b := load("go/ast"), load("text/template")
	wantA, wantB := syntaxBatch(a, nil, ingest.Options{}, nil), syntaxBatch(b, nil, ingest.Options{}, nil)
	var c sigCache
	check := func(what string, files []syntaxFile, want []*graph.Fragment) {
		t.Helper()
		got := syntaxBatch(files, nil, ingest.Options{}, &c)
		c.rotate()
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("%s: %s differs with the cache", what, files[i].path)
			}
		}
	}
	check("cold", a, wantA)
	check("warm", a, wantA)
	check("warm from go/ast", b, wantB)
	check("warm", b, wantB)
	var alone sigCache
	syntaxBatch(b, nil, ingest.Options{}, &alone)
	alone.rotate()
	if len(c.prev) == 0 || len(c.prev) != len(alone.prev) {
		t.Fatalf("cache holds %d heads after text/template, %d from it alone", len(c.prev), len(alone.prev))
	}
	// A planted entry for one head is what the fragment shows.
	src := []byte("package p\n\nfunc F(a, b int) error { return nil }\n")
	one := []syntaxFile{{path: "/p/p.go", pkg: "p", src: src}}
	c.put("f"+"func F(a, b int) error", "planted")
	fr := syntaxBatch(one, nil, ingest.Options{}, &c)[0]
	var sig string
	for _, n := range fr.Nodes {
		if n.Key == "p.F" {
			sig = n.Sig
		}
	}
	if sig != "planted" {
		t.Fatalf("head of p.F %q: the cache was not used", sig)
	}
}
