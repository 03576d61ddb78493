package code

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
)

func TestMatch(t *testing.T) {
	as := []Answer{{File: "strings/strings.go", From: 10, To: 20}, {File: "bytes/bytes.go", From: 5, To: 6}}
	for _, c := range []struct {
		hits []HitSpan
		want int
	}{
		{[]HitSpan{{"strings/strings.go", 1, 9}, {"strings/strings.go", 20, 30}}, 2}, // touches the last line
		{[]HitSpan{{"strings/x.go", 10, 20}, {"bytes/bytes.go", 1, 4}}, 0},
		{[]HitSpan{{"bytes/bytes.go", 6, 6}}, 1},
		{nil, 0},
	} {
		if got := Match(as, c.hits); got != c.want {
			t.Errorf("Match(%v) = %d, want %d", c.hits, got, c.want)
		}
	}
}

func TestFirstSentence(t *testing.T) {
	for _, c := range [][3]string{
		{"ToUpper returns s with all Unicode letters mapped to their upper case.\n", "ToUpper", "returns s with all Unicode letters mapped to their upper case"},
		{"A Reader implements the io.Reader interface. More text.", "Reader", "implements the io.Reader interface"},
		{"Close closes it.", "Close", ""}, // fewer than 4 words left
	} {
		if got := firstSentence(c[0], c[1]); got != c[2] {
			t.Errorf("firstSentence(%q) = %q, want %q", c[0], got, c[2])
		}
	}
}

// TestCommittedAnswers: the committed answer files are what Resolve and
// DrawDocSentence produce against this GOROOT (when it is the Go release
// they were resolved with), and the intent set has at least 150 queries.
func TestCommittedAnswers(t *testing.T) {
	qs, err := ReadTSV("intent/queries.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) < 150 {
		t.Fatalf("%d intent queries, want ≥ 150", len(qs))
	}
	var f struct {
		GoVersion string  `json:"go_version"`
		Queries   []Query `json:"queries"`
	}
	b, err := os.ReadFile("intent/answers.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Queries) != len(qs) {
		t.Fatalf("answers.json has %d queries, queries.tsv %d: run strata-codebench resolve", len(f.Queries), len(qs))
	}
	if testing.Short() {
		t.Skip("resolving against GOROOT/src parses about 100 packages")
	}
	if f.GoVersion != runtime.Version() {
		t.Skipf("answers resolved with %s, running %s", f.GoVersion, runtime.Version())
	}
	r := NewResolver(filepath.Join(runtime.GOROOT(), "src"))
	for i := range qs {
		if err := r.Resolve(&qs[i]); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(qs[i], f.Queries[i]) {
			t.Fatalf("query %d: resolved %+v, committed %+v", i, qs[i], f.Queries[i])
		}
	}
}

func TestPythonSpan(t *testing.T) {
	src := "import os\n\n@decorator\n@other(1)\ndef top(a,\n        b):\n    x = 1\n\n    # tail comment\n    return x\n\n# between\nclass Box:\n    \"\"\"A box.\"\"\"\n\n    def open(self):\n        pass\n\n    @property\n    def size(self):\n\treturn 2\n\ndef open():\n    pass\n"
	for _, c := range []struct {
		sym      string
		from, to int
	}{
		{"top", 3, 10},
		{"Box", 13, 21},
		{"Box.open", 16, 17},
		{"Box.size", 19, 21},
		{"open", 23, 24},
	} {
		from, to, err := PythonSpan([]byte(src), c.sym)
		if err != nil || from != c.from || to != c.to {
			t.Errorf("PythonSpan(%s) = %d, %d, %v; want %d, %d", c.sym, from, to, err, c.from, c.to)
		}
	}
	for _, sym := range []string{"missing", "Box.close", "top.x", ""} {
		if _, _, err := PythonSpan([]byte(src), sym); err == nil {
			t.Errorf("PythonSpan(%q): no error", sym)
		}
	}
}

func FuzzPythonSpan(f *testing.F) {
	f.Add([]byte("class A:\n    def b(self):\n        pass\n"), "A.b")
	f.Add([]byte("def f():\n\tpass\n  \n# c\n"), "f")
	f.Fuzz(func(t *testing.T, src []byte, sym string) {
		from, to, err := PythonSpan(src, sym)
		if err == nil && (from < 1 || to < from) {
			t.Fatalf("span %d..%d", from, to)
		}
	})
}
