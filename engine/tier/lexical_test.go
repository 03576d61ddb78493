package tier

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stratasearch/strata/vfs"
)

// fakeLexSegs is a LexicalSegmentBuilder whose section is the rows' ids
// joined by newlines (enough to check the tier stores, maps and hands back
// the right bytes in row order).
type fakeLexSegs struct {
	mu    sync.Mutex
	calls int
	fail  bool
}

func (f *fakeLexSegs) BuildLexical(docs []*Document) ([]byte, error) {
	f.mu.Lock()
	f.calls++
	fail := f.fail
	f.mu.Unlock()
	if fail {
		return nil, errors.New("injected")
	}
	var b bytes.Buffer
	for _, d := range docs {
		b.WriteString(d.ID)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// recLex records the versions one MemTable's indexer received.
type recLex struct {
	mu   sync.Mutex
	vers []uint32
	ids  []string
}

func (r *recLex) Add(v uint32, d *Document) {
	r.mu.Lock()
	r.vers = append(r.vers, v)
	r.ids = append(r.ids, d.ID)
	r.mu.Unlock()
}

func checkLexSections(t *testing.T, sn *Snapshot) {
	t.Helper()
	ws := sn.WarmSegments()
	for i, w := range ws {
		var want strings.Builder
		for _, d := range w.Docs {
			want.WriteString(d.ID + "\n")
		}
		if string(w.Lexical) != want.String() {
			t.Fatalf("segment %d (id %d): lexical section %q, want %q", i, w.ID, w.Lexical, want.String())
		}
		if w.LexicalOffset <= 0 || w.Path == "" {
			t.Fatalf("segment %d: offset %d path %q", i, w.LexicalOffset, w.Path)
		}
		for r := range w.Docs {
			d, _, ok := sn.Get(w.Docs[r].ID)
			if sn.VisibleRow(i, uint32(r)) != (ok && d == w.Docs[r]) {
				t.Fatalf("segment %d row %d: VisibleRow disagrees with Get", i, r)
			}
		}
	}
}

// TestLexicalSections: flush and compaction store the LexicalSegmentBuilder
// output over the rows in row order; it survives reopen; every new
// MemTable gets a fresh indexer from NewLexical (versions from 0); a
// failing builder fails the flush and leaves the store unchanged.
func TestLexicalSections(t *testing.T) {
	fs := vfs.NewCrashableMem()
	lex := &fakeLexSegs{}
	var idxMu sync.Mutex
	var idxs []*recLex
	o := testOptions(fs)
	o.LexicalSegments = lex
	o.NewLexical = func() LexicalIndexer {
		r := &recLex{}
		idxMu.Lock()
		idxs = append(idxs, r)
		idxMu.Unlock()
		return r
	}
	o.CompactMaxSegments = 2
	s := mustOpen(t, o)
	m := model{}
	e := uint64(0)
	for round := 0; round < 4; round++ {
		for j := 0; j < 10; j++ {
			e++
			b := genBatch(7, e)
			if _, err := s.Apply(b); err != nil {
				t.Fatal(err)
			}
			m.apply(b)
		}
		sn := s.Snapshot()
		if got := sn.MemLexical(); got != LexicalIndexer(idxs[len(idxs)-1]) {
			t.Fatalf("MemLexical is not the newest indexer")
		}
		sn.Close()
		if err := s.Flush(bg); err != nil {
			t.Fatal(err)
		}
		sn = s.Snapshot()
		checkLexSections(t, sn)
		if msg := checkAgainst(sn, m); msg != "" {
			t.Fatal(msg)
		}
		sn.Close()
	}
	idxMu.Lock()
	for i, r := range idxs {
		for j, v := range r.vers {
			if v != uint32(j) {
				t.Fatalf("indexer %d: version %d at position %d", i, v, j)
			}
		}
	}
	if len(idxs) != 5 {
		t.Fatalf("%d indexers, want 5 (one per MemTable)", len(idxs))
	}
	idxMu.Unlock()
	if err := s.Compact(bg); err != nil {
		t.Fatal(err)
	}
	if len(s.WarmSegments()) != 1 || s.Compactions() != 1 {
		t.Fatalf("%d segments after compaction", len(s.WarmSegments()))
	}
	sn := s.Snapshot()
	checkLexSections(t, sn)
	sn.Close()

	// A failing builder: the flush fails, nothing changes, the store
	// stays writable.
	e++
	b := genBatch(7, e)
	if _, err := s.Apply(b); err != nil {
		t.Fatal(err)
	}
	m.apply(b)
	lex.mu.Lock()
	lex.fail = true
	lex.mu.Unlock()
	segsBefore := fmt.Sprint(s.WarmSegments())
	if err := s.Flush(bg); err == nil {
		t.Fatal("flush with a failing lexical builder succeeded")
	}
	if fmt.Sprint(s.WarmSegments()) != segsBefore || s.Err() != nil {
		t.Fatalf("failed flush changed the store: %v %v", s.WarmSegments(), s.Err())
	}
	lex.mu.Lock()
	lex.fail = false
	lex.mu.Unlock()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopen: the sections come back mapped; only the tail is replayed.
	s = mustOpen(t, o)
	defer s.Close()
	if got := s.ReplayedRecords(); got != 1 {
		t.Fatalf("replayed %d records, want 1", got)
	}
	sn = s.Snapshot()
	defer sn.Close()
	checkLexSections(t, sn)
	if msg := checkAgainst(sn, m); msg != "" {
		t.Fatal(msg)
	}
}

// flushLex is a recLex that also serialises its own section
// (LexicalFlusher): the ids of the versions asked for, as fakeLexSegs
// writes them, or it fails ("error") or panics ("panic").
type flushLex struct {
	recLex
	mode *string
}

func (f *flushLex) FlushLexical(vers []uint32) ([]byte, error) {
	switch *f.mode {
	case "error":
		return nil, errors.New("injected")
	case "panic":
		panic("injected")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var b bytes.Buffer
	for _, v := range vers {
		b.WriteString(f.ids[v])
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// TestFlushLexicalFlusherFails: the MemTable's LexicalFlusher runs beside
// the segment build; its error or panic fails the flush with the cause,
// leaves every write visible and the store writable, and the next flush
// (the flusher working again) stores its section.
func TestFlushLexicalFlusherFails(t *testing.T) {
	o := testOptions(vfs.NewCrashableMem())
	o.LexicalSegments = &fakeLexSegs{}
	mode := "error"
	o.NewLexical = func() LexicalIndexer { return &flushLex{mode: &mode} }
	s := mustOpen(t, o)
	defer s.Close()
	m := model{}
	for e := uint64(1); e <= 12; e++ {
		b := genBatch(3, e)
		if _, err := s.Apply(b); err != nil {
			t.Fatal(err)
		}
		m.apply(b)
	}
	for _, mode = range []string{"error", "panic"} {
		err := s.Flush(bg)
		if err == nil || !strings.Contains(err.Error(), "flush lexical index") || !strings.Contains(err.Error(), "injected") {
			t.Fatalf("%s: Flush returned %v", mode, err)
		}
		if len(s.WarmSegments()) != 0 {
			t.Fatalf("%s: a segment was added", mode)
		}
		sn := s.Snapshot()
		if msg := checkAgainst(sn, m); msg != "" {
			t.Fatalf("%s: %s", mode, msg)
		}
		sn.Close()
	}
	mode = "ok"
	if err := s.Flush(bg); err != nil {
		t.Fatal(err)
	}
	b := genBatch(3, 13)
	if _, err := s.Apply(b); err != nil {
		t.Fatal(err)
	}
	m.apply(b)
	sn := s.Snapshot()
	defer sn.Close()
	if len(sn.WarmSegments()) != 1 {
		t.Fatalf("%d warm segments after the flush, want 1", len(sn.WarmSegments()))
	}
	checkLexSections(t, sn)
	if msg := checkAgainst(sn, m); msg != "" {
		t.Fatal(msg)
	}
}
