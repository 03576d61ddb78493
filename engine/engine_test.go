package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier"
)

func newDB(t *testing.T) (*DB, string) {
	t.Helper()
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, dir
}

func newColl(t *testing.T, o CollectionOptions) *Collection {
	t.Helper()
	db, _ := newDB(t)
	if o.Sync == "" {
		o.Sync = "none"
	}
	c, err := db.CreateCollection("c", o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func doc(id, content string, vec []float32) contract.Document {
	return contract.Document{ID: id, Content: content, Vector: vec, Trust: contract.Authoritative}
}

func ids(hits []contract.Envelope) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.DocID
	}
	return out
}

func mustUpsert(t *testing.T, c *Collection, docs ...contract.Document) uint64 {
	t.Helper()
	e, err := c.Upsert(context.Background(), docs)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// mustUpsertVerifiable upserts docs with VerifiableSources, as ingestion
// does.
func mustUpsertVerifiable(t *testing.T, c *Collection, docs ...contract.Document) uint64 {
	t.Helper()
	e, err := c.Upsert(context.Background(), docs, VerifiableSources())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustSearch(t *testing.T, c *Collection, q contract.Query) contract.Result {
	t.Helper()
	r, err := c.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestOptionsValidateReportsAll(t *testing.T) {
	o := CollectionOptions{Dim: 0, Metric: "hamming", Analyzer: "klingon", Sync: "sometimes", OnStale: "ignore",
		IndexedFields: map[string]FieldType{"x": "date"}, HybridDefault: "borda"}
	err := o.Validate()
	if err == nil {
		t.Fatal("want errors")
	}
	for _, w := range []string{"Dim", "Metric", "Analyzer", "Sync", "OnStale", "IndexedFields", "HybridDefault"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %s", err, w)
		}
	}
	var ok CollectionOptions
	ok.Dim = 4
	ok.EnsureDefaults()
	if err := ok.Validate(); err != nil || ok.Metric != "cosine" || ok.Analyzer != "code" || ok.Sync != "always" || ok.OnStale != "drop" || ok.HybridDefault != HybridRerankMaxNorm {
		t.Fatalf("defaults %+v: %v", ok, err)
	}
}

func TestCreateReopenDrop(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateCollection("../x", CollectionOptions{Dim: 2}); !errors.Is(err, ErrBadName) {
		t.Fatalf("bad name: %v", err)
	}
	if _, err := db.CreateCollection("bad", CollectionOptions{}); err == nil {
		t.Fatal("dim 0 accepted")
	}
	a, err := db.CreateCollection("a", CollectionOptions{Dim: 2, Metric: "l2", Analyzer: "prose", Sync: "none",
		IndexedFields: map[string]FieldType{"lang": FieldKeyword}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateCollection("a", CollectionOptions{Dim: 2}); !errors.Is(err, ErrExists) {
		t.Fatalf("dup: %v", err)
	}
	b, err := db.CreateCollection("b", CollectionOptions{Dim: 3})
	if err != nil {
		t.Fatal(err)
	}
	mustUpsert(t, a, doc("a1", "alpha beta", []float32{1, 0}), doc("a2", "gamma", []float32{0, 1}))
	mustUpsert(t, b, doc("b1", "delta", []float32{1, 1, 1}))
	if _, err := a.Delete(context.Background(), []string{"a2"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Upsert(context.Background(), []contract.Document{doc("z", "z", nil)}); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}

	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.Collections(); fmt.Sprint(got) != "[a b]" {
		t.Fatalf("collections %v", got)
	}
	a, _ = db.Collection("a")
	if o := a.Options(); o.Metric != "l2" || o.Analyzer != "prose" || o.IndexedFields["lang"] != FieldKeyword || o.Dim != 2 {
		t.Fatalf("options not restored: %+v", o)
	}
	d, err := a.Get(context.Background(), "a1")
	if err != nil || d.Content != "alpha beta" || d.Vector[0] != 1 || d.VersionHash != VersionHash([]byte("alpha beta")) {
		t.Fatalf("get a1: %+v %v", d, err)
	}
	if _, err := a.Get(context.Background(), "a2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted a2 came back: %v", err)
	}
	r := mustSearch(t, a, contract.Query{Text: "alpha gamma"})
	if fmt.Sprint(ids(r.Hits)) != "[a1]" {
		t.Fatalf("lexical after reopen: %v", ids(r.Hits))
	}
	r = mustSearch(t, a, contract.Query{Vector: []float32{0, 1}, TopK: 5})
	if fmt.Sprint(ids(r.Hits)) != "[a1]" {
		t.Fatalf("dense after reopen: %v", ids(r.Hits))
	}
	if err := db.DropCollection("b"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("dropped: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, collectionsDir, "b")); !os.IsNotExist(err) {
		t.Fatalf("dropped dir still there: %v", err)
	}
	// A new collection may reuse the name, and starts empty.
	b, err = db.CreateCollection("b", CollectionOptions{Dim: 3, Sync: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(context.Background(), "b1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("recreated collection not empty: %v", err)
	}
}

func TestUpsertGetConflict(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2})
	ctx := context.Background()
	e1 := mustUpsert(t, c, doc("x", "one", nil))
	d, err := c.Get(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if d.Timestamp.IsZero() || time.Since(d.Timestamp) > time.Minute {
		t.Fatalf("timestamp %v", d.Timestamp)
	}
	h1 := d.VersionHash
	// Wrong expectation: conflict, nothing written.
	_, err = c.Upsert(ctx, []contract.Document{doc("x", "two", nil)}, IfMatch(map[string]string{"x": VersionHash([]byte("nope"))}))
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("want conflict, got %v", err)
	}
	if d, _ := c.Get(ctx, "x"); d.Content != "one" {
		t.Fatalf("conflicting write applied: %q", d.Content)
	}
	// "" expects absence.
	if _, err := c.Upsert(ctx, []contract.Document{doc("x", "two", nil)}, IfMatch(map[string]string{"x": ""})); !errors.Is(err, ErrConflict) {
		t.Fatalf("want conflict for existing id, got %v", err)
	}
	e2, err := c.Upsert(ctx, []contract.Document{doc("x", "two", nil)}, IfMatch(map[string]string{"x": h1}))
	if err != nil || e2 <= e1 {
		t.Fatalf("matching IfMatch: e=%d err=%v", e2, err)
	}
	// Caller-given hash is kept.
	given := VersionHash([]byte("source bytes"))
	dd := doc("y", "redacted", nil)
	dd.VersionHash = given
	mustUpsert(t, c, dd)
	if d, _ := c.Get(ctx, "y"); d.VersionHash != given {
		t.Fatalf("hash %s, want %s", d.VersionHash, given)
	}
}

func TestValidationErrorShape(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2, MultiTenant: true, IndexedFields: map[string]FieldType{"n": FieldNumber}})
	bad := doc("", "x", []float32{1, 2, 3})
	bad.Metadata = map[string]contract.Value{"n": contract.String("seven")}
	_, err := c.Upsert(context.Background(), []contract.Document{bad})
	var ve *contract.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, contract.ErrInvalid) {
		t.Fatalf("want ValidationError, got %v", err)
	}
	b, _ := json.Marshal(ve)
	js := string(b)
	for _, w := range []string{`"status":"validation_error"`, `"error_type":"missing"`, `"dimension_mismatch"`,
		`"namespace_required"`, `["documents",0,"metadata","n"]`} {
		if !strings.Contains(js, w) {
			t.Errorf("error JSON lacks %s: %s", w, js)
		}
	}
	_, err = c.Search(context.Background(), contract.Query{Text: "x", TopK: 5000, Budget: -1})
	if !errors.As(err, &ve) || len(ve.Errors) < 3 {
		t.Fatalf("query errors: %v", err)
	}
	// Dense with text but no vector: a clear error, never lexical.
	c2 := newColl(t, CollectionOptions{Dim: 2})
	mustUpsert(t, c2, doc("a", "hello", []float32{1, 0}))
	for _, m := range []contract.Mode{contract.Dense, contract.Hybrid} {
		_, err = c2.Search(context.Background(), contract.Query{Text: "hello", Mode: m})
		if !errors.Is(err, ErrNoEmbedder) || !errors.Is(err, contract.ErrInvalid) {
			t.Fatalf("%s text-only: %v", m, err)
		}
	}
}

// TestReadYourWritesAndDeletes: each write is visible to the next search on
// every path, replaced content never comes back, deletes reach lexical,
// dense, hybrid and filtered paths.
func TestReadYourWritesAndDeletes(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2, Metric: "l2"})
	f := contract.Eq("k", contract.String("v"))
	paths := map[string]contract.Query{
		"lexical":  {Text: "needle"},
		"dense":    {Vector: []float32{0, 0}},
		"hybrid":   {Text: "needle", Vector: []float32{0, 0}},
		"filtered": {Text: "needle", Vector: []float32{0, 0}, Filter: &f},
	}
	for i := 0; i < 20; i++ {
		d := doc("n", fmt.Sprintf("needle version%d", i), []float32{float32(i), 0})
		d.Metadata = map[string]contract.Value{"k": contract.String("v")}
		e := mustUpsert(t, c, d)
		for name, q := range paths {
			r := mustSearch(t, c, q)
			if len(r.Hits) != 1 || r.Hits[0].Content != d.Content || r.Epoch < e {
				t.Fatalf("%s after upsert %d (epoch %d): %+v", name, i, e, r)
			}
		}
	}
	mustUpsert(t, c, doc("other", "unrelated", []float32{9, 9}))
	if _, err := c.Delete(context.Background(), []string{"n"}); err != nil {
		t.Fatal(err)
	}
	for name, q := range paths {
		r := mustSearch(t, c, q)
		for _, h := range r.Hits {
			if h.DocID == "n" {
				t.Fatalf("%s returns deleted doc", name)
			}
		}
	}
	if _, err := c.Get(context.Background(), "n"); !errors.Is(err, ErrNotFound) {
		t.Fatal("get returns deleted doc")
	}
}

