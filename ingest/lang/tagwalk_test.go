//go:build cgo

package lang

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
	"unsafe"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/stratasearch/strata/internal/testenv"
)

// TestNodeLayout: nodeLayout reads a binding's *sitter.Node as the
// binding lays it out (the TSNode, then the tree).
func TestNodeLayout(t *testing.T) {
	g, err := grammarFor("python")
	if err != nil {
		t.Fatal(err)
	}
	tree, err := g.parse([]byte("def f():\n    return g(1)\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	root := tree.RootNode()
	for _, n := range []*sitter.Node{root, root.NamedChild(0), root.NamedChild(0).ChildByFieldName("name")} {
		l := (*nodeLayout)(unsafe.Pointer(n))
		if l.t != tree || l.c != rawNode(n) {
			t.Fatalf("node %s: layout tree %p, want %p", n.Type(), l.t, tree)
		}
		m := (*sitter.Node)(unsafe.Pointer(&nodeLayout{l.c, tree}))
		if rawStartByte(m) != n.StartByte() || m.EndByte() != n.EndByte() || m.String() != n.String() || m.Parent() != n.Parent() {
			t.Fatalf("node %s rebuilt from its layout: %s, parent %v", n.Type(), m.String(), m.Parent())
		}
	}
}

// tagWalkSnippets are Python inputs that exercise each pattern of
// queries/python.scm and the odd trees around them.
var tagWalkSnippets = []string{
	"class A(B, C, mod.D, *E, metaclass=M):\n    x = 1\n    y: int = 2\n    a = b = 3\n    p, q = 1, 2\n    def f(self): return g(x) + self.h(y)\n",
	"f = lambda x: x\nF: int = 3\nG = H = lambda: 0\na, b = 1, 2\n(c) = 4\nmatch = 5\nprint(1)\nx.y.z(2)\nf()()\n(g)(3)\n",
	"@dec\nclass K:\n    @property\n    def p(self): pass\n    class Inner(Base):\n        z = 1\n",
	"def outer():\n    def inner(): pass\n    v = lambda: 1\n    return inner()\n",
	"class Broken(:\n    x = \ndef g(\n  y = 1\nz = [\n",
	"if True:\n    X = 1\nclass E(Exception): pass\nclass N(): pass\nclass P: pass\n",
	"async def a(): await b()\nclass C(A.B[int]): pass\nl = [i for i in range(3)]\ne = x if y else z\n",
	"",
	"\n\n",
	"x = 1; y = 2\nclass D: a = 1; b = 2\n",
}

// checkTagWalk compares Parse's output through the tagWalker with its
// output through the tag query.
func checkTagWalk(t *testing.T, tag string, src []byte, what string) {
	t.Helper()
	walked, err := parsePhases(tag, src, nil, false)
	if err != nil {
		t.Fatalf("%s: walk: %v", what, err)
	}
	queried, err := parsePhases(tag, src, nil, true)
	if err != nil {
		t.Fatalf("%s: query: %v", what, err)
	}
	if a, b := fmt.Sprintf("%+v", *walked), fmt.Sprintf("%+v", *queried); a != b {
		a, b = dump(walked), dump(queried)
		t.Fatalf("%s: tag walk and tag query differ:\nwalk:\n%s\nquery:\n%s", what, a, b)
	}
}

// walkedLangs are the languages that have a tagWalker.
var walkedLangs = []string{"python", "java", "rust"}

// TestTagWalkMatchesQuery: for every language with a tagWalker, Parse
// through the walk gives what it gives through the tag query, on the
// sample, on seeded mutations of it, on Python snippets for every
// pattern and, when the Python standard library is installed, on a
// seeded sample of its files.
func TestTagWalkMatchesQuery(t *testing.T) {
	for _, tag := range Languages() {
		g, err := grammarFor(tag)
		if err != nil {
			t.Fatal(err)
		}
		want := false
		for _, w := range walkedLangs {
			want = want || w == tag
		}
		if (g.walker != nil) != want {
			t.Fatalf("%s: tag walker %v, want one: %v", tag, g.walker != nil, want)
		}
	}
	for _, tag := range walkedLangs {
		b, err := os.ReadFile(filepath.Join("testdata", samples[tag]))
		if err != nil {
			t.Fatal(err)
		}
		checkTagWalk(t, tag, b, samples[tag])
		// Seeded mutations of the sample: a few bytes changed, dropped
		// or inserted, so that error recovery builds odd trees.
		rng := rand.New(rand.NewSource(23))
		muts := 200
		if testing.Short() {
			muts = 60
		}
		for i := 0; i < muts; i++ {
			m := append([]byte(nil), b...)
			for k := 0; k < 1+rng.Intn(8); k++ {
				j := rng.Intn(len(m))
				switch c := byte(rng.Intn(128)); rng.Intn(3) {
				case 0:
					m[j] = c
				case 1:
					m = append(m[:j], m[j+1:]...)
				default:
					m = append(m[:j], append([]byte{c}, m[j:]...)...)
				}
			}
			checkTagWalk(t, tag, m, fmt.Sprintf("%s mutation %d", tag, i))
		}
	}
	for i, s := range tagWalkSnippets {
		checkTagWalk(t, "python", []byte(s), fmt.Sprintf("snippet %d", i))
	}
	var files []string
	filepath.WalkDir("/usr/lib/python3.11", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".py") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		t.Log("no /usr/lib/python3.11: the corpus part is left out")
		return
	}
	sort.Strings(files)
	n := 60
	if testing.Short() {
		n = 15
	}
	rng := rand.New(rand.NewSource(23))
	for i := 0; i < n; i++ {
		p := files[rng.Intn(len(files))]
		src, err := os.ReadFile(p)
		if err != nil || len(src) > 256<<10 {
			continue
		}
		checkTagWalk(t, "python", src, p)
	}
}

// FuzzTagWalk: on any input, in any language with a tagWalker, Parse
// through the walk gives what it gives through the tag query. Inputs
// over 8 KiB are left out: error recovery on large random text takes
// tree-sitter seconds per parse.
func FuzzTagWalk(f *testing.F) {
	for i, tag := range walkedLangs {
		if b, err := os.ReadFile(filepath.Join("testdata", samples[tag])); err == nil {
			f.Add(uint8(i), b)
		}
	}
	for _, s := range tagWalkSnippets {
		f.Add(uint8(0), []byte(s))
	}
	f.Fuzz(func(t *testing.T, lang uint8, src []byte) {
		if len(src) > 8<<10 {
			return
		}
		checkTagWalk(t, walkedLangs[int(lang)%len(walkedLangs)], src, "input")
	})
}

// BenchmarkTagWalkAB parses every file of a corpus (STRATA_LANG_CORPUS
// as for BenchmarkParseAB; its language needs a tagWalker) twice in
// turn on one locked thread, once through the tag query and once
// through the walk, the order swapped file by file, and reports thread
// CPU ms per file of the match-finding step (Phases.Query) and of the
// whole Parse for each.
//
//	STRATA_LANG_CORPUS=python:/usr/lib/python3.11:.py \
//	    go test -run XXX -bench BenchmarkTagWalkAB -benchtime 1x ./ingest/lang/
func BenchmarkTagWalkAB(b *testing.B) {
	spec := strings.SplitN(os.Getenv("STRATA_LANG_CORPUS"), ":", 3)
	if len(spec) != 3 {
		b.Skip("STRATA_LANG_CORPUS=lang:dir:.ext[,.ext] not set")
	}
	tag, root, exts := spec[0], spec[1], strings.Split(spec[2], ",")
	if g, err := grammarFor(tag); err != nil || g.walker == nil {
		b.Skipf("%s has no tag walker (%v)", tag, err)
	}
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
	query := Phases{Clock: testenv.ThreadCPU}
	walk := Phases{Clock: testenv.ThreadCPU}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k, src := range srcs {
			for j := 0; j < 2; j++ {
				if (k+j)%2 == 0 {
					parsePhases(tag, src, &query, true)
				} else {
					parsePhases(tag, src, &walk, false)
				}
			}
		}
	}
	n := float64(b.N * len(srcs))
	ms := func(d time.Duration) float64 { return d.Seconds() * 1e3 / n }
	total := func(p Phases) time.Duration { return p.Parse + p.Query + p.Build + p.Free }
	b.ReportMetric(ms(query.Query), "query-ms/file")
	b.ReportMetric(ms(walk.Query), "walk-ms/file")
	b.ReportMetric(ms(total(query)), "total-query-ms/file")
	b.ReportMetric(ms(total(walk)), "total-walk-ms/file")
	b.ReportMetric(ms(query.Parse), "parse-ms/file")
}
