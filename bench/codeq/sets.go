// Package codeq measures code-search ranking defaults (query syntax,
// definitions first, path priors, generated files, vocabulary bridging)
// on query sets over a Go source tree (GOROOT/src): doc-sentence queries
// and identifier queries generated from the tree's declarations with a
// fixed seed, and hand-written intent queries (Intent). A hit answers a
// query when its file is the declaration's file and its line span holds
// the declaration's name line. Metrics: success@1, success@5, MRR@10.
package codeq

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stratasearch/strata/ingest"
)

// Query is one judged query: Text, answered by the declaration at File
// (slash-separated, relative to the tree root) whose name is on Line.
type Query struct {
	Text   string
	File   string
	Symbol string
	Line   int
	// Generated: the answer is in a generated file.
	Generated bool
}

// decl is an exported, documented top-level func, method or type of a
// public package file.
type decl struct {
	file, pkg, name, symbol string
	line                    int
	doc                     string
	method, generated       bool
}

// public reports whether rel is public implementation code: a non-test .go
// file outside testdata/, cmd/, internal/, vendor/ and example dirs.
func public(rel string) bool {
	if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
		return false
	}
	for _, d := range strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/") {
		switch d {
		case "testdata", "cmd", "internal", "vendor", "example", "examples", "builtin":
			return false
		}
	}
	return true
}

// decls parses every public file under root (up to 1 MiB, as ingest
// indexes) and returns its exported documented declarations in path order.
func decls(root string) ([]decl, error) {
	var out []decl
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if b := d.Name(); b == "testdata" || b == "vendor" || (strings.HasPrefix(b, ".") && p != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !public(rel) {
			return nil
		}
		data, err := os.ReadFile(p)
		class := ingest.Classify(data)
		if err != nil || len(data) > 1<<20 || class == ingest.SkipBinary {
			return nil
		}
		gen := class == ingest.SkipGenerated
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, data, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil
		}
		for _, dd := range f.Decls {
			switch x := dd.(type) {
			case *ast.FuncDecl:
				if !x.Name.IsExported() || x.Doc == nil {
					continue
				}
				dc := decl{file: rel, pkg: f.Name.Name, name: x.Name.Name, symbol: x.Name.Name, line: fset.Position(x.Name.Pos()).Line, doc: x.Doc.Text(), generated: gen}
				if x.Recv != nil && len(x.Recv.List) == 1 {
					t := x.Recv.List[0].Type
					if s, ok := t.(*ast.StarExpr); ok {
						t = s.X
					}
					if ix, ok := t.(*ast.IndexExpr); ok {
						t = ix.X
					}
					if ix, ok := t.(*ast.IndexListExpr); ok {
						t = ix.X
					}
					id, ok := t.(*ast.Ident)
					if !ok || !id.IsExported() {
						continue
					}
					dc.symbol, dc.method = id.Name+"."+x.Name.Name, true
				}
				out = append(out, dc)
			case *ast.GenDecl:
				if x.Tok != token.TYPE || len(x.Specs) != 1 || x.Doc == nil {
					continue
				}
				ts := x.Specs[0].(*ast.TypeSpec)
				if !ts.Name.IsExported() {
					continue
				}
				out = append(out, decl{file: rel, pkg: f.Name.Name, name: ts.Name.Name, symbol: ts.Name.Name, line: fset.Position(ts.Name.Pos()).Line, doc: x.Doc.Text(), generated: gen})
			}
		}
		return nil
	})
	return out, err
}

// firstSentence is the doc comment's first sentence (up to ". " or the
// first blank line), on one line.
func firstSentence(doc string) string {
	if i := strings.Index(doc, "\n\n"); i >= 0 {
		doc = doc[:i]
	}
	doc = strings.Join(strings.Fields(doc), " ")
	if i := strings.Index(doc, ". "); i >= 0 {
		doc = doc[:i+1]
	}
	return doc
}

// Sets generates n doc-sentence queries and n identifier queries from the
// tree at root with seed:
//
//   - doc-sentence: the first sentence of an exported function's, method's
//     or type's doc comment, without the words equal to its name (Go docs
//     start with the name), at least 4 words left; answered by that
//     declaration;
//   - identifier: an exported function or type name declared once among
//     the public files; every other query is qualified by its package
//     ("strings.EqualFold").
func Sets(root string, n int, seed uint64) (docSent, ident []Query, err error) {
	ds, err := decls(root)
	if err != nil {
		return nil, nil, fmt.Errorf("codeq: %w", err)
	}
	if len(ds) == 0 {
		return nil, nil, fmt.Errorf("codeq: no exported documented declarations under %s", root)
	}
	count := map[string]int{}
	for _, d := range ds {
		count[d.name]++
	}
	var dsCand, idCand []decl
	for _, d := range ds {
		words := strings.Fields(firstSentence(d.doc))
		kept := words[:0:0]
		for _, w := range words {
			if strings.Trim(w, ".,;:()'\"") != d.name {
				kept = append(kept, w)
			}
		}
		if len(kept) >= 4 {
			d.doc = strings.Join(kept, " ")
			dsCand = append(dsCand, d)
		}
		if !d.method && count[d.name] == 1 {
			idCand = append(idCand, d)
		}
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pick := func(c []decl) []decl {
		c = slices.Clone(c)
		r.Shuffle(len(c), func(i, j int) { c[i], c[j] = c[j], c[i] })
		return c[:min(n, len(c))]
	}
	for _, d := range pick(dsCand) {
		docSent = append(docSent, Query{Text: d.doc, File: d.file, Symbol: d.symbol, Line: d.line, Generated: d.generated})
	}
	for i, d := range pick(idCand) {
		t := d.name
		if i%2 == 1 {
			t = d.pkg + "." + d.name
		}
		ident = append(ident, Query{Text: t, File: d.file, Symbol: d.symbol, Line: d.line, Generated: d.generated})
	}
	return docSent, ident, nil
}
