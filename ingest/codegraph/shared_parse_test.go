package codegraph

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

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
	want := syntaxBatch(fresh(), nil, ingest.Options{})
	pre := fresh()
	parseAll(pre)
	got := syntaxBatch(pre, nil, ingest.Options{})
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
		fr := syntaxBatch(one, nil, ingest.Options{})[0]
		sf, err := SyntaxFragment(f.path, f.src, f.pkg, nil, ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fr, sf) {
			t.Fatalf("%s: shared-parse fragment differs from SyntaxFragment's", f.path)
		}
	}
}
