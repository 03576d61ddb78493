package engine

import (
	"context"
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/cursor"
)

// shapeCorpus upserts n documents over nFiles source files; every
// document mentions "alpha" a varying number of times so lexical scores
// spread, and carries a seeded random vector.
func shapeCorpus(t *testing.T, c *Collection, n, nFiles int, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	words := []string{"beta", "gamma", "delta", "omega", "kappa", "sigma"}
	var docs []contract.Document
	for i := 0; i < n; i++ {
		var sb strings.Builder
		for j := 0; j <= r.IntN(6); j++ {
			sb.WriteString("alpha ")
		}
		for j := 0; j < 3+r.IntN(20); j++ {
			sb.WriteString(words[r.IntN(len(words))])
			sb.WriteByte(' ')
		}
		v := make([]float32, c.o.Dim)
		for k := range v {
			v[k] = float32(r.NormFloat64())
		}
		f := r.IntN(nFiles)
		docs = append(docs, contract.Document{ID: fmt.Sprintf("d%03d", i), Content: sb.String(), Vector: v,
			SourceURI: fmt.Sprintf("file:///repo/f%02d.go#L%d-L%d", f, i*10+1, i*10+9), Trust: contract.Authoritative})
	}
	mustUpsert(t, c, docs...)
}

func queryVec(dim int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 99))
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// pages follows NextCursor from q (page size q.TopK) until it is empty.
func pages(t *testing.T, c *Collection, q contract.Query) ([][]string, []contract.Result) {
	t.Helper()
	var out [][]string
	var rs []contract.Result
	for i := 0; i < 200; i++ {
		res := mustSearch(t, c, q)
		out = append(out, ids(res.Hits))
		rs = append(rs, res)
		if res.NextCursor == "" {
			return out, rs
		}
		q.Cursor = res.NextCursor
	}
	t.Fatal("cursor never ends")
	return nil, nil
}

func TestCursorPagesConcatenate(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 8, MemTableSizeBytes: -1})
	shapeCorpus(t, c, 120, 30, 1)
	// Half the corpus in a warm segment (HNSW + BM25 section), half hot.
	if err := c.store.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var more []contract.Document
	for i := 0; i < 40; i++ {
		more = append(more, contract.Document{ID: fmt.Sprintf("h%02d", i), Content: strings.Repeat("alpha ", 1+i%5) + "zeta",
			Vector: queryVec(8, uint64(100+i)), SourceURI: fmt.Sprintf("file:///repo/h%02d.go", i%7), Trust: contract.Authoritative})
	}
	mustUpsert(t, c, more...)

	qv := queryVec(8, 3)
	for _, tc := range []struct {
		name string
		q    contract.Query
	}{
		{"lexical", contract.Query{Text: "alpha", Mode: contract.Lexical}},
		{"dense", contract.Query{Vector: qv, Mode: contract.Dense}},
		{"hybrid-default", contract.Query{Text: "alpha zeta", Vector: qv}},
		{"hybrid-rrf", contract.Query{Text: "alpha zeta", Vector: qv, Fusion: contract.FusionParams{Method: "rrf"}}},
		{"lexical-collapse", contract.Query{Text: "alpha", Mode: contract.Lexical, Collapse: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const page, total = 7, 49 // ≤ SegmentEfSearch: HNSW is prefix-stable
			big := tc.q
			big.TopK = total
			want := ids(mustSearch(t, c, big).Hits)
			if len(want) != total {
				t.Fatalf("big query: %d hits", len(want))
			}
			q := tc.q
			q.TopK = page
			var got []string
			seen := map[string]bool{}
			ps, rs := pages(t, c, q)
			for i, p := range ps {
				if rs[i].Epoch != rs[0].Epoch {
					t.Errorf("page %d read epoch %d, page 1 %d", i+1, rs[i].Epoch, rs[0].Epoch)
				}
				for _, id := range p {
					if seen[id] {
						t.Fatalf("page %d repeats %s", i+1, id)
					}
					seen[id] = true
				}
				got = append(got, p...)
				if len(got) >= total {
					break
				}
			}
			if len(got) > total {
				got = got[:total]
			}
			if !slices.Equal(got, want) {
				t.Errorf("pages concatenated ≠ big top-%d:\n got %v\nwant %v", total, got, want)
			}
		})
	}
}