func TestDeleteByNamespaceAndSource(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2})
	var docs []contract.Document
	for i := 0; i < 6; i++ {
		d := doc(fmt.Sprint("d", i), "common word", []float32{1, float32(i)})
		d.Namespace = []string{"t1/a/", "t1/b/", "t2/"}[i%3]
		d.SourceURI = fmt.Sprintf("file:///src/f%d.go#L%d-L%d", i%2, i+1, i+2)
		docs = append(docs, d)
	}
	mustUpsert(t, c, docs...)
	e0 := c.Epoch()
	e, n, err := c.DeleteByNamespace(context.Background(), "t1/")
	if err != nil || n != 4 || e != e0+1 {
		t.Fatalf("by namespace: e=%d n=%d err=%v", e, n, err)
	}
	r := mustSearch(t, c, contract.Query{Text: "common", Vector: []float32{1, 0}})
	if fmt.Sprint(ids(r.Hits)) != "[d2 d5]" && fmt.Sprint(ids(r.Hits)) != "[d5 d2]" {
		t.Fatalf("after namespace delete: %v", ids(r.Hits))
	}
	_, n, err = c.DeleteBySource(context.Background(), "file:///src/f1.go")
	if err != nil || n != 1 {
		t.Fatalf("by source: n=%d err=%v", n, err)
	}
	r = mustSearch(t, c, contract.Query{Text: "common", Vector: []float32{1, 0}})
	if fmt.Sprint(ids(r.Hits)) != "[d2]" {
		t.Fatalf("after source delete: %v", ids(r.Hits))
	}
	if _, _, err := c.DeleteByNamespace(context.Background(), ""); !errors.Is(err, contract.ErrInvalid) {
		t.Fatalf("empty prefix: %v", err)
	}
}

