// Package code evaluates code search over the Go standard library
// (GOROOT/src) on three query sets whose answers are declarations:
//
//   - intent (intent/queries.tsv): what a function does, in plain words,
//     written without reading the answers' doc comments (intent/README.md);
//   - doc-sentence (docsentence/queries.json): the first sentence of the
//     doc comment of 200 exported functions and methods drawn with a fixed
//     seed, without its leading name;
//   - identifier: the same 200 declarations queried as "pkg.Name" (or
//     "pkg.Type.Method").
//
// A fourth set, intent-py (intent-py/queries.tsv), holds intent queries
// over the Python standard library, answered by "file.py:Symbol" specs
// that ResolvePython resolves with PythonSpan.
//
// Answers are "import/path:Symbol" or "import/path:Type.Method" specs,
// resolved with go/parser against the GOROOT the command runs with into
// (file relative to GOROOT/src, symbol, line span from the doc comment's
// first line to the declaration's last line): Resolve. A hit answers a
// query when its file is an answer's file and its line range overlaps the
// answer's span. Metrics per query set and retrieval mode: success@1,
// success@5, MRR@10, and a paired bootstrap (bench/hybrid.PairedBootstrap)
// of per-query RR@10 against lexical.
package code

import (
	"bufio"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Answer is one resolved declaration.
type Answer struct {
	Spec   string `json:"spec"`   // "strings:ToUpper"
	File   string `json:"file"`   // relative to GOROOT/src, slash-separated
	Symbol string `json:"symbol"` // "ToUpper", "Builder.WriteString"
	From   int    `json:"from"`   // first line (doc comment included), 1-based
	To     int    `json:"to"`     // last line, inclusive
}

// Query is one query with the declarations that answer it.
type Query struct {
	Text    string   `json:"text"`
	Specs   []string `json:"specs"`
	Answers []Answer `json:"answers,omitempty"`
}

// ReadTSV reads an intent query file: "query<TAB>spec spec ..." per line;
// blank lines and lines starting with '#' are skipped.
func ReadTSV(path string) ([]Query, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var qs []Query
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		l := sc.Text()
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		text, specs, ok := strings.Cut(l, "\t")
		if !ok || strings.TrimSpace(text) == "" || len(strings.Fields(specs)) == 0 {
			return nil, fmt.Errorf("%s:%d: want \"query<TAB>specs\"", path, line)
		}
		qs = append(qs, Query{Text: strings.TrimSpace(text), Specs: strings.Fields(specs)})
	}
	return qs, sc.Err()
}

// pkgDecls parses the non-test .go files of one package directory and
// maps "Symbol" / "Type.Method" to every declaration of it (files for
// other GOOS/GOARCH can declare a name more than once).
type pkgDecls map[string][]Answer

// Resolver resolves specs against GOROOT/src, caching parsed packages.
type Resolver struct {
	Src  string // GOROOT/src
	pkgs map[string]pkgDecls
}

// NewResolver returns a Resolver over src (GOROOT/src).
func NewResolver(src string) *Resolver { return &Resolver{Src: src, pkgs: map[string]pkgDecls{}} }

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}

func (r *Resolver) parse(pkg string) (pkgDecls, error) {
	if d, ok := r.pkgs[pkg]; ok {
		return d, nil
	}
	dir := filepath.Join(r.Src, filepath.FromSlash(pkg))
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	decls := pkgDecls{}
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if f.Name.Name == "main" || strings.HasSuffix(f.Name.Name, "_test") {
			continue
		}
		rel := pkg + "/" + n
		span := func(doc *ast.CommentGroup, from, to token.Pos) (int, int) {
			if doc != nil {
				from = doc.Pos()
			}
			return fset.Position(from).Line, fset.Position(to).Line
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				sym := d.Name.Name
				if d.Recv != nil && len(d.Recv.List) > 0 {
					sym = recvName(d.Recv.List[0].Type) + "." + sym
				}
				a, b := span(d.Doc, d.Pos(), d.End())
				decls[sym] = append(decls[sym], Answer{File: rel, Symbol: sym, From: a, To: b})
			case *ast.GenDecl:
				for _, s := range d.Specs {
					var name string
					var doc *ast.CommentGroup
					switch s := s.(type) {
					case *ast.TypeSpec:
						name, doc = s.Name.Name, s.Doc
					case *ast.ValueSpec:
						if len(s.Names) > 0 {
							name, doc = s.Names[0].Name, s.Doc
						}
					}
					if name == "" {
						continue
					}
					if doc == nil && len(d.Specs) == 1 {
						doc = d.Doc
					}
					from, to := s.Pos(), s.End()
					if len(d.Specs) == 1 {
						from, to = d.Pos(), d.End()
					}
					a, b := span(doc, from, to)
					decls[name] = append(decls[name], Answer{File: rel, Symbol: name, From: a, To: b})
				}
			}
		}
	}
	r.pkgs[pkg] = decls
	return decls, nil
}

// Resolve fills q.Answers from q.Specs. Every spec must resolve.
func (r *Resolver) Resolve(q *Query) error {
	q.Answers = q.Answers[:0]
	var errs []error
	for _, s := range q.Specs {
		pkg, sym, ok := strings.Cut(s, ":")
		if !ok {
			errs = append(errs, fmt.Errorf("%q: spec %q is not pkg:Symbol", q.Text, s))
			continue
		}
		decls, err := r.parse(pkg)
		if err != nil {
			errs = append(errs, fmt.Errorf("%q: %s: %v", q.Text, s, err))
			continue
		}
		as, ok := decls[sym]
		if !ok {
			errs = append(errs, fmt.Errorf("%q: %s: no declaration %s in %s", q.Text, s, sym, pkg))
			continue
		}
		for _, a := range as {
			a.Spec = s
			q.Answers = append(q.Answers, a)
		}
	}
	return errors.Join(errs...)
}

// Match returns the 1-based rank of the first hit (file relative to
// GOROOT/src, line range) that overlaps an answer, or 0.
func Match(answers []Answer, hits []HitSpan) int {
	for i, h := range hits {
		for _, a := range answers {
			if h.File == a.File && h.From <= a.To && a.From <= h.To {
				return i + 1
			}
		}
	}
	return 0
}

// HitSpan is a hit's file (relative to GOROOT/src) and line range.
type HitSpan struct {
	File     string
	From, To int
}

// Packages lists the import paths under src that a doc-sentence draw may
// use: not cmd/, internal, vendor or testdata trees, sorted.
func Packages(src string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		base := d.Name()
		if base == "testdata" || base == "vendor" || base == "internal" || rel == "cmd" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") {
			return filepath.SkipDir
		}
		out = append(out, rel)
		return nil
	})
	sort.Strings(out)
	return out, err
}
