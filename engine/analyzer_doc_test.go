package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/text"
)

// TestAnalyzerCodeDocMatchesBehaviour: the code analyzer does not stem
// ("running" stays "running", "parsers" stays "parsers") and its
// documentation does not claim it does.
func TestAnalyzerCodeDocMatchesBehaviour(t *testing.T) {
	an := text.MustNew(text.CodeOptions())
	var terms []string
	for _, tok := range an.Analyze("running parsers getUserName") {
		terms = append(terms, tok.Term)
	}
	if got := strings.Join(terms, " "); got != "running parsers getusername get user name" {
		t.Fatalf("code analyzer terms %q", got)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "options.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "AnalyzerCode" {
			return true
		}
		found = true
		doc := strings.ToLower(vs.Doc.Text())
		if strings.Contains(doc, "stems") || strings.Contains(doc, "stemming") && !strings.Contains(doc, "no stemming") {
			t.Errorf("AnalyzerCode's comment claims stemming: %q", doc)
		}
		return false
	})
	if !found {
		t.Fatal("AnalyzerCode not found in options.go")
	}
}