// TestFiltersAgainstMatch: every filter operator, over every path, returns
// exactly the top-k of the documents that contract.Filter.Match accepts.
func TestFiltersAgainstMatch(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 4, Metric: "l2", IndexedFields: map[string]FieldType{
		"lang": FieldKeyword, "gen": FieldBool, "lines": FieldNumber}})
	rng := rand.New(rand.NewPCG(1, 2))
	langs := []string{"go", "rust", "py", "c"}
	var docs []contract.Document
	for i := 0; i < 200; i++ {
		d := doc(fmt.Sprintf("d%03d", i), "token "+strings.Repeat("x ", rng.IntN(5))+langs[i%4],
			[]float32{rng.Float32(), rng.Float32(), rng.Float32(), rng.Float32()})
		d.Metadata = map[string]contract.Value{"lang": contract.String(langs[rng.IntN(4)]),
			"lines": contract.Number(float64(rng.IntN(100)))}
		if i%3 == 0 {
			d.Metadata["gen"] = contract.Bool(i%2 == 0)
		}
		if i%5 == 0 {
			d.Metadata["tags"] = contract.Strings("a", fmt.Sprint("t", i%7))
		}
		docs = append(docs, d)
	}
	mustUpsert(t, c, docs...)
	filters := []contract.Filter{
		contract.Eq("lang", contract.String("go")),
		contract.In("lang", contract.String("rust"), contract.String("c")),
		contract.Range("lines", contract.F(10), nil, nil, contract.F(20)),
		contract.Prefix("lang", "r"),
		contract.Exists("gen"),
		contract.Eq("gen", contract.Bool(true)),
		contract.Eq("tags", contract.String("t3")),
		contract.And(contract.Eq("lang", contract.String("py")), contract.Range("lines", nil, contract.F(50), nil, nil)),
		contract.Or(contract.Eq("lang", contract.String("c")), contract.Exists("tags")),
		contract.Not(contract.Eq("lang", contract.String("go"))),
		contract.Eq("lines", contract.Number(-1)), // matches nothing
	}
	for fi := range filters {
		f := filters[fi]
		var match []contract.Document
		for _, d := range docs {
			if f.Match(d.Metadata) {
				match = append(match, d)
			}
		}
		k := 10
		q := []float32{0.5, 0.5, 0.5, 0.5}
		// Dense reference: exact L2 over the matching docs.
		ref := append([]contract.Document(nil), match...)
		l2 := func(v []float32) float64 {
			s := 0.0
			for j := range v {
				x := float64(v[j] - q[j])
				s += x * x
			}
			return s
		}
		sort.SliceStable(ref, func(i, j int) bool { return l2(ref[i].Vector) < l2(ref[j].Vector) })
		r := mustSearch(t, c, contract.Query{Vector: q, TopK: k, Filter: &f})
		if want := min(k, len(match)); len(r.Hits) != want {
			t.Fatalf("filter %d dense: %d hits, want %d", fi, len(r.Hits), want)
		}
		for i, h := range r.Hits {
			if h.DocID != ref[i].ID {
				t.Fatalf("filter %d dense hit %d: %s, want %s", fi, i, h.DocID, ref[i].ID)
			}
		}
		// Lexical: every matching doc contains "token", so all match.
		r = mustSearch(t, c, contract.Query{Text: "token", TopK: 1000, Filter: &f})
		if len(r.Hits) != len(match) {
			t.Fatalf("filter %d lexical: %d hits, want %d", fi, len(r.Hits), len(match))
		}
		in := map[string]bool{}
		for _, d := range match {
			in[d.ID] = true
		}
		for _, h := range r.Hits {
			if !in[h.DocID] {
				t.Fatalf("filter %d lexical: %s does not match", fi, h.DocID)
			}
		}
		r = mustSearch(t, c, contract.Query{Text: "token", Vector: q, TopK: k, Filter: &f})
		if len(r.Hits) != min(k, len(match)) {
			t.Fatalf("filter %d hybrid: %d hits", fi, len(r.Hits))
		}
	}
}

