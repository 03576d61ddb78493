package engine

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/engine/tier"
)

// hotIndexOf returns a hot index holding n generated code-like
// documents (fixed seed).
func hotIndexOf(t testing.TB, n int) *hotIndex {
	t.Helper()
	an, err := text.New(text.CodeOptions())
	if err != nil {
		t.Fatal(err)
	}
	words := []string{"func", "ReadFull", "http_request", "parseHTTPRequest", "buf", "io.Reader", "x2", "émoji", "utf8Decode", "return", "err", "nil"}
	r := rand.New(rand.NewPCG(7, 11))
	h := newHotIndex(an, nil)
	for i := 0; i < n; i++ {
		var b strings.Builder
		for j := r.IntN(40); j >= 0; j-- {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(" \n\t(."[r.IntN(5)])
		}
		h.Add(uint32(i), &tier.Document{ID: fmt.Sprintf("doc-%d", i), Content: b.String()})
	}
	return h
}

// mergeReference is FlushLexical by definition: the sealed builder
// segment, merged dropping the versions not listed.
func mergeReference(t testing.TB, h *hotIndex, versions []uint32) []byte {
	t.Helper()
	seg, err := h.b.Segment()
	if err != nil {
		t.Fatal(err)
	}
	del := roaring.New()
	del.AddRange(0, uint64(seg.NumDocs()))
	for _, v := range versions {
		del.Remove(v)
	}
	var buf bytes.Buffer
	if _, err := bm25.MergeWith(&buf, []*bm25.Segment{seg}, []*roaring.Bitmap{del}, bm25.MergeOptions{OmitExtIDs: true}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestFlushLexicalMatchesMerge: the section FlushLexical returns is
// byte for byte the bm25.MergeWith (without external ids) of the
// builder's segment without the unlisted versions, both when every version is flushed (no merge
// needed) and when some are dropped.
func TestFlushLexicalMatchesMerge(t *testing.T) {
	const n = 500
	h := hotIndexOf(t, n)
	all := make([]uint32, n)
	for i := range all {
		all[i] = uint32(i)
	}
	var some []uint32
	for i := uint32(0); i < n; i++ {
		if i%3 != 1 {
			some = append(some, i)
		}
	}
	for _, tc := range []struct {
		name string
		vers []uint32
	}{{"all", all}, {"some", some}, {"allButLast", all[:n-1]}, {"allButFirst", all[1:]}} {
		got, err := h.FlushLexical(tc.vers)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if want := mergeReference(t, h, tc.vers); !bytes.Equal(got, want) {
			t.Fatalf("%s: FlushLexical gave %d bytes, Merge %d (contents differ)", tc.name, len(got), len(want))
		}
		if _, err := bm25.Open(got, tc.name); err != nil {
			t.Fatalf("%s: section does not open: %v", tc.name, err)
		}
	}
}

func BenchmarkFlushLexicalAll(b *testing.B) {
	h := hotIndexOf(b, 20000)
	all := make([]uint32, h.b.NumDocs())
	for i := range all {
		all[i] = uint32(i)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := h.FlushLexical(all); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAddBatchMatchesAdd: AddBatch (parallel analysis) leaves the hot
// index exactly as Add one version at a time does: the same builder
// serialisation, rows and metadata field index.
func TestAddBatchMatchesAdd(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	an, err := text.New(text.CodeOptions())
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]FieldType{"lang": FieldKeyword}
	ref := hotIndexOf(t, 1500)
	docs := make([]*tier.Document, 0, 1500)
	for i := range ref.infos {
		d := *ref.infos[i].Doc
		d.Metadata = map[string]string{"lang": []string{`"go"`, `"python"`}[i%2]}
		docs = append(docs, &d)
	}
	seq := newHotIndex(an, fields)
	for i, d := range docs {
		seq.Add(uint32(i), d)
	}
	bat := newHotIndex(an, fields)
	r := rand.New(rand.NewPCG(1, 2))
	for lo := 0; lo < len(docs); {
		hi := min(lo+1+r.IntN(400), len(docs)) // some batches under parallelAnalyseMin
		vers := make([]uint32, 0, hi-lo)
		for v := lo; v < hi; v++ {
			vers = append(vers, uint32(v))
		}
		bat.AddBatch(vers, docs[lo:hi])
		lo = hi
	}
	if seq.err != nil || bat.err != nil {
		t.Fatalf("errors: Add %v, AddBatch %v", seq.err, bat.err)
	}
	var a, b bytes.Buffer
	if _, err := seq.b.WriteTo(&a); err != nil {
		t.Fatal(err)
	}
	if _, err := bat.b.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("builder segments differ: %d vs %d bytes", a.Len(), b.Len())
	}
	if len(seq.infos) != len(bat.infos) || len(seq.byDoc) != len(bat.byDoc) {
		t.Fatalf("rows: Add %d/%d, AddBatch %d/%d", len(seq.infos), len(seq.byDoc), len(bat.infos), len(bat.byDoc))
	}
	for i := range seq.infos {
		if seq.infos[i].Doc != bat.infos[i].Doc || bat.byDoc[docs[i]] != uint32(i) {
			t.Fatalf("row %d differs", i)
		}
	}
	for _, lang := range []string{"go", "python"} {
		eq := contract.Eq("lang", contract.String(lang))
		f := &eq
		x, okx := seq.filterBitmap(f)
		y, oky := bat.filterBitmap(f)
		if okx != oky || x == nil || y == nil || !x.Equals(y) || x.GetCardinality() != 750 {
			t.Fatalf("lang=%s bitmaps differ", lang)
		}
	}
}

// BenchmarkAddBatch: analysing and adding batches of 4096 generated
// documents, Add one by one (seq) against AddBatch.
func BenchmarkAddBatch(b *testing.B) {
	an, err := text.New(text.CodeOptions())
	if err != nil {
		b.Fatal(err)
	}
	src := hotIndexOf(b, 4096)
	docs := make([]*tier.Document, len(src.infos))
	vers := make([]uint32, len(docs))
	for i := range docs {
		docs[i], vers[i] = src.infos[i].Doc, uint32(i)
	}
	for _, mode := range []string{"seq", "batch"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				h := newHotIndex(an, nil)
				if mode == "seq" {
					for i, d := range docs {
						h.Add(vers[i], d)
					}
				} else {
					h.AddBatch(vers, docs)
				}
			}
		})
	}
}

// TestAddBatchPanicIsError: a panic while a worker analyses a document
// does not end the process or hang AddBatch: the index records it as
// its sticky error (every later view fails), the versions before it are
// in the builder.
func TestAddBatchPanicIsError(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	src := hotIndexOf(t, 300)
	docs := make([]*tier.Document, len(src.infos))
	vers := make([]uint32, len(docs))
	for i := range docs {
		docs[i], vers[i] = src.infos[i].Doc, uint32(i)
	}
	testAnalyseHook = func(d *tier.Document) {
		if d == docs[170] {
			panic("injected")
		}
	}
	defer func() { testAnalyseHook = nil }()
	an, _ := text.New(text.CodeOptions())
	h := newHotIndex(an, nil)
	h.AddBatch(vers, docs)
	if _, _, err := h.view(); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("view after a panicking analysis: err %v", err)
	}
	if n := h.b.NumDocs(); n != 170 {
		t.Fatalf("builder holds %d documents, want the 170 before the panic", n)
	}
}
