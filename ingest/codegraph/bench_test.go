package codegraph

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stratasearch/strata/ingest"
)

// BenchmarkSyntaxFragment: the fast path on one large std file.
func BenchmarkSyntaxFragment(b *testing.B) {
	path := filepath.Join(runtime.GOROOT(), "src", "go", "ast", "ast.go")
	src, err := os.ReadFile(path)
	if err != nil {
		b.Skip(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := SyntaxFragment(path, src, "go/ast", nil, ingest.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
