package bm25

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
)

// holeFetcher serves a segment whose posting blobs start zeroed: Fetch
// copies [off, off+n) from the full bytes into the holed copy, after
// checking the range lies inside the postings and recording it.
type holeFetcher struct {
	full, holed []byte
	lo, hi      int64
	mu          sync.Mutex
	calls       int
	bytes       int64
	fail        error
	bad         error
}

func (f *holeFetcher) Fetch(off, n int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	if off < f.lo || n <= 0 || off+n > f.hi {
		f.bad = fmt.Errorf("fetch [%d,+%d) outside the postings [%d,%d)", off, n, f.lo, f.hi)
		return f.bad
	}
	f.calls++
	f.bytes += n
	copy(f.holed[off:off+n], f.full[off:off+n])
	return nil
}

// segmentBytes is the serialised segment of docs.
func segmentBytes(t *testing.T, docs []modelDoc, o Options) []byte {
	t.Helper()
	b := NewBuilder(o)
	for _, d := range docs {
		if _, err := b.Add(d.ext, d.toks); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func holed(t *testing.T, full []byte) *holeFetcher {
	t.Helper()
	off, n, ok := PostingsRange(full)
	if !ok || n <= 0 {
		t.Fatalf("PostingsRange: %d %d %v", off, n, ok)
	}
	h := append([]byte(nil), full...)
	clear(h[off : off+n])
	return &holeFetcher{full: full, holed: h, lo: off, hi: off + n}
}

// TestOpenFetchMatchesOpen: segments whose posting blobs are absent at
// open (zeroed) and fetched on demand answer every random query exactly
// as the same segments opened whole, fetch only inside the postings,
// and fetch nothing for a query whose lists are present.
func TestOpenFetchMatchesOpen(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	nDocs, nQ := 2000, 300
	if testing.Short() {
		nDocs, nQ = 600, 100
	}
	vocab := 300
	docs := synthCorpus(r, nDocs, vocab)
	cuts := []int{0, nDocs / 4, nDocs / 2, nDocs}
	var full, lazy []View
	var fs []*holeFetcher
	for k := 0; k+1 < len(cuts); k++ {
		data := segmentBytes(t, docs[cuts[k]:cuts[k+1]], Options{PartitionedEF: k == 1})
		s, err := Open(data, "full")
		if err != nil {
			t.Fatal(err)
		}
		f := holed(t, data)
		if _, err := Open(f.holed, "holed"); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Open of the holed bytes: %v, want the CRC32C mismatch", err)
		}
		ls, err := OpenFetch(f.holed, "lazy", f)
		if err != nil {
			t.Fatal(err)
		}
		full, lazy = append(full, View{Seg: s}), append(lazy, View{Seg: ls})
		fs = append(fs, f)
	}
	calls := func() (n int) {
		for _, f := range fs {
			n += f.calls
		}
		return n
	}
	for qi := 0; qi < nQ; qi++ {
		q := randQuery(r, docs, vocab)
		p := DefaultSearchParams()
		p.K = []int{1, 10, 50}[r.IntN(3)]
		p.Exhaustive = r.IntN(4) == 0
		want, werr := Search(full, q, p, nil)
		got, gerr := Search(lazy, q, p, nil)
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("query %d %+v: lazy %v (%v), whole %v (%v)", qi, q, got, gerr, want, werr)
		}
		before := calls()
		if again, err := Search(lazy, q, p, nil); err != nil || !reflect.DeepEqual(again, want) {
			t.Fatalf("query %d again: %v %v", qi, again, err)
		}
		if c := calls(); c != before {
			t.Fatalf("query %d repeated fetched %d more ranges", qi, c-before)
		}
	}
	for _, f := range fs {
		if f.bad != nil {
			t.Fatal(f.bad)
		}
	}
	// CountIn and Postings read through the same fetch.
	for k := range full {
		for _, term := range []string{"w0", "w1", "w17", "w250"} {
			d1, t1, p1, e1 := full[k].Seg.Postings(term)
			d2, t2, p2, e2 := lazy[k].Seg.Postings(term)
			if e1 != nil || e2 != nil || !reflect.DeepEqual(d1, d2) || !reflect.DeepEqual(t1, t2) || !reflect.DeepEqual(p1, p2) {
				t.Fatalf("segment %d term %q: postings differ (%v %v)", k, term, e1, e2)
			}
		}
	}
	// Once everything is fetched, Verify passes on the lazy copy, and the
	// bytes are the originals.
	for k, v := range lazy {
		if err := v.Seg.Verify(); err != nil {
			t.Fatalf("segment %d: %v", k, err)
		}
		if !bytes.Equal(fs[k].holed, fs[k].full) {
			t.Fatalf("segment %d: bytes differ after Verify fetched every list", k)
		}
	}
	t.Logf("%d queries, %d fetches", nQ, calls())
}

