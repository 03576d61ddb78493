package ingest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/ingest/lang"
)

// defQuery is one query with the definition it should find.
type defQuery struct {
	text string
	rel  string // file, relative to the indexed root
	line int    // the definition's first line
}

// found reports whether hit h's span holds q's definition line.
func (q defQuery) found(root string, h contract.Envelope) bool {
	uri := h.SourceURI
	i := strings.LastIndex(uri, "#L")
	if i < 0 || !strings.HasSuffix(uri[:i], filepath.ToSlash(filepath.Join(root, q.rel))) {
		return false
	}
	var lo, hi int
	if _, err := fmt.Sscanf(uri[i+1:], "L%d-L%d", &lo, &hi); err != nil {
		return false
	}
	return lo <= q.line && q.line <= hi
}

// pyDocQuery is the first sentence of a docstring right after a def line.
var pyDocQuery = regexp.MustCompile(`^\s*[rRuU]?(?:"""|''')\s*([^\n]*)`)

// defQueries builds, from the symbol tables of the files under root, the
// definitions-by-name set (every function, class and method whose name
// Search treats as an identifier and is defined once in the sample) and
// the docstring set (the docstring's first line with the name's words
// removed, at least three words left, a text no other definition in the
// sample shares).
func defQueries(t *testing.T, root string, rels []string) (byName, byDoc []defQuery) {
	return defQueriesLang(t, root, rels, "python")
}

// defKinds are the definitions find_definition should find.
var defKinds = map[string]bool{"func": true, "method": true, "class": true, "interface": true, "trait": true,
	"struct": true, "enum": true, "union": true, "type": true, "macro": true, "module": true}

// defQueriesLang is defQueries for any of lang.Languages: the doc text is
// a Python docstring, or the doc comment right above the definition (and
// its decorators or attributes) in the other languages.
func defQueriesLang(t *testing.T, root string, rels []string, tag string) (byName, byDoc []defQuery) {
	count := map[string]int{}
	type cand struct {
		d   lang.Def
		rel string
		doc string
	}
	var cands []cand
	for _, rel := range rels {
		src, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		ftag := tag
		if tag == "c" || tag == "cpp" {
			ftag = LangOf(rel, src)
		}
		f, err := lang.Parse(ftag, src)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(src), "\n")
		for _, d := range f.Defs {
			if !defKinds[d.Kind] || d.Signature {
				continue
			}
			count[d.Name]++
			doc := ""
			// The docstring is the first statement after the (possibly
			// multi-line) header, which ends in a colon.
			i := d.StartLine - 1
			if tag != "python" {
				i = len(lines)
				doc = docCommentAbove(lines, d.StartLine)
			}
			for i < len(lines) && i < d.StartLine+8 && !strings.HasSuffix(strings.TrimSpace(lines[i]), ":") {
				i++
			}
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) == ""; i++ {
			}
			if i < len(lines) {
				if m := pyDocQuery.FindStringSubmatch(lines[i]); m != nil {
					doc = m[1]
				}
			}
			cands = append(cands, cand{d, rel, doc})
		}
	}
	for _, c := range cands {
		if count[c.d.Name] != 1 {
			continue
		}
		if len(SymbolNames(c.d.Name)) == 1 {
			byName = append(byName, defQuery{c.d.Name, c.rel, c.d.StartLine})
		}
		if c.doc == "" {
			continue
		}
		drop := map[string]bool{}
		for _, w := range strings.Fields(splitWords(c.d.Name)) {
			drop[w] = true
		}
		var words []string
		for _, w := range strings.Fields(strings.ToLower(c.doc)) {
			w = strings.Trim(w, ".,:;()'\"`")
			if w != "" && !drop[w] && !strings.Contains(w, strings.ToLower(c.d.Name)) {
				words = append(words, w)
			}
		}
		if len(words) >= 3 {
			byDoc = append(byDoc, defQuery{strings.Join(words, " "), c.rel, c.d.StartLine})
		}
	}
	// A doc text that several definitions share ("Sets the text." on
	// every setter once the name is removed) has no single answer:
	// those queries are left out.
	seen := map[string]int{}
	for _, q := range byDoc {
		seen[q.text]++
	}
	uniq := byDoc[:0]
	for _, q := range byDoc {
		if seen[q.text] == 1 {
			uniq = append(uniq, q)
		}
	}
	return byName, uniq
}

// docCommentAbove returns the first sentence of the comment block that
// ends right above line start (1-based), skipping annotation, decorator
// and attribute lines (@Override, #[derive(...)]): /** … */, /* … */,
// ///, //! and // lines. "" when there is none.
func docCommentAbove(lines []string, start int) string {
	i := start - 2
	for i >= 0 {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "@") || strings.HasPrefix(l, "#[") {
			i--
			continue
		}
		break
	}
	var block []string
	switch {
	case i >= 0 && strings.HasSuffix(strings.TrimSpace(lines[i]), "*/"):
		j := i
		for j >= 0 && !strings.Contains(lines[j], "/*") {
			j--
		}
		if j < 0 || !strings.HasPrefix(strings.TrimSpace(lines[j]), "/*") {
			return "" // a comment after code (#define X 1 /* … */) documents that line
		}
		block = lines[j : i+1]
	case i >= 0 && strings.HasPrefix(strings.TrimSpace(lines[i]), "//"):
		j := i
		for j > 0 && strings.HasPrefix(strings.TrimSpace(lines[j-1]), "//") {
			j--
		}
		block = lines[j : i+1]
	default:
		return ""
	}
	var words []string
	for _, l := range block {
		l = strings.TrimSpace(l)
		for _, p := range []string{"/**", "/*!", "/*", "///", "//!", "//", "*/", "*"} {
			l = strings.TrimPrefix(l, p)
		}
		l = strings.TrimSpace(strings.TrimSuffix(l, "*/"))
		if strings.HasPrefix(l, "@") && len(words) > 0 {
			break // Javadoc / JSDoc block tags end the description
		}
		if l == "" {
			if len(words) > 0 {
				break // the first paragraph
			}
			continue
		}
		words = append(words, strings.Fields(l)...)
	}
	text := strings.Join(words, " ")
	if k := strings.Index(text, ". "); k >= 0 {
		text = text[:k+1]
	}
	// Inline markup: <p>, {@code x}, `x`.
	text = htmlTag.ReplaceAllString(text, " ")
	text = strings.NewReplacer("{@code ", "", "{@link ", "", "{@linkplain ", "", "}", "").Replace(text)
	return text
}