func TestCursorExhaustsAndValidates(t *testing.T) {
	ctx := context.Background()
	db, dir := newDB(t)
	c, err := db.CreateCollection("a", CollectionOptions{Dim: 4, Sync: "none"})
	if err != nil {
		t.Fatal(err)
	}
	shapeCorpus(t, c, 23, 5, 2)
	ps, _ := pages(t, c, contract.Query{Text: "alpha", TopK: 10})
	if n := len(ps); n != 3 || len(ps[2]) != 3 {
		t.Fatalf("pages %v", ps)
	}
	// A full last page: the cursor after it yields an empty page.
	ps, _ = pages(t, c, contract.Query{Text: "alpha", TopK: 23})
	if len(ps) != 2 || len(ps[1]) != 0 {
		t.Fatalf("pages of 23: %d pages", len(ps))
	}

	res := mustSearch(t, c, contract.Query{Text: "alpha", TopK: 5})
	if res.NextCursor == "" {
		t.Fatal("no NextCursor on a full page")
	}
	bad := func(name string, q contract.Query) {
		t.Helper()
		_, err := c.Search(ctx, q)
		var ve *contract.ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, contract.ErrInvalid) || ve.Errors[0].Loc[1] != "cursor" {
			t.Errorf("%s: err = %v, want a validation error at query.cursor", name, err)
		}
	}
	bad("other text", contract.Query{Text: "beta", TopK: 5, Cursor: res.NextCursor})
	bad("other mode", contract.Query{Text: "alpha", Mode: contract.Dense, Vector: queryVec(4, 1), TopK: 5, Cursor: res.NextCursor})
	bad("other principal", contract.Query{Text: "alpha", TopK: 5, Cursor: res.NextCursor,
		Principal: &contract.Principal{Name: "eve", Namespaces: []string{"*"}}})
	b := []byte(res.NextCursor)
	b[len(b)/2] ^= 1
	if b[len(b)/2] == '-' || !isURLByte(b[len(b)/2]) {
		b[len(b)/2] = 'A'
	}
	bad("forged", contract.Query{Text: "alpha", TopK: 5, Cursor: string(b)})
	bad("garbage", contract.Query{Text: "alpha", TopK: 5, Cursor: "AAAA"})
	bad("not base64", contract.Query{Text: "alpha", TopK: 5, Cursor: "!!"})
	// Only top_k and budget may change between pages.
	if _, err := c.Search(ctx, contract.Query{Text: "alpha", TopK: 3, Budget: 1e9, Cursor: res.NextCursor}); err != nil {
		t.Errorf("page size change: %v", err)
	}
	// A cursor of another database does not verify.
	db2, _ := newDB(t)
	c2, _ := db2.CreateCollection("a", CollectionOptions{Dim: 4, Sync: "none"})
	shapeCorpus(t, c2, 23, 5, 2)
	if _, err := c2.Search(ctx, contract.Query{Text: "alpha", TopK: 5, Cursor: res.NextCursor}); !errors.Is(err, contract.ErrInvalid) {
		t.Errorf("cursor of another DB: %v", err)
	}
	// The key survives reopening: the cursor still verifies (at the
	// newest epoch: the retained snapshot died with the DB).
	key1, _ := c.db.CursorKey()
	db.Close()
	db3, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db3.Close()
	c3, err := db3.Collection("a")
	if err != nil {
		t.Fatal(err)
	}
	if key3, err := c3.db.CursorKey(); err != nil || !slices.Equal(key1, key3) {
		t.Errorf("cursor key after reopen differs (%v)", err)
	}
	if _, err := c3.Search(ctx, contract.Query{Text: "alpha", TopK: 5, Cursor: res.NextCursor}); err != nil {
		t.Errorf("cursor after reopen: %v", err)
	}
}

func isURLByte(b byte) bool {
	return b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-' || b == '_'
}