// TestFilteredLexicalAcrossTiers: an indexed filter bounds the rows the
// lexical views visit (tier.LexicalSets.Only, per view shifted from the
// query's keys); over two warm segments and a MemTable, with overwritten
// (dead) warm rows and deletes, the lexical hits are exactly the live
// documents the filter matches.
func TestFilteredLexicalAcrossTiers(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 4, Metric: "l2", IndexedFields: map[string]FieldType{
		"subject": FieldKeyword, "status": FieldKeyword}})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	live := map[string]contract.Document{}
	put := func(ids ...int) {
		var docs []contract.Document
		for _, i := range ids {
			d := doc(fmt.Sprintf("d%03d", i), "token word"+fmt.Sprint(rng.IntN(9)), nil)
			d.Metadata = map[string]contract.Value{"subject": contract.String(fmt.Sprint("u", rng.IntN(6))),
				"status": contract.String([]string{"active", "merged", "superseded"}[rng.IntN(3)])}
			docs = append(docs, d)
			live[d.ID] = d
		}
		mustUpsert(t, c, docs...)
	}
	seq := func(from, to int) []int {
		var out []int
		for i := from; i < to; i++ {
			out = append(out, i)
		}
		return out
	}
	put(seq(0, 150)...)
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	put(seq(150, 300)...)
	put(seq(20, 60)...) // overwrites: dead rows in the first segment
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	put(seq(300, 400)...)
	put(seq(160, 180)...) // overwrites of the second segment, live in the MemTable
	var del []string
	for i := 100; i < 320; i += 11 {
		del = append(del, fmt.Sprintf("d%03d", i))
		delete(live, fmt.Sprintf("d%03d", i))
	}
	if _, err := c.Delete(ctx, del); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.WarmSegments < 2 {
		t.Fatalf("%d warm segments, the test needs 2", st.WarmSegments)
	}
	for _, f := range []contract.Filter{
		contract.Eq("subject", contract.String("u2")),
		contract.And(contract.Eq("subject", contract.String("u4")), contract.In("status", contract.String("active"), contract.String("superseded"))),
		contract.Eq("subject", contract.String("nobody")),
	} {
		want := map[string]bool{}
		for id, d := range live {
			if f.Match(d.Metadata) {
				want[id] = true
			}
		}
		r := mustSearch(t, c, contract.Query{Text: "token", TopK: 1000, Filter: &f, Mode: contract.Lexical})
		got := map[string]bool{}
		for _, h := range r.Hits {
			got[h.DocID] = true
		}
		if !maps.Equal(got, want) {
			t.Fatalf("filter %v: %d hits, want %d (%v vs %v)", f, len(got), len(want), got, want)
		}
	}
}

