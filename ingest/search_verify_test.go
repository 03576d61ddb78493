package ingest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestSearchVerifiesReturnedHitsOnly: SearchWith verifies the hits it
// returns, not every candidate it ranks. A stale file below the page is
// never read (it is not in Dropped); a stale hit on the page is dropped
// and the next candidate, in rank order, takes its place. With the
// engine verifying each search's whole candidate list, the stale file
// ranked sixth was read and listed in Dropped of a three-hit page.
func TestSearchVerifiesReturnedHitsOnly(t *testing.T) {
	root := t.TempDir()
	const n = 12
	body := func(i int, word string) string {
		// File i mentions the word n-i times: rank order is file order.
		return fmt.Sprintf("package p\n\n// F%02d: %s\nfunc F%02d() {}\n", i, strings.Repeat(word+" ", n-i), i)
	}
	for i := range n {
		write(t, root, fmt.Sprintf("f%02d.go", i), body(i, "wombat"))
	}
	col, mf := openTestCollection(t)
	ctx := context.Background()
	if _, err := Index(ctx, col, mf, root, Options{}, Progress{}); err != nil {
		t.Fatal(err)
	}
	pathOf := func(h contract.Envelope) string { p, _ := h.Metadata[MetaPath].Str(); return p }
	all, err := Search(ctx, col, contract.Query{Text: "wombat", TopK: n})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Hits) != n {
		t.Fatalf("want %d hits, got %d", n, len(all.Hits))
	}
	for i, h := range all.Hits {
		if want := fmt.Sprintf("f%02d.go", i); pathOf(h) != want {
			t.Fatalf("unverified rank %d: %s, want %s", i, pathOf(h), want)
		}
	}
	page := func() contract.Result {
		t.Helper()
		r, err := Search(ctx, col, contract.Query{Text: "wombat", TopK: 3, Verify: true})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	check := func(what string, r contract.Result, hits []int, dropped []int) {
		t.Helper()
		var got, gotDropped []string
		for _, h := range r.Hits {
			got = append(got, pathOf(h))
		}
		for _, d := range r.Dropped {
			for _, h := range all.Hits {
				if h.DocID == d.DocID {
					gotDropped = append(gotDropped, pathOf(h)+":"+string(d.Reason))
				}
			}
		}
		var want, wantDropped []string
		for _, i := range hits {
			want = append(want, fmt.Sprintf("f%02d.go", i))
		}
		for _, i := range dropped {
			wantDropped = append(wantDropped, fmt.Sprintf("f%02d.go:%s", i, contract.DropStale))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(gotDropped) != fmt.Sprint(wantDropped) {
			t.Errorf("%s: hits %v dropped %v, want hits %v dropped %v", what, got, gotDropped, want, wantDropped)
		}
	}
	check("all fresh", page(), []int{0, 1, 2}, nil)
	write(t, root, "f05.go", body(5, "marmot"))
	check("f05 stale, below the page", page(), []int{0, 1, 2}, nil)
	write(t, root, "f00.go", body(0, "marmot"))
	write(t, root, "f02.go", body(2, "marmot"))
	check("f00 and f02 stale", page(), []int{1, 3, 4}, []int{0, 2})
}