func TestCursorWindowBound(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 4})
	shapeCorpus(t, c, 30, 5, 3)
	q := contract.Query{Text: "alpha", TopK: 10}
	dq := q
	dq.EnsureDefaults()
	key, err := c.db.CursorKey()
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]uint64, 995) // hashes of no real document
	for i := range seen {
		seen[i] = uint64(i)
	}
	q.Cursor = cursor.Encode(cursor.Data{Epoch: c.Epoch(), Fingerprint: c.fingerprint(&dq), Seen: seen}, key)
	res := mustSearch(t, c, q)
	if len(res.Hits) != 5 || res.NextCursor != "" {
		t.Errorf("995 returned + page 10: %d hits, next %q; want 5 and none (MaxTopK window)", len(res.Hits), res.NextCursor)
	}
}

func TestCursorPinnedEpoch(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 4})
	shapeCorpus(t, c, 40, 8, 4)
	q := contract.Query{Text: "alpha", TopK: 10}
	p1 := mustSearch(t, c, q)
	// A new best document arrives after page 1.
	mustUpsert(t, c, contract.Document{ID: "new", Content: strings.Repeat("alpha ", 30), Trust: contract.Authoritative})
	q.Cursor = p1.NextCursor
	p2 := mustSearch(t, c, q)
	if p2.Epoch != p1.Epoch || slices.Contains(ids(p2.Hits), "new") {
		t.Errorf("page 2 at epoch %d (page 1 %d), hits %v: want the pinned epoch", p2.Epoch, p1.Epoch, ids(p2.Hits))
	}
	// Once the pinned snapshot is released (retention expired), the next
	// page reads the newest epoch and still repeats no returned hit.
	c.shape.releaseAll()
	q.Cursor = p2.NextCursor
	p3 := mustSearch(t, c, q)
	if p3.Epoch == p1.Epoch {
		t.Errorf("page 3 at the released epoch %d", p3.Epoch)
	}
	prev := append(ids(p1.Hits), ids(p2.Hits)...)
	for _, id := range ids(p3.Hits) {
		if slices.Contains(prev, id) {
			t.Errorf("page 3 repeats %s", id)
		}
	}
	if len(p3.Hits) != 10 {
		t.Errorf("page 3: %d hits", len(p3.Hits))
	}
}

// TestCursorConcurrent: readers page through while a writer adds and
// deletes documents; every sequence is duplicate-free and every page after
// the first reads the first page's epoch while its snapshot is retained.
func TestCursorConcurrent(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 4})
	shapeCorpus(t, c, 80, 10, 6)
	readers, rounds := 4, 6
	if testing.Short() {
		readers, rounds = 3, 3
	}
	ctx := context.Background()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 40; i++ {
			id := fmt.Sprintf("w%02d", i)
			c.Upsert(ctx, []contract.Document{{ID: id, Content: strings.Repeat("alpha ", 1+i%9), Trust: contract.Authoritative}})
			if i%3 == 0 {
				c.Delete(ctx, []string{fmt.Sprintf("d%03d", i)})
			}
		}
	}()
	errs := make(chan error, readers)
	for r := 0; r < readers; r++ {
		go func() {
			for round := 0; round < rounds; round++ {
				q := contract.Query{Text: "alpha", TopK: 9}
				seen := map[string]bool{}
				var epoch uint64
				for p := 0; ; p++ {
					res, err := c.Search(ctx, q)
					if err != nil {
						errs <- err
						return
					}
					if p == 0 {
						epoch = res.Epoch
					} else if res.Epoch != epoch {
						errs <- fmt.Errorf("page %d at epoch %d, first page %d", p+1, res.Epoch, epoch)
						return
					}
					for _, h := range res.Hits {
						if seen[h.DocID] {
							errs <- fmt.Errorf("duplicate %s", h.DocID)
							return
						}
						seen[h.DocID] = true
					}
					if res.NextCursor == "" {
						break
					}
					q.Cursor = res.NextCursor
				}
			}
			errs <- nil
		}()
	}
	for r := 0; r < readers; r++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	<-done
}

// naiveCollapse keeps at most n hits per file (fragment stripped) in order.
func naiveCollapse(hits []contract.Envelope, n, k int) []string {
	per := map[string]int{}
	var out []string
	for _, h := range hits {
		f, _, _ := strings.Cut(h.SourceURI, "#")
		if h.SourceURI != "" && per[f] >= n {
			continue
		}
		per[f]++
		out = append(out, h.DocID)
		if len(out) == k {
			break
		}
	}
	return out
}

