package code

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
)

// DocDecl is one declaration of a doc-sentence draw.
type DocDecl struct {
	Spec       string `json:"spec"`       // "strings:ToUpper"
	Sentence   string `json:"sentence"`   // the doc-sentence query
	Identifier string `json:"identifier"` // the identifier query, "strings.ToUpper"
}

// firstSentence returns the doc comment's first sentence without its
// leading name ("ToUpper returns s with ..." → "returns s with ..."), or
// "" if fewer than 4 words remain.
func firstSentence(doc, name string) string {
	para, _, _ := strings.Cut(doc, "\n\n")
	para = strings.Join(strings.Fields(para), " ")
	if i := strings.Index(para, ". "); i >= 0 {
		para = para[:i]
	}
	para = strings.TrimSuffix(para, ".")
	w := strings.Fields(para)
	if len(w) > 0 && (w[0] == name || strings.TrimSuffix(w[0], "'s") == name) {
		w = w[1:]
	} else if len(w) > 1 && (w[0] == "A" || w[0] == "An" || w[0] == "The") && w[1] == name {
		w = w[2:]
	}
	if len(w) < 4 {
		return ""
	}
	return strings.Join(w, " ")
}

var generatedMark = []byte("Code generated")

// DrawDocSentence draws n exported functions and methods (of exported
// types) with a doc comment from the packages under src (Packages), not
// from generated files, with PCG(seed, 0) over the candidates in sorted
// order.
func DrawDocSentence(src string, n int, seed uint64) ([]DocDecl, error) {
	pkgs, err := Packages(src)
	if err != nil {
		return nil, err
	}
	var cands []DocDecl
	seen := map[string]bool{}
	for _, pkg := range pkgs {
		dir := filepath.Join(src, filepath.FromSlash(pkg))
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				return nil, err
			}
			if head := b[:min(len(b), 2048)]; bytes.Contains(head, generatedMark) {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, b, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil || f.Name.Name == "main" || strings.HasSuffix(f.Name.Name, "_test") {
				continue
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Doc == nil || !fd.Name.IsExported() {
					continue
				}
				sym := fd.Name.Name
				ident := path.Base(pkg)
				if strings.HasPrefix(ident, "v") && len(ident) <= 3 && strings.Contains(pkg, "/") {
					ident = path.Base(path.Dir(pkg)) // math/rand/v2 → rand
				}
				if fd.Recv != nil && len(fd.Recv.List) > 0 {
					r := recvName(fd.Recv.List[0].Type)
					if r == "" || !unicode.IsUpper(rune(r[0])) {
						continue
					}
					sym = r + "." + sym
				}
				s := firstSentence(fd.Doc.Text(), fd.Name.Name)
				spec := pkg + ":" + sym
				if s == "" || seen[spec] {
					continue
				}
				seen[spec] = true
				cands = append(cands, DocDecl{Spec: spec, Sentence: s, Identifier: ident + "." + sym})
			}
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].Spec < cands[j].Spec })
	rng := rand.New(rand.NewPCG(seed, 0))
	rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	return cands[:min(n, len(cands))], nil
}
