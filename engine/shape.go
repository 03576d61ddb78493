package engine

// Result shaping: cursor pagination, collapse by source file and
// highlighting. See the package doc "Result shaping".

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/cursor"
	"github.com/stratasearch/strata/engine/highlight"
	"github.com/stratasearch/strata/engine/tier"
)

// Cursor retention: the snapshot (pinned epoch) a NextCursor was issued
// at is kept for CursorRetention after its page, at most
// maxRetainedSnapshots per collection (the oldest is released first). A
// retained snapshot holds back compaction of the versions it sees.
const (
	CursorRetention      = 60 * time.Second
	maxRetainedSnapshots = 32
)

// shapeState is a collection's shaping state: the snapshots retained for
// open cursors.
type shapeState struct {
	mu       sync.Mutex
	retained map[uint64]*retainedSnap
}

type retainedSnap struct {
	p       *pinnedSnap
	expires time.Time
}

// pinnedSnap is a reference-counted snapshot: the search that uses it,
// the shaping wrapper and the retention cache each hold a reference.
type pinnedSnap struct {
	sn   *tier.Snapshot
	refs atomic.Int32
}

func newPinned(sn *tier.Snapshot) *pinnedSnap {
	p := &pinnedSnap{sn: sn}
	p.refs.Store(1)
	return p
}

func (p *pinnedSnap) acquire() { p.refs.Add(1) }

func (p *pinnedSnap) release() {
	if p.refs.Add(-1) == 0 {
		p.sn.Close()
	}
}

// shaper is one shaped search's paging state: what the cursor has
// returned, and what the last page (page) kept.
type shaper struct {
	pin      *pinnedSnap
	topK     int // page size
	collapse int // 0 = off
	seen     map[uint64]bool
	// Set by page:
	fetched int      // hits the retrieval produced (its depth)
	pageIDs []string // ids of the page, in order
	rest    bool     // candidates remained after the page
}

// page is the shaping step between fusion and verification: hits is the
// fused list at the retrieval's depth. Collapse is applied to the whole
// list (hits returned on earlier pages count towards their file's quota),
// then hits already returned (by the cursor) are skipped and the next
// topK kept. A nil shaper returns hits unchanged.
func (sh *shaper) page(hits []contract.Envelope) []contract.Envelope {
	if sh == nil {
		return hits
	}
	sh.fetched = len(hits)
	sh.pageIDs = sh.pageIDs[:0]
	sh.rest = false
	var perFile map[string]int
	if sh.collapse > 0 {
		perFile = map[string]int{}
	}
	out := make([]contract.Envelope, 0, min(sh.topK, len(hits)))
	for _, h := range hits {
		if perFile != nil && h.SourceURI != "" {
			f := stripFragment(h.SourceURI)
			if perFile[f] >= sh.collapse {
				continue
			}
			perFile[f]++
		}
		if sh.seen[cursor.IDHash(h.DocID)] {
			continue
		}
		if len(out) == sh.topK {
			sh.rest = true
			break
		}
		out = append(out, h)
		sh.pageIDs = append(sh.pageIDs, h.DocID)
	}
	return out
}

