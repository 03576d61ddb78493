//go:build cgo

package lang

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	sitter "github.com/smacker/go-tree-sitter"
	"golang.org/x/sys/unix"
)

// walkFloorQuery is, per language, a one-pattern query for a node type
// the corpora hardly hold: its cursor does little but visit every node,
// the floor under any tag query.
var walkFloorQuery = map[string]string{
	"python": "(global_statement) @x", "rust": "(mod_item) @x", "java": "(module_declaration) @x",
	"c": "(gnu_asm_expression) @x", "cpp": "(co_await_expression) @x", "javascript": "(debugger_statement) @x",
	"typescript": "(debugger_statement) @x", "tsx": "(debugger_statement) @x",
}

// BenchmarkQueryWalk runs the language's tag query and the walk-floor
// query over the same tree of every corpus file, alternating on one
// locked thread, and reports thread CPU ms per file of the parse and of
// each query: how much of the query's cost any rewrite of the tag
// patterns could save. Corpus as for BenchmarkParseAB.
//
//	STRATA_LANG_CORPUS=rust:$HOME/.cache/strata/code-corpora/rust:.rs \
//	    go test -run XXX -bench BenchmarkQueryWalk -benchtime 1x ./ingest/lang/
func BenchmarkQueryWalk(b *testing.B) {
	spec := strings.SplitN(os.Getenv("STRATA_LANG_CORPUS"), ":", 3)
	if len(spec) != 3 {
		b.Skip("STRATA_LANG_CORPUS=lang:dir:.ext[,.ext] not set")
	}
	tag, root, exts := spec[0], spec[1], strings.Split(spec[2], ",")
	g, err := grammarFor(tag)
	if err != nil {
		b.Fatal(err)
	}
	floor, err := sitter.NewQuery([]byte(walkFloorQuery[tag]), g.lang)
	if err != nil {
		b.Fatal(err)
	}
	defer floor.Close()
	var srcs [][]byte
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		for _, e := range exts {
			if strings.HasSuffix(path, e) {
				if src, err := os.ReadFile(path); err == nil && len(src) <= MaxParseBytes {
					srcs = append(srcs, src)
				}
				break
			}
		}
		return nil
	})
	if len(srcs) == 0 {
		b.Skip("no files")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := func() time.Duration {
		var ts unix.Timespec
		unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
		return time.Duration(ts.Nano())
	}
	run := func(q *sitter.Query, tree *sitter.Tree) time.Duration {
		qc := sitter.NewQueryCursor()
		defer qc.Close()
		t0 := cpu()
		qc.Exec(q, tree.RootNode())
		for {
			if _, ok := qc.NextMatch(); !ok {
				break
			}
		}
		return cpu() - t0
	}
	sym, field := symbolFor(g.lang, "identifier"), fieldFor(g.lang, "name")
	var parse, full, walk, cwalk time.Duration
	parser := sitter.NewParser()
	defer parser.Close()
	parser.SetLanguage(g.lang)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, src := range srcs {
			t0 := cpu()
			tree, err := parser.ParseCtx(context.Background(), nil, src)
			if err != nil {
				b.Fatal(err)
			}
			parse += cpu() - t0
			full += run(g.query, tree)
			walk += run(floor, tree)
			t0 = cpu()
			cursorWalk(tree.RootNode(), sym, field)
			cwalk += cpu() - t0
			tree.Close()
		}
	}
	n := float64(b.N * len(srcs))
	ms := func(d time.Duration) float64 { return d.Seconds() * 1e3 / n }
	b.ReportMetric(ms(parse), "parse-ms/file")
	b.ReportMetric(ms(full), "query-ms/file")
	b.ReportMetric(ms(walk), "walk-ms/file")
	b.ReportMetric(100*float64(walk)/float64(full), "walk-%")
	b.ReportMetric(ms(cwalk), "cwalk-ms/file")
	b.ReportMetric(100*float64(cwalk)/float64(full), "cwalk-%")
}

// symbolFor is the named symbol called name, or 0.
func symbolFor(l *sitter.Language, name string) sitter.Symbol {
	for i := sitter.Symbol(1); uint32(i) < l.SymbolCount(); i++ {
		if l.SymbolName(i) == name && l.SymbolType(i) == sitter.SymbolTypeRegular {
			return i
		}
	}
	return 0
}

// fieldFor is the field id called name, or 0.
func fieldFor(l *sitter.Language, name string) uint16 {
	for i := 1; i < 1<<12; i++ {
		switch l.FieldName(i) {
		case name:
			return uint16(i)
		case "":
			return 0
		}
	}
	return 0
}

// TestCursorWalk checks cursorWalk's counts against a recursive walk
// through the bindings' Child and FieldNameForChild.
func TestCursorWalk(t *testing.T) {
	src := []byte("class A(B):\n    def f(self, x):\n        return g(x) + self.h(x)\n\ndef k(): pass\nbroken = (\n")
	g, err := grammarFor("python")
	if err != nil {
		t.Fatal(err)
	}
	tree, err := g.parse(src)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	sym, field := symbolFor(g.lang, "identifier"), fieldFor(g.lang, "name")
	if sym == 0 || field == 0 {
		t.Fatalf("identifier symbol %d, name field %d", sym, field)
	}
	var nodes, hits uint64
	var walk func(n *sitter.Node, fieldName string)
	walk = func(n *sitter.Node, fieldName string) {
		nodes++
		if n.Symbol() == sym && fieldName == "name" {
			hits++
		}
		for i := 0; i < int(n.ChildCount()); i++ {
			walk(n.Child(i), n.FieldNameForChild(i))
		}
	}
	walk(tree.RootNode(), "")
	gotN, gotH := cursorWalk(tree.RootNode(), sym, field)
	if gotN != nodes || gotH != hits {
		t.Fatalf("cursorWalk: %d nodes, %d hits; recursive walk: %d nodes, %d hits", gotN, gotH, nodes, hits)
	}
	if hits != 3 {
		t.Fatalf("%d name identifiers, want 3 (A, f, k)", hits)
	}
}