var htmlTag = regexp.MustCompile(`</?[a-zA-Z][^>]*>`)

// successAt is the share of queries whose definition is in the top k.
func successAt(t *testing.T, col *engine.Collection, root string, qs []defQuery, k int) float64 {
	hit := 0
	for _, q := range qs {
		res, err := Search(context.Background(), col, contract.Query{Text: q.text, TopK: k, Mode: contract.Lexical})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			if q.found(root, h) {
				hit++
				break
			}
		}
	}
	return float64(hit) / float64(max(1, len(qs)))
}

// copySample copies a seeded sample of a corpus into a temporary root
// (file names made unique), returning it and the relative paths.
func copySample(t *testing.T, corpus, ext string, n int) (string, []string) {
	files := corpusSample(t, corpus, ext, n)
	root := t.TempDir()
	var rels []string
	for i, p := range files {
		src, err := os.ReadFile(p)
		if err != nil || len(src) > 200<<10 {
			continue
		}
		rel := filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(p)), fmt.Sprintf("%s_%d%s", strings.TrimSuffix(filepath.Base(p), ext), i, ext)))
		write(t, root, rel, string(src))
		rels = append(rels, rel)
	}
	return root, rels
}

// measureQuality indexes root (with the structural chunker, or the
// tree-sitter one) into a fresh collection and returns name success@1
// and docstring success@5.
func measureQuality(t *testing.T, root string, structural bool, byName, byDoc []defQuery) (float64, float64) {
	useLang = !structural
	defer func() { useLang = true }()
	col, mf := openTestCollection(t)
	if _, err := Index(context.Background(), col, mf, root, Options{}, Progress{}); err != nil {
		t.Fatal(err)
	}
	return successAt(t, col, root, byName, 1), successAt(t, col, root, byDoc, 5)
}

// Search quality on a sample of the Python standard library, lexical,
// with the tree-sitter chunks (definitions carry names) against the
// structural chunker they replaced: find_definition success@1 from the
// symbol tables, and docstring success@5.
func TestSearchQualityPython(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes a corpus sample twice")
	}
	root, rels := copySample(t, pythonStdlib, ".py", 120)
	byName, byDoc := defQueries(t, root, rels)
	n0, d0 := measureQuality(t, root, true, byName, byDoc)
	n1, d1 := measureQuality(t, root, false, byName, byDoc)
	t.Logf("%d files; find_definition success@1 (%d queries): structural %.3f, tree-sitter %.3f; docstring success@5 (%d queries): structural %.3f, tree-sitter %.3f",
		len(rels), len(byName), n0, n1, len(byDoc), d0, d1)
	if len(byName) < 100 || len(byDoc) < 50 {
		t.Fatalf("only %d name and %d docstring queries", len(byName), len(byDoc))
	}
	if n1 <= n0 || n1 < 0.8 {
		t.Errorf("find_definition success@1 %.3f (structural %.3f)", n1, n0)
	}
	if d1 < d0-0.02 {
		t.Errorf("docstring success@5 fell: %.3f → %.3f", d0, d1)
	}
}

// find_definition success@1 on the other corpora present (see
// TestChunkCorpora), tree-sitter chunks against structural ones.
func TestSearchQualityCorpora(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes corpus samples twice")
	}
	for _, tc := range []struct{ name, root, ext string }{
		{"ts", filepath.Join(codeCorpora(), "typescript"), ".ts"},
		{"rs", filepath.Join(codeCorpora(), "rust"), ".rs"},
		{"java", filepath.Join(codeCorpora(), "java"), ".java"},
		{"c", filepath.Join(codeCorpora(), "c"), ".c"},
		{"cc", filepath.Join(codeCorpora(), "cpp"), ".cc"},
		{"js", "/usr/lib/node_modules/npm", ".js"},
		{"h", "/usr/include", ".h"},
		{"hpp", "/usr/include", ".hpp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, rels := copySample(t, tc.root, tc.ext, 120)
			byName, byDoc := defQueriesLang(t, root, rels, Lang(tc.ext))
			n0, d0 := measureQuality(t, root, true, byName, byDoc)
			n1, d1 := measureQuality(t, root, false, byName, byDoc)
			t.Logf("%s: %d files; find_definition success@1 (%d queries): structural %.3f, tree-sitter %.3f; doc-comment success@5 (%d queries): structural %.3f, tree-sitter %.3f",
				tc.root, len(rels), len(byName), n0, n1, len(byDoc), d0, d1)
			if len(byName) >= 30 && n1 <= n0 {
				t.Errorf("find_definition success@1 %.3f, structural %.3f", n1, n0)
			}
			if len(byDoc) >= 30 && d1 < d0-0.02 {
				t.Errorf("doc-comment success@5 fell: %.3f → %.3f", d0, d1)
			}
		})
	}
}