// TestOpenFetchError: a failed fetch fails the query with the fetcher's
// error and the postings offset, never a wrong or empty answer, and the
// same query succeeds once the fetcher works again.
func TestOpenFetchError(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 1))
	docs := synthCorpus(r, 300, 50)
	data := segmentBytes(t, docs, Options{})
	whole, err := Open(data, "whole")
	if err != nil {
		t.Fatal(err)
	}
	f := holed(t, data)
	s, err := OpenFetch(f.holed, "lazy", f)
	if err != nil {
		t.Fatal(err)
	}
	down := errors.New("store unreachable")
	f.fail = down
	q := Query{Should: []string{"w0", "w1", "w2"}, MustNot: []string{"w3"}}
	if hits, err := Search([]View{{Seg: s}}, q, DefaultSearchParams(), nil); !errors.Is(err, down) || hits != nil {
		t.Fatalf("Search with a failing fetcher: %v, %v; want the fetcher's error", hits, err)
	}
	if _, err := s.CountIn("w0", nil, 0); err != nil {
		t.Fatal(err) // no allow-list: nothing read
	}
	if _, _, _, err := s.Postings("w0"); !errors.Is(err, down) {
		t.Fatalf("Postings with a failing fetcher: %v", err)
	}
	f.fail = nil
	want, _ := Search([]View{{Seg: whole}}, q, DefaultSearchParams(), nil)
	got, err := Search([]View{{Seg: s}}, q, DefaultSearchParams(), nil)
	if err != nil || !reflect.DeepEqual(got, want) || len(want) == 0 {
		t.Fatalf("after recovery: %v %v, want %v", got, err, want)
	}
}

// fullPresence reports every range present and counts Fetch calls.
type fullPresence struct{ fetches int }

func (f *fullPresence) Fetch(off, n int64) error  { f.fetches++; return nil }
func (f *fullPresence) Present(off, n int64) bool { return true }

// TestOpenFetchPresent: with a PresenceFetcher that has every range, a
// query starts no fetch and answers as Open's segment does.
func TestOpenFetchPresent(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 2))
	docs := synthCorpus(r, 400, 80)
	data := segmentBytes(t, docs, Options{})
	whole, err := Open(data, "whole")
	if err != nil {
		t.Fatal(err)
	}
	f := &fullPresence{}
	s, err := OpenFetch(data, "present", f)
	if err != nil {
		t.Fatal(err)
	}
	for qi := 0; qi < 50; qi++ {
		q := randQuery(r, docs, 80)
		want, werr := Search([]View{{Seg: whole}}, q, DefaultSearchParams(), nil)
		got, gerr := Search([]View{{Seg: s}}, q, DefaultSearchParams(), nil)
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("query %d: %v (%v), want %v (%v)", qi, got, gerr, want, werr)
		}
	}
	if f.fetches != 0 {
		t.Fatalf("%d fetches for ranges the fetcher reports present", f.fetches)
	}
}