// TestTenancy: another tenant's documents dominate the matches; the tenant
// still gets its full top-k and never a foreign document, through the
// namespace scope and through the principal's ACL.
func TestTenancy(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2, MultiTenant: true})
	var docs []contract.Document
	for i := 0; i < 300; i++ { // tenant b: many, best-matching
		d := doc(fmt.Sprint("b", i), "secret secret secret plan", []float32{1, 0})
		d.Namespace = "b/"
		docs = append(docs, d)
	}
	for i := 0; i < 15; i++ {
		d := doc(fmt.Sprint("a", i), "secret plan with many other words in it", []float32{0.2, 1})
		d.Namespace = "a/"
		if i%5 == 0 {
			d.ACL = []string{"carol"} // not readable by alice
		}
		docs = append(docs, d)
	}
	mustUpsert(t, c, docs...)
	alice := &contract.Principal{Name: "alice", Namespaces: []string{"a/"}}
	for _, mode := range []contract.Mode{contract.Lexical, contract.Dense, contract.Hybrid} {
		q := contract.Query{Text: "secret plan", Vector: []float32{1, 0}, Mode: mode, TopK: 10, Scope: contract.Scope{Namespace: "a/"}}
		if mode == contract.Lexical {
			q.Vector = nil
		}
		r := mustSearch(t, c, q)
		if len(r.Hits) != 10 {
			t.Fatalf("%s: %d hits, want 10", mode, len(r.Hits))
		}
		for _, h := range r.Hits {
			if !strings.HasPrefix(h.DocID, "a") {
				t.Fatalf("%s: foreign doc %s", mode, h.DocID)
			}
		}
		q.Principal = alice
		r = mustSearch(t, c, q)
		if len(r.Hits) != 10 {
			t.Fatalf("%s as alice: %d hits, want 10", mode, len(r.Hits))
		}
		for _, h := range r.Hits {
			n := 0
			fmt.Sscanf(h.DocID, "a%d", &n)
			if !strings.HasPrefix(h.DocID, "a") || n%5 == 0 {
				t.Fatalf("%s as alice: unreadable doc %s", mode, h.DocID)
			}
		}
	}
	// A principal may not name another tenant's namespace.
	_, err := c.Search(context.Background(), contract.Query{Text: "secret", Scope: contract.Scope{Namespace: "b/"}, Principal: alice})
	if !errors.Is(err, contract.ErrInvalid) {
		t.Fatalf("foreign namespace: %v", err)
	}
	// Multi-tenant queries need a namespace.
	if _, err := c.Search(context.Background(), contract.Query{Text: "secret"}); !errors.Is(err, contract.ErrInvalid) {
		t.Fatalf("no namespace: %v", err)
	}
}

// TestConcurrentNoStale: writers keep replacing documents while readers
// search; a hit's content always is the version its hash names, and a doc
// id never appears with a content older than the newest acknowledged
// before the search started (E_stale = 0).
func TestConcurrentNoStale(t *testing.T) {
	t.Run("memtable", func(t *testing.T) { testConcurrentNoStale(t, -1) })
	// A tiny MemTable: background flushes (and compactions run beside
	// them) move versions into warm segments while readers search.
	t.Run("flushing", func(t *testing.T) { testConcurrentNoStale(t, 400) })
}

