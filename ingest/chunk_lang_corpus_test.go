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
	return corpusSampleMax(t, root, ext, n, 0)
}

// corpusSampleMax is corpusSample over the files of at most maxBytes
// bytes (every file when maxBytes is 0).
func corpusSampleMax(t *testing.T, root, ext string, n int, maxBytes int64) []string {
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
			if maxBytes > 0 {
				if fi, err := d.Info(); err != nil || fi.Size() > maxBytes {
					return nil
				}
			}
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
		n = 60
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

// codeCorpora is where scripts/fetch-code-corpora.sh lays its trees.
func codeCorpora() string {
	if d := os.Getenv("STRATA_CODE_CORPORA"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "strata", "code-corpora")
}

// On every corpus present (the fetch script's TypeScript and Rust, npm's
// JavaScript, the system's C and C++ headers): spans are sorted, disjoint
// and valid UTF-8, every top-level definition with a body starts in
// exactly one chunk, which carries its symbol (or is a piece of it), and
// each definition's first chunk contains its name.
func TestChunkCorpora(t *testing.T) {
	for _, tc := range []struct{ root, ext string }{
		{filepath.Join(codeCorpora(), "typescript"), ".ts"},
		{filepath.Join(codeCorpora(), "rust"), ".rs"},
		{"/usr/lib/node_modules/npm", ".js"},
		{"/usr/include", ".h"},
		{"/usr/include", ".hpp"},
		{filepath.Join(codeCorpora(), "java"), ".java"},
		{filepath.Join(codeCorpora(), "c"), ".c"},
		{filepath.Join(codeCorpora(), "cpp"), ".cc"},
	} {
		t.Run(strings.TrimPrefix(tc.ext, "."), func(t *testing.T) {
			n, maxBytes := 150, int64(0)
			if testing.Short() {
				// 20 files of at most 32 KiB: the race run's cost grows
				// with the file (definitions × chunks).
				n, maxBytes = 20, 32<<10
			}
			var o Options
			o.EnsureDefaults()
			var defs int
			for _, path := range corpusSampleMax(t, tc.root, tc.ext, n, maxBytes) {
				src, err := os.ReadFile(path)
				if err != nil || int64(len(src)) > o.MaxFileBytes {
					continue
				}
				f, err := lang.Parse(LangOf(path, src), src)
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				lines := NewLines(src)
				cs := ChunkFile(path, src, o)
				prev := 0
				// named: for each symbol, whether one of its chunks holds
				// its name (a split declaration may hold it only at the end:
				// C's "typedef enum { ... } Name;").
				named := map[string]bool{}
				var order []Chunk
				for _, c := range cs {
					if c.StartLine <= prev || c.EndLine < c.StartLine || c.EndLine > lines.N() {
						t.Fatalf("%s: chunk %+v after line %d", path, c, prev)
					}
					prev = c.EndLine
					span := lines.Span(c.StartLine, c.EndLine)
					if utf8.Valid(src) && !utf8.Valid(span) {
						t.Fatalf("%s: chunk %+v is not valid UTF-8", path, c)
					}
					if c.Symbol != "" && c.Kind != "decl" && len(c.Names) > 0 {
						if _, seen := named[c.Symbol]; !seen {
							order = append(order, c)
						}
						named[c.Symbol] = named[c.Symbol] || strings.Contains(string(span), c.Names[0])
					}
				}
				for _, c := range order {
					if !named[c.Symbol] {
						t.Errorf("%s: no chunk of %+v contains its name", path, c)
					}
				}
				for _, d := range f.Defs {
					if d.Container != "" || d.Signature || d.Kind == "constant" || d.Kind == "variable" || d.Kind == "field" || d.Kind == "declaration" {
						continue
					}
					defs++
					var in []Chunk
					for _, c := range cs {
						if c.StartLine <= d.StartLine && d.StartLine <= c.EndLine {
							in = append(in, c)
						}
					}
					// Definitions sharing a line merge into one chunk
					// that names them all.
					if len(in) != 1 || (in[0].Symbol != d.Symbol && !contains(in[0].Names, d.Name)) {
						t.Errorf("%s:%d: top-level %s %s is in chunks %+v", path, d.StartLine, d.Kind, d.Symbol, in)
					}
				}
			}
			t.Logf("%s: %d top-level definitions", tc.root, defs)
		})
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