func TestCollapseAgainstNaive(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 4})
	shapeCorpus(t, c, 150, 25, 5)
	// One file dominates the top: 60 strong chunks of dominant.go.
	var dom []contract.Document
	for i := 0; i < 60; i++ {
		dom = append(dom, contract.Document{ID: fmt.Sprintf("dom%02d", i), Content: strings.Repeat("alpha ", 40+i),
			SourceURI: fmt.Sprintf("file:///repo/dominant.go#L%d-L%d", i*5+1, i*5+5), Trust: contract.Authoritative})
	}
	dom = append(dom, contract.Document{ID: "nouri", Content: strings.Repeat("alpha ", 35), Trust: contract.Authoritative},
		contract.Document{ID: "nouri2", Content: strings.Repeat("alpha ", 35) + "beta", Trust: contract.Authoritative})
	mustUpsert(t, c, dom...)
	full := mustSearch(t, c, contract.Query{Text: "alpha", TopK: 1000}).Hits
	for _, n := range []int{1, 2, 3} {
		for _, k := range []int{5, 10, 20} {
			want := naiveCollapse(full, n, k)
			got := mustSearch(t, c, contract.Query{Text: "alpha", TopK: k, Collapse: n})
			if !slices.Equal(ids(got.Hits), want) {
				t.Errorf("collapse %d top %d:\n got %v\nwant %v", n, k, ids(got.Hits), want)
			}
			if len(got.Hits) != k {
				t.Errorf("collapse %d top %d: %d hits, %d distinct files match", n, k, len(got.Hits), 26)
			}
		}
	}
	// Collapse across pages: pages concatenate to the collapsed big list.
	want := naiveCollapse(full, 1, 24)
	ps, _ := pages(t, c, contract.Query{Text: "alpha", TopK: 8, Collapse: 1})
	var got []string
	for _, p := range ps {
		got = append(got, p...)
	}
	if len(got) < 24 || !slices.Equal(got[:24], want) {
		t.Errorf("collapsed pages:\n got %v\nwant %v", got, want)
	}
}