func testConcurrentNoStale(t *testing.T, memSize int64) {
	c := newColl(t, CollectionOptions{Dim: 2, Metric: "l2", MemTableSizeBytes: memSize})
	const nDocs = 8
	writes := 60
	if testing.Short() {
		writes = 20
	}
	var acked [nDocs]atomic.Int64 // newest acknowledged version per doc
	for i := 0; i < nDocs; i++ {
		mustUpsert(t, c, doc(fmt.Sprint("d", i), fmt.Sprintf("word v%06d", 0), []float32{float32(i), 0}))
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	var stale, checked atomic.Int64
	done := make(chan struct{})
	// Writers start once every reader has finished a first search, and
	// readers run at least minReads searches, so reads overlap writes
	// however slow the machine (qemu) is.
	const readers, minReads = 2, 5
	var ready sync.WaitGroup
	ready.Add(readers)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			ready.Wait()
			for v := 1; v <= writes; v++ {
				i := (v*2 + w) % nDocs
				ver := int64(v*2 + w)
				// Only this writer writes doc i at this version; acked
				// holds the max.
				if _, err := c.Upsert(ctx, []contract.Document{doc(fmt.Sprint("d", i), fmt.Sprintf("word v%06d", ver), []float32{float32(i), 0})}); err != nil {
					t.Error(err)
					return
				}
				for {
					old := acked[i].Load()
					if old >= ver || acked[i].CompareAndSwap(old, ver) {
						break
					}
				}
				if memSize > 0 && w == 0 && v%5 == 0 {
					// Besides the background flushes: at least one flush
					// happens while readers run, whatever the scheduling.
					if err := c.store.Flush(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}(w)
	}
	var rg sync.WaitGroup
	for r := 0; r < readers; r++ {
		rg.Add(1)
		go func(r int) {
			defer rg.Done()
			for iter := 0; ; iter++ {
				if iter == 1 {
					ready.Done()
				}
				if iter >= minReads {
					select {
					case <-done:
						return
					default:
					}
				}
				var before [nDocs]int64
				for i := range before {
					before[i] = acked[i].Load()
				}
				q := contract.Query{Text: "word", Vector: []float32{0, 0}, TopK: nDocs}
				res, err := c.Search(ctx, q)
				if err != nil {
					t.Error(err)
					if iter == 0 {
						ready.Done()
					}
					return
				}
				seen := map[string]bool{}
				for _, h := range res.Hits {
					var i int
					var ver int64
					fmt.Sscanf(h.DocID, "d%d", &i)
					fmt.Sscanf(h.Content, "word v%d", &ver)
					checked.Add(1)
					if seen[h.DocID] || ver < before[i] || h.VersionHash != VersionHash([]byte(h.Content)) {
						stale.Add(1)
					}
					seen[h.DocID] = true
				}
				if len(res.Hits) != nDocs {
					t.Errorf("%d hits, want %d", len(res.Hits), nDocs)
				}
			}
		}(r)
	}
	compactDone := make(chan struct{})
	go func() {
		defer close(compactDone)
		if memSize < 0 {
			return
		}
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := c.store.Compact(ctx); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	wg.Wait()
	close(done)
	rg.Wait()
	<-compactDone
	if stale.Load() != 0 || checked.Load() == 0 {
		t.Fatalf("E_stale = %d of %d checked hits", stale.Load(), checked.Load())
	}
	if memSize > 0 {
		if c.store.Flushes() < 1 || len(c.store.WarmSegments()) == 0 {
			t.Fatalf("%d flushes, %d warm segments: the test did not exercise the warm tier", c.store.Flushes(), len(c.store.WarmSegments()))
		}
		t.Logf("%d flushes, %d compactions, %d checked hits", c.store.Flushes(), c.store.Compactions(), checked.Load())
	}
}

func TestBudgetPartial(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2})
	mustUpsert(t, c, doc("a", "alpha", []float32{1, 0}), doc("b", "beta alpha", []float32{0, 1}))
	release := make(chan struct{})
	c.testHookRetriever = func(name string) {
		if name == retrieverDense {
			<-release
		}
	}
	r, err := c.Search(context.Background(), contract.Query{Text: "alpha", Vector: []float32{1, 0}, Budget: 50 * time.Millisecond})
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Partial || !strings.Contains(r.Reason, "dense") || strings.Contains(r.Reason, "lexical") {
		t.Fatalf("want partial (dense missing): %+v", r)
	}
	if len(r.Hits) != 2 || r.Hits[0].Explain.DenseRank != 0 || r.Hits[0].Explain.LexicalRank != 1 {
		t.Fatalf("lexical part missing: %+v", r.Hits)
	}
	for _, h := range r.Hits {
		if h.Score < 0 || h.Score > 1 {
			t.Fatalf("score %v", h.Score)
		}
	}
	c.testHookRetriever = nil
	r = mustSearch(t, c, contract.Query{Text: "alpha", Vector: []float32{1, 0}, Budget: 10 * time.Second})
	if r.Partial || r.Hits[0].DocID != "a" || r.Hits[0].Explain.DenseRank != 1 || r.Hits[0].Explain.LexicalRank == 0 {
		t.Fatalf("full: %+v", r)
	}
	// A cancelled caller context is an error, not a partial result.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Search(ctx, contract.Query{Text: "alpha"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestScoresAndMinScore(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2, Metric: "cosine"})
	mustUpsert(t, c, doc("a", "apple banana", []float32{1, 0}), doc("b", "banana", []float32{0, 1}), doc("c", "cherry", []float32{-1, 0}))
	r := mustSearch(t, c, contract.Query{Vector: []float32{1, 0}})
	want := map[string]float64{"a": 1, "b": 0.5, "c": 0}
	for _, h := range r.Hits {
		if d := h.Score - want[h.DocID]; d > 1e-6 || d < -1e-6 {
			t.Fatalf("dense score %s = %v, want %v", h.DocID, h.Score, want[h.DocID])
		}
	}
	r = mustSearch(t, c, contract.Query{Vector: []float32{1, 0}, MinScore: 0.4})
	if fmt.Sprint(ids(r.Hits)) != "[a b]" || len(r.Dropped) != 1 || r.Dropped[0].Reason != contract.DropBelowMinScore {
		t.Fatalf("min score: %v %+v", ids(r.Hits), r.Dropped)
	}
	r = mustSearch(t, c, contract.Query{Text: "apple banana", Vector: []float32{1, 0}})
	if r.Hits[0].DocID != "a" || r.Hits[0].Score != 1 {
		t.Fatalf("hybrid top should be ranked 1st by both (score 1): %+v", r.Hits[0])
	}
	r = mustSearch(t, c, contract.Query{Text: "banana"})
	for _, h := range r.Hits {
		if h.Score <= 0 || h.Score > 1 {
			t.Fatalf("lexical score %v", h.Score)
		}
	}
	// Staging: a budget cuts content and reports it.
	long := doc("long", strings.Repeat("banana line\n", 200), []float32{0, 1})
	mustUpsert(t, c, long)
	res, st, err := c.SearchStaged(context.Background(), contract.Query{Text: "banana", MaxTokensPerHit: 20, TokenBudget: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Hits) == 0 || st.TokensUsed > 200 || len(res.Hits) != len(st.Hits) {
		t.Fatalf("staged: %d hits, %d tokens", len(st.Hits), st.TokensUsed)
	}
	for _, h := range st.Hits {
		if h.Envelope.DocID == "long" && h.Cut == nil {
			t.Fatal("long hit not cut")
		}
	}
}

func TestVerifySources(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.go")
	src := "package a\n\nfunc A() {}\n\nfunc B() {}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	uriA := "file://" + path + "#L3-L3"
	uriB := "file://" + path + "#L5"
	spanA, err := ReadSpan(uriA)
	if err != nil || string(spanA) != "func A() {}\n" {
		t.Fatalf("span %q %v", spanA, err)
	}
	for _, onStale := range []StalePolicy{OnStaleDrop, OnStaleReread} {
		opts := CollectionOptions{Dim: 2, OnStale: onStale}
		if onStale == OnStaleReread {
			opts.SourceRoots = []string{dir}
		}
		c := newColl(t, opts)
		da := doc("A", "func A() {}\n", nil)
		da.SourceURI = uriA
		db := doc("B", "func B() {}\n", nil)
		db.SourceURI = uriB
		mustUpsertVerifiable(t, c, da, db)
		q := contract.Query{Text: "func", Verify: true}
		if r := mustSearch(t, c, q); len(r.Hits) != 2 || len(r.Dropped) != 0 {
			t.Fatalf("fresh: %+v", r)
		}
		// Change A's line (size changes too, so the cache is invalidated).
		if err := os.WriteFile(path, []byte("package a\n\nfunc A() { return }\n\nfunc B() {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := mustSearch(t, c, q)
		switch onStale {
		case OnStaleDrop:
			if fmt.Sprint(ids(r.Hits)) != "[B]" || len(r.Dropped) != 1 || r.Dropped[0].Reason != contract.DropStale {
				t.Fatalf("drop: %v %+v", ids(r.Hits), r.Dropped)
			}
		case OnStaleReread:
			if len(r.Hits) != 2 {
				t.Fatalf("reread: %+v", r)
			}
			for _, h := range r.Hits {
				if h.DocID == "A" && (!h.Reread || h.Content != "func A() { return }\n" || h.VersionHash != VersionHash([]byte(h.Content))) {
					t.Fatalf("reread hit %+v", h)
				}
			}
		}
		// Without Verify (and no Freshness) nothing is checked.
		if r := mustSearch(t, c, contract.Query{Text: "func"}); len(r.Hits) != 2 {
			t.Fatalf("unverified: %+v", r)
		}
		// Freshness: versions older than it are checked.
		time.Sleep(5 * time.Millisecond)
		if r := mustSearch(t, c, contract.Query{Text: "func", Freshness: time.Millisecond}); len(r.Hits)+len(r.Dropped) != 2 || (onStale == OnStaleDrop && len(r.Dropped) != 1) {
			t.Fatalf("freshness: %+v", r)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRereadOnlyUnderSourceRoots: a document naming a file outside the
// collection's SourceRoots never gets that file's content returned by
// verification, even when written with VerifiableSources; the hit is
// dropped as stale instead. Reread without roots
// is a configuration error.
func TestRereadOnlyUnderSourceRoots(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("password=hunter2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := CollectionOptions{Dim: 2, OnStale: OnStaleReread}
	o.EnsureDefaults()
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "SourceRoots") {
		t.Fatalf("reread without SourceRoots accepted: %v", err)
	}
	c := newColl(t, CollectionOptions{Dim: 2, OnStale: OnStaleReread, SourceRoots: []string{root}})
	for _, uri := range []string{
		"file://" + secret + "#L1",
		"file://" + root + "/../" + filepath.Base(outside) + "/secret.txt#L1",
	} {
		d := doc("evil", "anything at all", nil)
		d.SourceURI = uri
		mustUpsertVerifiable(t, c, d)
		r := mustSearch(t, c, contract.Query{Text: "anything", Verify: true})
		for _, h := range r.Hits {
			if strings.Contains(h.Content, "hunter2") || h.Reread {
				t.Fatalf("%s: file outside SourceRoots returned: %+v", uri, h)
			}
		}
		if len(r.Dropped) != 1 || r.Dropped[0].Reason != contract.DropStale {
			t.Fatalf("%s: want the hit dropped as stale, got hits %v dropped %+v", uri, ids(r.Hits), r.Dropped)
		}
	}
}

// TestStaleCheckCanFail: with the tier's tombstones disabled (a mutation),
// the read-your-writes check must see the replaced version come back.
func TestStaleCheckCanFail(t *testing.T) {
	testTierOptions = func(o *tier.Options) { o.TestingSkipTombstone = true }
	defer func() { testTierOptions = nil }()
	c := newColl(t, CollectionOptions{Dim: 2, Metric: "l2"})
	mustUpsert(t, c, doc("n", "needle old", []float32{0, 0}))
	mustUpsert(t, c, doc("n", "needle new", []float32{0, 0}))
	for _, q := range []contract.Query{{Text: "needle"}, {Vector: []float32{0, 0}}} {
		r := mustSearch(t, c, q)
		old := false
		for _, h := range r.Hits {
			old = old || h.Content == "needle old"
		}
		if !old {
			t.Fatalf("mutation not detected by %+v: %v", q, ids(r.Hits))
		}
	}
}

func TestZeroVectorCosineAndMaxDim(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2, Metric: "cosine"})
	_, err := c.Upsert(context.Background(), []contract.Document{doc("z", "zero", []float32{0, 0})})
	var ve *contract.ValidationError
	if !errors.As(err, &ve) || fmt.Sprint(ve.Errors[0].Loc) != "[documents 0 vector]" {
		t.Fatalf("zero vector upsert: %v", err)
	}
	if _, err := c.Search(context.Background(), contract.Query{Vector: []float32{0, 0}, Mode: contract.Dense}); !errors.As(err, &ve) {
		t.Fatalf("zero vector query: %v", err)
	}
	l2 := newColl(t, CollectionOptions{Dim: 2, Metric: "l2"})
	mustUpsert(t, l2, doc("z", "zero", []float32{0, 0})) // fine under L2
	o := CollectionOptions{Dim: MaxDim + 1}
	o.EnsureDefaults()
	if err := o.Validate(); err == nil {
		t.Fatal("Dim above MaxDim accepted")
	}
}

// TestVerifySpecialFilesAndOracle: a document naming a device (an
// endless /dev/zero) or a FIFO as its source is dropped as stale without
// the search reading it, and a dropped hit's detail never carries the
// live hash, nor says whether the file exists (review findings C1, H3).
func TestVerifySpecialFilesAndOracle(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.txt")
	if err := os.WriteFile(real, []byte("line one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newColl(t, CollectionOptions{Dim: 2})
	var docs []contract.Document
	for i, uri := range []string{"file:///dev/zero#L1", "file:///dev/zero", "file://" + real + "#L1", "file://" + dir + "/missing.txt#L1"} {
		d := doc(fmt.Sprintf("d%d", i), "probe words", nil)
		d.SourceURI = uri
		d.VersionHash = strings.Repeat("ab", 32) // a guess that is wrong
		docs = append(docs, d)
	}
	mustUpsertVerifiable(t, c, docs...)
	done := make(chan contract.Result, 1)
	go func() { done <- mustSearch(t, c, contract.Query{Text: "probe", Verify: true}) }()
	var r contract.Result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("verification of /dev/zero did not return")
	}
	if len(r.Hits) != 0 || len(r.Dropped) != 4 {
		t.Fatalf("want all 4 dropped: hits %v dropped %+v", ids(r.Hits), r.Dropped)
	}
	detail := r.Dropped[0].Detail
	for _, d := range r.Dropped {
		if d.Detail != detail || strings.Contains(d.Detail, VersionHash([]byte("line one\n"))) {
			t.Fatalf("dropped details must be uniform and hash-free: %+v", r.Dropped)
		}
	}
}

func TestFusionWindowBounded(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2})
	mustUpsert(t, c, doc("a", "x", []float32{1, 0}))
	_, err := c.Search(context.Background(), contract.Query{Text: "x", Vector: []float32{1, 0},
		Fusion: contract.FusionParams{Window: 2_000_000_000}})
	var ve *contract.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "window") {
		t.Fatalf("huge fusion window: %v", err)
	}
	if _, err := c.Search(context.Background(), contract.Query{Text: "x", Vector: []float32{1, 0},
		Fusion: contract.FusionParams{Window: contract.MaxFusionWindow}}); err != nil {
		t.Fatalf("window at the bound: %v", err)
	}
}

// TestSearchUnicodeSpaceQuery: query texts with Unicode spaces or runes
// whose UTF-8 bytes include 0x85 / 0xA0 (Å, à) search normally; they used
// to panic in a retriever goroutine and take the process down.
func TestSearchUnicodeSpaceQuery(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2})
	mustUpsert(t, c, doc("a", "Ångström voilà alpha", []float32{1, 0}), doc("b", "beta", []float32{0, 1}))
	for _, q := range []string{"Ångström", "voilà", "alpha\fbeta", "alpha\u00a0beta"} {
		for _, m := range []contract.Mode{contract.Lexical, contract.Hybrid} {
			res, err := c.Search(context.Background(), contract.Query{Text: q, Vector: []float32{1, 0}, Mode: m})
			if err != nil {
				t.Fatalf("%q %s: %v", q, m, err)
			}
			if q == "Ångström" && (len(res.Hits) == 0 || res.Hits[0].DocID != "a") {
				t.Fatalf("%q %s: hits %v", q, m, ids(res.Hits))
			}
		}
	}
}
