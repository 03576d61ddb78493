package ingest

import (
	"context"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

func TestExportedSymbol(t *testing.T) {
	for _, c := range []struct {
		sym, rel string
		want     bool
	}{
		{"EqualFold", "strings/strings.go", true},
		{"Builder.WriteString", "strings/builder.go", true},
		{"isSpace", "strings/strings.go", false},
		{"decoder.Read", "encoding/x.go", false},
		{"Reader.fill", "bufio/bufio.go", false},
		{"_helper", "lib/m.py", false},
		{"Path.__init__", "lib/m.py", true},
		{"Path._parts", "lib/m.py", false},
		{"read_text", "lib/m.py", true},
		{"helper", "src/x.ts", true},
	} {
		if got := exportedSymbol(c.sym, c.rel); got != c.want {
			t.Errorf("exportedSymbol(%q, %q) = %v, want %v", c.sym, c.rel, got, c.want)
		}
	}
}

// TestSearchPublicAboveHelper: a prose query ranks the exported function
// above an unexported helper that matches its words as well, and
// Explain.Prior shows the helper's factor; with the priors off the helper
// (shorter, so BM25's first) leads.
func TestSearchPublicAboveHelper(t *testing.T) {
	root := t.TempDir()
	write(t, root, "text/upper.go", "package text\n\n// Upper returns s where we make every letter capital.\nfunc Upper(s string) string { return upperASCII(s) }\n")
	write(t, root, "text/ascii.go", "package text\n\n// upperASCII: make every letter capital.\nfunc upperASCII(s string) string { return s }\n")
	col, mf := openTestCollection(t)
	ctx := context.Background()
	if _, err := Index(ctx, col, mf, root, Options{}, Progress{}); err != nil {
		t.Fatal(err)
	}
	q := contract.Query{Text: "make every letter capital", TopK: 5, Mode: contract.Lexical}
	top := func(o SearchOptions) contract.Envelope {
		t.Helper()
		res, err := SearchWith(ctx, col, q, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) < 2 {
			t.Fatalf("%d hits, want 2", len(res.Hits))
		}
		return res.Hits[0]
	}
	if s, _ := top(SearchOptions{NoPriors: true}).Metadata[MetaSymbol].Str(); s != "upperASCII" {
		t.Fatalf("without priors the top hit is %s; the test needs the helper first by BM25", s)
	}
	h := top(SearchOptions{})
	if s, _ := h.Metadata[MetaSymbol].Str(); s != "Upper" {
		t.Errorf("top hit %s, want Upper", s)
	}
	res, _ := SearchWith(ctx, col, q, SearchOptions{})
	if p := res.Hits[1].Explain.Prior; p != PriorUnexported {
		t.Errorf("helper's prior %g, want %g", p, PriorUnexported)
	}
}
