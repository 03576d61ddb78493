package highlight

import (
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/stratasearch/strata/engine/text"
)

// analyzers returns the engine's two analyzers (AnalyzerCode,
// AnalyzerProse).
func analyzers(t testing.TB) (code, prose *text.Analyzer) {
	t.Helper()
	code, err := text.New(text.CodeOptions())
	if err != nil {
		t.Fatal(err)
	}
	prose, err = text.New(text.ProseOptions())
	if err != nil {
		t.Fatal(err)
	}
	return code, prose
}

func TestHighlightSpans(t *testing.T) {
	codeC, proseC := analyzers(t)
	for _, tc := range []struct {
		name    string
		c       *text.Analyzer
		query   string
		content string
		want    []string // highlighted substrings, in order
	}{
		{"snake", codeC, "userName", "var user_name = 1", []string{"user", "name"}},
		{"camel-parts-merge", codeC, "userName", "x := getUserName()", []string{"UserName"}},
		{"whole", codeC, "getUserName", "getUserName(u)", []string{"getUserName"}},
		{"part-only", codeC, "user", "getUserName(u) and user", []string{"User", "user"}},
		{"case", codeC, "HTTP", "an HTTPRequest over http", []string{"HTTP", "http"}},
		{"prefix", codeC, "alph*", "alpha alphabet beta", []string{"alpha", "alphabet"}},
		{"phrase", codeC, `"open file"`, "please open the file; open file now", []string{"open", "file", "open", "file"}}, // terms, not phrase-aware
		{"excluded", codeC, "alpha -beta", "alpha beta", []string{"alpha"}},
		{"stem", proseC, "running", "He runs and ran; running fast", []string{"runs", "running"}},
		{"stopword", proseC, "the cat", "the cat sat", []string{"cat"}},
		{"utf8", proseC, "café naïve", "Un café très naïve, CAFÉ", []string{"café", "naïve", "CAFÉ"}},
		{"none", codeC, "zzz", "nothing here", nil},
	} {
		spans := New(tc.c, tc.query).Spans(tc.content)
		var got []string
		for i, s := range spans {
			if s.Start < 0 || s.End > len(tc.content) || s.Start >= s.End {
				t.Fatalf("%s: bad span %v", tc.name, s)
			}
			if !utf8.RuneStart(tc.content[s.Start]) || (s.End < len(tc.content) && !utf8.RuneStart(tc.content[s.End])) {
				t.Errorf("%s: span %v cuts a UTF-8 sequence", tc.name, s)
			}
			if i > 0 && s.Start <= spans[i-1].End {
				t.Errorf("%s: spans overlap or touch: %v", tc.name, spans)
			}
			got = append(got, tc.content[s.Start:s.End])
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q in %q highlights %q, want %q", tc.name, tc.query, tc.content, got, tc.want)
		}
	}
}

// FuzzSpans: for any query and content, spans lie inside the content, on
// rune boundaries, sorted, neither overlapping nor touching, and each
// covers at least one token of the content.
func FuzzSpans(f *testing.F) {
	code, prose := analyzers(f)
	f.Add("userName", "var user_name = getUserName()", false)
	f.Add("alph* -beta", "alpha alphabet beta", false)
	f.Add(`"open file" café`, "Un café très naïve, CAFÉ; open file", true)
	f.Fuzz(func(t *testing.T, query, content string, useProse bool) {
		an := code
		if useProse {
			an = prose
		}
		spans := New(an, query).Spans(content)
		for i, s := range spans {
			if s.Start < 0 || s.End > len(content) || s.Start >= s.End {
				t.Fatalf("span %v outside content of %d bytes", s, len(content))
			}
			if utf8.ValidString(content) && (!utf8.RuneStart(content[s.Start]) || s.End < len(content) && !utf8.RuneStart(content[s.End])) {
				t.Fatalf("span %v cuts a UTF-8 sequence of %q", s, content)
			}
			if i > 0 && s.Start <= spans[i-1].End {
				t.Fatalf("spans not sorted and disjoint: %v", spans)
			}
		}
	})
}