// searchShaped runs a search through the shaping steps: it checks the
// cursor, pins the snapshot, builds the query's plan (plan.go) once and
// retrieves at depth = hits already returned + TopK, widened ×4 up to
// MaxTopK while collapse (or an approximate index) leaves the page short
// and the list was full; the page then goes through verification and
// staging (plan.finish), and it sets highlights and NextCursor.
func (c *Collection) searchShaped(ctx context.Context, q contract.Query) (contract.Result, *contract.StagedResult, error) {
	var res contract.Result
	dq := q
	dq.EnsureDefaults()
	if err := dq.Validate(c.o.Dim, c.validateOpts()); err != nil {
		return res, nil, err
	}
	var fp [16]byte
	var cur cursor.Data
	if q.Cursor != "" {
		fp = c.fingerprint(&dq)
		key, err := c.db.CursorKey()
		if err != nil {
			return res, nil, err
		}
		cur, err = cursor.Decode(q.Cursor, key)
		if err == nil && cur.Fingerprint != fp {
			err = errors.New("the cursor belongs to a different query (text, vector, scope, filter, mode or options differ; only top_k, budget_ms and cursor may change between pages)")
		}
		if err != nil {
			return res, nil, &contract.ValidationError{Errors: []contract.FieldError{{
				Loc: []any{"query", "cursor"}, InputValue: q.Cursor, ErrorType: contract.ErrTypeInvalidFormat,
				Message: err.Error(), ExpectedDomain: "the next_cursor of a previous result of this query"}}}
		}
	}
	sh := &shaper{topK: dq.TopK, collapse: dq.Collapse, seen: make(map[uint64]bool, len(cur.Seen))}
	for _, h := range cur.Seen {
		sh.seen[h] = true
	}
	if len(cur.Seen)+dq.TopK > contract.MaxTopK {
		sh.topK = max(0, contract.MaxTopK-len(cur.Seen))
	}
	if sh.topK == 0 {
		res.Epoch = c.store.Epoch()
		return res, nil, nil
	}
	// The snapshot: the one retained for the cursor's epoch, else the
	// newest (documented: the pages then come from different epochs).
	sh.pin = c.shape.take(cur.Epoch, q.Cursor != "")
	if sh.pin == nil {
		sh.pin = newPinned(c.store.Snapshot())
	}
	defer sh.pin.release()
	// Embed the query text once (embedding.go).
	base := q
	embedded := false
	if len(q.Vector) == 0 && (dq.Mode == contract.Dense || dq.Mode == contract.Hybrid) {
		ev := dq
		if err := c.embedQuery(ctx, &ev); err != nil {
			return res, nil, err
		}
		base.Vector, base.Mode = ev.Vector, dq.Mode
		embedded = true
	}
	var deadline time.Time
	if q.Budget > 0 {
		deadline = time.Now().Add(q.Budget)
	}
	depth := min(contract.MaxTopK, len(cur.Seen)+sh.topK)
	if sh.collapse > 0 {
		depth = min(contract.MaxTopK, 4*depth)
	}
	base.TopK, base.Cursor, base.Collapse, base.Highlight = depth, "", 0, false
	pl, err := c.newPlan(ctx, base, sh.pin, true, embedded)
	if err != nil {
		return res, nil, err
	}
	var r retrieval
	var page []contract.Envelope
	for {
		sh.fetched, sh.pageIDs, sh.rest = 0, sh.pageIDs[:0], false
		budget := q.Budget
		if !deadline.IsZero() {
			budget = max(time.Until(deadline), time.Nanosecond)
		}
		r, err = pl.retrieve(ctx, depth, budget)
		if err != nil {
			return res, nil, err
		}
		page = sh.page(r.hits)
		short := len(sh.pageIDs) < sh.topK && sh.fetched >= depth && depth < contract.MaxTopK
		if !short || r.partial || (!deadline.IsZero() && time.Now().After(deadline)) {
			break
		}
		depth = min(contract.MaxTopK, 4*depth)
	}
	res, st, err := pl.finish(r, page)
	if err != nil {
		return res, nil, err
	}
	if dq.Highlight {
		hl := highlight.NewSyntax(c.an, dq.Text, dq.Syntax == contract.SyntaxOperators)
		for i := range res.Hits {
			res.Hits[i].Highlights = hl.Spans(res.Hits[i].Content)
		}
		if st != nil {
			for i := range st.Hits {
				st.Hits[i].Envelope.Highlights = hl.Spans(st.Hits[i].Envelope.Content)
			}
		}
	}
	total := len(cur.Seen) + len(sh.pageIDs)
	// A key that cannot be created (read-only directory) only means no
	// NextCursor; it fails the search that presents a cursor instead.
	if key, err := c.db.CursorKey(); err == nil && len(sh.pageIDs) == sh.topK && total < contract.MaxTopK && (sh.rest || sh.fetched >= depth) {
		if q.Cursor == "" {
			fp = c.fingerprint(&dq)
		}
		seen := append([]uint64(nil), cur.Seen...)
		for _, id := range sh.pageIDs {
			seen = append(seen, cursor.IDHash(id))
		}
		res.NextCursor = cursor.Encode(cursor.Data{Epoch: res.Epoch, Fingerprint: fp, Seen: seen}, key)
		c.shape.retain(res.Epoch, sh.pin)
	}
	return res, st, nil
}

// fingerprint identifies a query for its cursors: SHA-256 (first 16
// bytes) of the collection name, the defaulted query's JSON without
// top_k, budget_ms and cursor, and the principal.
func (c *Collection) fingerprint(q *contract.Query) [16]byte {
	fq := *q
	fq.TopK, fq.Budget, fq.Cursor, fq.Principal = 0, 0, "", nil
	h := sha256.New()
	io.WriteString(h, c.name)
	h.Write([]byte{0})
	b, _ := json.Marshal(fq)
	h.Write(b)
	if p := q.Principal; p != nil {
		pb, _ := json.Marshal(struct {
			N string
			G []string
			S []string
		}{p.Name, p.Groups, p.Namespaces})
		h.Write([]byte{1})
		h.Write(pb)
	}
	var fp [16]byte
	copy(fp[:], h.Sum(nil))
	return fp
}

// take returns a reference to the snapshot retained for epoch e (nil if
// none), after dropping expired entries.
func (s *shapeState) take(e uint64, want bool) *pinnedSnap {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for k, r := range s.retained {
		if now.After(r.expires) {
			delete(s.retained, k)
			r.p.release()
		}
	}
	if !want {
		return nil
	}
	if r, ok := s.retained[e]; ok {
		r.p.acquire()
		return r.p
	}
	return nil
}

// retain keeps p for CursorRetention from its first retention (a later
// page of the same epoch does not extend it), evicting the entry closest
// to expiry beyond maxRetainedSnapshots.
func (s *shapeState) retain(e uint64, p *pinnedSnap) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.retained == nil {
		s.retained = map[uint64]*retainedSnap{}
	}
	exp := time.Now().Add(CursorRetention)
	if _, ok := s.retained[e]; ok {
		// Reuse never extends the retention: a cursor replayed every
		// minute must not pin an epoch (and what was deleted or revoked
		// after it) forever.
		return
	}
	for len(s.retained) >= maxRetainedSnapshots {
		var oldest uint64
		var ot time.Time
		first := true
		for k, r := range s.retained {
			if first || r.expires.Before(ot) {
				oldest, ot, first = k, r.expires, false
			}
		}
		s.retained[oldest].p.release()
		delete(s.retained, oldest)
	}
	p.acquire()
	s.retained[e] = &retainedSnap{p: p, expires: exp}
}

// releaseAll drops every retained snapshot (collection close).
func (s *shapeState) releaseAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, r := range s.retained {
		r.p.release()
		delete(s.retained, k)
	}
}