func TestHighlightInSearch(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2})
	mustUpsert(t, c, doc("a", "func getUserName() string { return user_name }", nil),
		doc("b", "ünïcödé user ✓ name", nil))
	res := mustSearch(t, c, contract.Query{Text: "userName", Highlight: true})
	if len(res.Hits) != 2 {
		t.Fatalf("hits %v", ids(res.Hits))
	}
	for _, h := range res.Hits {
		if len(h.Highlights) == 0 {
			t.Errorf("%s: no highlights", h.DocID)
		}
		for _, s := range h.Highlights {
			w := strings.ToLower(h.Content[s.Start:s.End])
			if !strings.Contains(w, "user") && !strings.Contains(w, "name") {
				t.Errorf("%s: span %v = %q", h.DocID, s, w)
			}
		}
	}
	if res := mustSearch(t, c, contract.Query{Text: "userName"}); res.Hits[0].Highlights != nil {
		t.Error("highlights without Highlight")
	}
	// Staged output: spans refer to the staged (truncated) content.
	_, st, err := c.SearchStaged(context.Background(), contract.Query{Text: "userName", Highlight: true, MaxTokensPerHit: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range st.Hits {
		for _, s := range h.Envelope.Highlights {
			if s.End > len(h.Envelope.Content) {
				t.Errorf("staged span %v past content %q", s, h.Envelope.Content)
			}
		}
	}
}

// Paging with a cursor, collapsing by source file, highlighting query
// terms and redacting a pasted credential at ingest.
func ExampleCollection_Search_shaping() {
	dir, _ := os.MkdirTemp("", "strata-shape-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := Open(dir, Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	col, err := db.CreateCollection("code", CollectionOptions{Dim: 2})
	if err != nil {
		log.Fatal(err)
	}
	var docs []contract.Document
	for i := 1; i <= 5; i++ {
		docs = append(docs, contract.Document{ID: fmt.Sprintf("a.go#%d", i), Content: fmt.Sprintf("func getUserName() string // variant %d", i),
			SourceURI: fmt.Sprintf("file:///repo/a.go#L%d-L%d", i*10, i*10+9), Trust: contract.Authoritative})
	}
	docs = append(docs, contract.Document{ID: "b.go#1", Content: "var user_name string", SourceURI: "file:///repo/b.go#L1-L1",
		Trust: contract.Authoritative})
	// A pasted ticket: redacted at ingest (external_unverified, Redact "auto").
	docs = append(docs, contract.Document{ID: "ticket", Content: "user name login fails, password=" + "Hunter" + "2Secret!",
		Trust: contract.ExternalUnverified})
	if _, err := col.Upsert(ctx, docs); err != nil {
		log.Fatal(err)
	}
	t, _ := col.Get(ctx, "ticket")
	fmt.Println(t.Content)

	q := contract.Query{Text: "userName", TopK: 3, Highlight: true}
	for page := 1; ; page++ {
		res, err := col.Search(ctx, q)
		if err != nil {
			log.Fatal(err)
		}
		for _, h := range res.Hits {
			var marked []string
			for _, s := range h.Highlights {
				marked = append(marked, h.Content[s.Start:s.End])
			}
			fmt.Println(page, h.DocID, marked)
		}
		if res.NextCursor == "" {
			break
		}
		q.Cursor = res.NextCursor
	}
	res, err := col.Search(ctx, contract.Query{Text: "userName", TopK: 3, Collapse: 1})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range res.Hits {
		fmt.Println("collapsed:", h.DocID)
	}
	// Output:
	// user name login fails, password=[REDACTED:password-assignment]
	// 1 b.go#1 [user name]
	// 1 a.go#5 [UserName]
	// 1 a.go#4 [UserName]
	// 2 a.go#1 [UserName]
	// 2 a.go#3 [UserName]
	// 2 a.go#2 [UserName]
	// 3 ticket [user name]
	// collapsed: b.go#1
	// collapsed: a.go#5
	// collapsed: ticket
}

// BenchmarkSearchShaping: the cost of a first page, a deep page (cursor
// after 90 hits: depth 100) and a collapsed page, lexical, 2000 documents
// over 50 files, all in the MemTable.
func BenchmarkSearchShaping(b *testing.B) {
	dir := b.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	c, err := db.CreateCollection("b", CollectionOptions{Dim: 4, Sync: "none", MemTableSizeBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	var docs []contract.Document
	for i := 0; i < 2000; i++ {
		docs = append(docs, contract.Document{ID: fmt.Sprintf("d%04d", i), Content: strings.Repeat("alpha ", 1+r.IntN(9)) + "beta gamma",
			SourceURI: fmt.Sprintf("file:///r/f%02d.go#L%d", r.IntN(50), i), Trust: contract.Authoritative})
	}
	if _, err := c.Upsert(context.Background(), docs); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	deep := contract.Query{Text: "alpha", TopK: 10}
	for p := 0; p < 9; p++ {
		res, err := c.Search(ctx, deep)
		if err != nil {
			b.Fatal(err)
		}
		deep.Cursor = res.NextCursor
	}
	for _, bc := range []struct {
		name string
		q    contract.Query
	}{
		{"page=1", contract.Query{Text: "alpha", TopK: 10}},
		{"page=10", deep},
		{"page=1/collapse=1", contract.Query{Text: "alpha", TopK: 10, Collapse: 1}},
		{"page=1/highlight", contract.Query{Text: "alpha", TopK: 10, Highlight: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Search(ctx, bc.q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCursorKeyCorrupt: a damaged key file fails only the searches that
// present a cursor, with ErrCorrupt naming the file; others lose
// NextCursor but succeed.
func TestCursorKeyCorrupt(t *testing.T) {
	db, dir := newDB(t)
	if err := os.WriteFile(dir+"/"+CursorKeyFile, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateCollection("k", CollectionOptions{Dim: 2, Sync: "none"})
	if err != nil {
		t.Fatal(err)
	}
	shapeCorpus(t, c, 20, 3, 7)
	res := mustSearch(t, c, contract.Query{Text: "alpha", TopK: 5})
	if len(res.Hits) != 5 || res.NextCursor != "" {
		t.Fatalf("hits %d, next %q", len(res.Hits), res.NextCursor)
	}
	_, err = c.Search(context.Background(), contract.Query{Text: "alpha", TopK: 5, Cursor: "AAAAAAAA"})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), CursorKeyFile) {
		t.Errorf("err = %v, want ErrCorrupt naming %s", err, CursorKeyFile)
	}
}
