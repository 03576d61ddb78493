package bench

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stratasearch/strata/bench/code"
	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/ingest"
)

// naiveGrep is the reference for runRg: every line of the files under
// root (paths sorted, then line numbers) that q matches, read with the
// standard library.
func naiveGrep(t *testing.T, root string, q RipgrepQuery) []code.HitSpan {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	goOnly, word, fold := false, false, false
	for _, f := range q.RgFlags {
		switch f {
		case "go":
			goOnly = true
		case "-w":
			word = true
		case "-i":
			fold = true
		}
	}
	pat := regexp.QuoteMeta(q.Pattern)
	if word {
		pat = `\b` + pat + `\b`
	}
	if fold {
		pat = "(?i)" + pat
	}
	re := regexp.MustCompile(pat)
	var hs []code.HitSpan
	for _, f := range files {
		if goOnly && !strings.HasSuffix(f, ".go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if re.MatchString(l) {
				hs = append(hs, code.HitSpan{File: f, From: i + 1, To: i + 1})
			}
		}
	}
	return hs
}

// TestRipgrepSuite runs rg and Strata on the small tree: rg's matches
// must equal the naive grep's, success@5 of both engines must equal the
// counts computed from the reference answers, and E_stale must be 0.
func TestRipgrepSuite(t *testing.T) {
	root, _, _ := writeTree(t)
	res := code.NewResolver(root)
	var qs []RipgrepQuery
	for _, c := range []struct{ pkg, name, phrase string }{
		{"p0", "F2_3", "returns 6"}, // phrase also in p1/f3.go (F3_2), after p0/f2.go in path order
		{"p1", "F1_4", "returns 4"}, // also F2_2 and F4_1 in p0: 3 lines, all among the first 5
		{"p0", "F4_0", "returns 0"}, // 9 functions return 0; p0/f0.go's five fill rg's first 5
		{"p1", "F5_2", "returns 10"},
	} {
		q := code.Query{Text: c.name, Specs: []string{c.pkg + ":" + c.name}}
		if err := res.Resolve(&q); err != nil {
			t.Fatal(err)
		}
		qs = append(qs,
			RipgrepQuery{Set: "identifier", Strata: c.pkg + "." + c.name, Pattern: c.name, RgFlags: []string{"-F", "-w", "-t", "go"}, Answers: q.Answers},
			RipgrepQuery{Set: "phrase", Strata: `"` + c.phrase + `"`, Syntax: "operators", Pattern: c.phrase, RgFlags: []string{"-F", "-i"}, Answers: q.Answers})
	}
	// The reference success@5 of rg, per set.
	want := map[string]int{}
	for _, q := range qs {
		hs, _, stale, err := runRg(context.Background(), root, q)
		if err != nil {
			t.Fatal(err)
		}
		ref := naiveGrep(t, root, q)
		if len(hs) != len(ref) || stale != 0 {
			t.Fatalf("%s %q: rg %v (stale %d), reference %v", q.Set, q.Pattern, hs, stale, ref)
		}
		for i := range hs {
			if hs[i] != ref[i] {
				t.Fatalf("%s %q: rg %v, reference %v", q.Set, q.Pattern, hs, ref)
			}
		}
		if k := code.Match(q.Answers, ref[:min(5, len(ref))]); k > 0 {
			want[q.Set]++
		}
	}
	if want["phrase"] != 3 || want["identifier"] != 4 {
		t.Fatalf("reference success counts %v, want identifier 4, phrase 3 (the tree changed?)", want)
	}
	cfg := Config{OutDir: t.TempDir(), WorkDir: t.TempDir(), Ripgrep: &RipgrepParams{Root: root, Queries: qs}, Command: "TestRipgrepSuite"}
	if testing.Verbose() {
		cfg.Log = os.Stderr
	}
	r, err := Run(context.Background(), cfg, []string{"ripgrep"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Ripgrep) != 1 || len(r.Ripgrep[0].Sets) != 2 {
		t.Fatalf("runs %+v", r.Ripgrep)
	}
	for _, s := range r.Ripgrep[0].Sets {
		if s.Queries != 4 || s.RgP50Ms <= 0 || s.StrataP50Ms <= 0 || s.StrataHits == 0 || s.RgHits == 0 {
			t.Errorf("%s: %+v", s.Set, s)
		}
		if s.RgEStale != 0 || s.StrataEStale != 0 {
			t.Errorf("%s: E_stale rg %d strata %d", s.Set, s.RgEStale, s.StrataEStale)
		}
		if got := s.RgS5 * 4; got != float64(want[s.Set]) {
			t.Errorf("%s: rg success@5 %.2f, reference %d of 4", s.Set, s.RgS5, want[s.Set])
		}
		if s.Set == "identifier" && s.StrataS5 != 1 {
			t.Errorf("identifier: strata success@5 %.2f, want 1 (each name is declared once)", s.StrataS5)
		}
	}
	rep, _ := os.ReadFile(filepath.Join(cfg.OutDir, "report.md"))
	if !strings.Contains(string(rep), "ripgrep") || !strings.Contains(string(rep), "success@5") {
		t.Errorf("report.md lacks the ripgrep ratios:\n%s", rep)
	}
}

func TestPhraseOf(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"flushes any buffered XML to the underlying writer", 4, "flushes any buffered XML"},
		{"returns x.", 4, "returns x"},
		{`reports "quoted" words here`, 3, "reports quoted words"},
		{"", 4, ""},
	} {
		if got := PhraseOf(c.in, c.n); got != c.want {
			t.Errorf("PhraseOf(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// TestRipgrepQueries derives both sets from the committed doc-sentence
// file: one identifier and at most one phrase query per declaration.
func TestRipgrepQueries(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	qs, err := RipgrepQueries(repo, 10)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, q := range qs {
		n[q.Set]++
		if len(q.Answers) == 0 || q.Pattern == "" {
			t.Errorf("%+v", q)
		}
		if q.Set == "phrase" && (len(strings.Fields(q.Pattern)) > PhraseWords || q.Strata != `"`+q.Pattern+`"`) {
			t.Errorf("phrase %+v", q)
		}
	}
	if n["identifier"] != 10 || n["phrase"] < 1 || n["phrase"] > 10 {
		t.Errorf("sets %v", n)
	}
}

// TestStrataHitStale: the suite's E_stale check counts a hit whose span
// changed on disk, or whose file is gone, and passes an unchanged one.
func TestStrataHitStale(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.go")
	if err := os.WriteFile(p, []byte("package a\n\nfunc A() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	uri := ingest.FileURI(p) + "#L3-L3"
	h := contract.Envelope{SourceURI: uri, VersionHash: engine.VersionHash([]byte("func A() {}\n"))}
	if strataHitStale(h) {
		t.Fatal("unchanged span counted stale")
	}
	if err := os.WriteFile(p, []byte("package a\n\nfunc B() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !strataHitStale(h) {
		t.Error("edited span not counted stale")
	}
	os.Remove(p)
	if !strataHitStale(h) {
		t.Error("missing file not counted stale")
	}
}
