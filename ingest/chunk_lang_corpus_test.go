package ingest

import (
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stratasearch/strata/ingest/lang"
	"github.com/stratasearch/strata/internal/testenv"
)

// pythonStdlib is the corpus of the property tests.
const pythonStdlib = "/usr/lib/python3.11"

// corpusSample returns a seeded sample of n files under root with the
// extension ext, skipping the test when there are none.
func corpusSample(t *testing.T, root, ext string, n int) []string {
	t.Helper()
	testenv.SkipIfEmulated(t, "reads a real source corpus")
	if !lang.Available() {
		t.Skip("tree-sitter needs cgo")
	}
	var all []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() && strings.HasSuffix(p, ext) {
			all = append(all, p)
		}
		return nil
	})
	if err != nil || len(all) == 0 {
		t.Skipf("no %s corpus at %s", ext, root)
	}
	sort.Strings(all)
	rand.New(rand.NewSource(1)).Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	if len(all) > n {
		all = all[:n]
	}
	return all
}

// pyTopDef is the reference for Python's top-level definitions: a def or
// class statement at column 0.
var pyTopDef = regexp.MustCompile(`^(?:async\s+def|def|class)\s+([A-Za-z_][A-Za-z0-9_]*)`)

// On a sample of the Python standard library: every top-level def and
// class (found by a column-0 line scan, skipping lines inside triple-quoted
// strings) is in exactly one chunk — one that carries its symbol, or a
// piece of it — spans are disjoint and valid UTF-8, and each definition's
// first chunk contains its name.
func TestChunkPythonCorpus(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 150
	}
	files := corpusSample(t, pythonStdlib, ".py", n)
	var o Options
	o.EnsureDefaults()
	var defs, chunks int
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil || int64(len(src)) > o.MaxFileBytes {
			continue
		}
		lines := NewLines(src)
		cs := ChunkFile(path, src, o)
		chunks += len(cs)
		prev := 0
		first := map[string]bool{}
		for _, c := range cs {
			if c.StartLine <= prev || c.EndLine < c.StartLine || c.EndLine > lines.N() {
				t.Fatalf("%s: chunk %+v after line %d", path, c, prev)
			}
			prev = c.EndLine
			span := lines.Span(c.StartLine, c.EndLine)
			if utf8.Valid(src) && !utf8.Valid(span) {
				t.Fatalf("%s: chunk %+v is not valid UTF-8", path, c)
			}
			if c.Symbol != "" && c.Kind != "decl" && !first[c.Symbol] {
				first[c.Symbol] = true
				if !strings.Contains(string(span), c.Names[0]) {
					t.Errorf("%s: chunk %+v does not contain its name", path, c)
				}
			}
		}
		inString := false
		for i := 1; i <= lines.N(); i++ {
			ln := string(lines.Line(i))
			wasInString := inString
			if strings.Count(ln, `"""`)%2 == 1 || strings.Count(ln, `'''`)%2 == 1 {
				inString = !inString
			}
			if wasInString {
				continue
			}
			m := pyTopDef.FindStringSubmatch(ln)
			if m == nil {
				continue
			}
			defs++
			var in []Chunk
			for _, c := range cs {
				if c.StartLine <= i && i <= c.EndLine {
					in = append(in, c)
				}
			}
			if len(in) != 1 || (in[0].Symbol != m[1] && !strings.HasPrefix(in[0].Symbol, m[1]+".")) {
				t.Errorf("%s:%d: top-level %s is in chunks %+v", path, i, m[1], in)
			}
		}
	}
	t.Logf("%d files, %d top-level definitions, %d chunks", len(files), defs, chunks)
}
