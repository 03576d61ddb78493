package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine/contract"
)

// Query is a recall request. Subject is required and scopes everything.
type Query struct {
	Subject string    `json:"subject"`
	Text    string    `json:"text,omitempty"`
	Vector  []float32 `json:"vector,omitempty"`
	Kinds   []Kind    `json:"kinds,omitempty"`
	Key     string    `json:"key,omitempty"`
	// AsOf is the valid time asked about (zero: now): only records valid
	// then are returned, unless History.
	AsOf time.Time `json:"as_of,omitzero"`
	// KnownAt is the transaction time asked about (zero: now): the store
	// answers as it stood then, from the records recorded by KnownAt in
	// the states they had then (Record.KnownAt), so a later supersession,
	// merge or restatement is not seen. Records deleted since are gone
	// from every past too (forgetting erases). With KnownAt and no AsOf,
	// AsOf is KnownAt: "what did the store hold as current then".
	KnownAt time.Time `json:"known_at,omitzero"`
	// History also returns superseded records (every valid time).
	History bool `json:"history,omitempty"`
	// TopK is the number of hits, 1..1000 (0: 10).
	TopK int `json:"top_k,omitempty"`
	// TokenBudget bounds the framed text (contract.Stage; 0: none).
	TokenBudget int `json:"token_budget,omitempty"`
	// Budget is the search deadline (0: none).
	Budget time.Duration `json:"-"`
}

// Hit is one recalled record.
type Hit struct {
	Record *Record `json:"record"`
	// Score is the retrieval score in [0,1] times the record's Weight.
	Score float64 `json:"score"`
	// Framed is the record as evidence: sanitised, escaped and framed
	// (contract.Stage) with its trust, provenance and version, so a stored
	// instruction reaches a model as quoted data, never as an instruction.
	Framed string `json:"framed"`
	Tokens int    `json:"tokens"`
}

// Result is Recall's answer.
type Result struct {
	Hits []Hit `json:"hits"`
	// Text is every hit's Framed text, in order.
	Text  string `json:"text"`
	Nonce string `json:"nonce"`
	// Dropped lists hits left out by the token budget.
	Dropped []contract.Dropped `json:"dropped,omitempty"`
	Partial bool               `json:"partial,omitempty"`
}

// Recall returns subject's records matching q: hybrid search (lexical
// when the query has no vector and the collection no embedder; a query
// without text or vector lists the matching records, newest first)
// over the subject's records only, filtered by kind and key, by validity
// at AsOf (so expired and superseded records are left out and a keyed
// fact returns its value at AsOf) unless History; merged near-duplicates
// are never returned. Scores are multiplied by Weight. Every hit comes
// back framed as evidence (Hit.Framed, contract.Stage): trust,
// provenance and version in the frame, the content sanitised and
// escaped. With KnownAt, everything above is answered as the store held
// it at that transaction time (Query.KnownAt). Errors: ErrInvalid (no subject, a bad kind or TopK), the
// collection's search errors.
func (s *Store) Recall(ctx context.Context, q Query) (Result, error) {
	if strings.TrimSpace(q.Subject) == "" {
		return Result{}, fmt.Errorf("%w: subject is required", ErrInvalid)
	}
	for _, k := range q.Kinds {
		if !k.Valid() {
			return Result{}, fmt.Errorf("%w: kind %q", ErrInvalid, k)
		}
	}
	if q.TopK == 0 {
		q.TopK = contract.DefaultTopK
	}
	if q.TopK < 1 || q.TopK > contract.MaxTopK || q.TokenBudget < 0 {
		return Result{}, fmt.Errorf("%w: top_k %d or token_budget %d out of range", ErrInvalid, q.TopK, q.TokenBudget)
	}
	at := q.AsOf
	if at.IsZero() {
		at = q.KnownAt
	}
	if at.IsZero() {
		at = s.o.Now()
	}
	var hits []Hit
	var partial bool
	if strings.TrimSpace(q.Text) == "" && len(q.Vector) == 0 {
		hits = s.list(q, at)
	} else {
		var err error
		hits, partial, err = s.search(ctx, q, at)
		if err != nil {
			return Result{}, err
		}
	}
	if len(hits) > q.TopK {
		hits = hits[:q.TopK]
	}
	envs := make([]contract.Envelope, len(hits))
	for i, h := range hits {
		r := h.Record
		envs[i] = contract.Envelope{DocID: r.ID, Content: r.Content, SourceURI: r.Provenance,
			VersionHash: r.Version, Timestamp: r.RecordedAt, Score: min(1, max(0, h.Score)), Trust: r.Trust}
	}
	st, err := contract.Stage(envs, contract.StageOptions{TokenBudget: q.TokenBudget})
	if err != nil {
		return Result{}, err
	}
	byID := map[string]*Hit{}
	for i := range hits {
		byID[hits[i].Record.ID] = &hits[i]
	}
	res := Result{Nonce: st.Nonce, Text: st.Text, Dropped: st.Dropped, Partial: partial}
	now := s.o.Now()
	s.accessM.Lock()
	for _, sh := range st.Hits {
		h := byID[sh.Envelope.DocID]
		h.Framed, h.Tokens = sh.Framed, sh.Tokens
		res.Hits = append(res.Hits, *h)
		a := s.access[h.Record.ID]
		if a == nil {
			a = &accessInfo{}
			s.access[h.Record.ID] = a
		}
		a.n++
		a.last = now
	}
	s.accessM.Unlock()
	return res, nil
}

// view returns r as q sees it (as known at q.KnownAt, valid at at), or
// nil when q does not return it. Without KnownAt it returns r itself,
// which the caller must clone.
func (s *Store) view(r *Record, q Query, at time.Time) *Record {
	if !q.KnownAt.IsZero() {
		if r = r.KnownAt(q.KnownAt); r == nil {
			return nil
		}
	}
	if !visible(r, q, at) {
		return nil
	}
	return r
}

func visible(r *Record, q Query, at time.Time) bool {
	if r.Status == Merged {
		return false
	}
	if len(q.Kinds) > 0 && !slices.Contains(q.Kinds, r.Kind) {
		return false
	}
	if q.Key != "" && r.Key != q.Key {
		return false
	}
	return q.History || r.ValidAt(at)
}

// list is Recall without text or vector: the matching records, newest
// valid time first.
func (s *Store) list(q Query, at time.Time) []Hit {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []Hit
	for _, r := range s.subj[q.Subject] {
		if v := s.view(r, q, at); v != nil {
			if v == r {
				v = r.clone()
			}
			out = append(out, Hit{Record: v, Score: v.Weight})
		}
	}
	slices.SortFunc(out, func(a, b Hit) int {
		if c := b.Record.ValidFrom.Compare(a.Record.ValidFrom); c != 0 {
			return c
		}
		if c := b.Record.RecordedAt.Compare(a.Record.RecordedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Record.ID, b.Record.ID)
	})
	return out
}

// search runs the collection query. Subject, status, kind and key are
// keyword filters the engine compiles to bitmaps (no per-version scope
// test); validity at AsOf is checked on the in-memory records after
// retrieval, so the depth grows 4× (up to MaxTopK) while a full page
// comes back short.
func (s *Store) search(ctx context.Context, q Query, at time.Time) ([]Hit, bool, error) {
	fs := []contract.Filter{contract.Eq(fSubject, contract.String(q.Subject))}
	if q.KnownAt.IsZero() {
		// A record merged now may have been active at KnownAt: only the
		// current view filters on the stored status.
		fs = append(fs, contract.In(fStatus, contract.String(string(Active)), contract.String(string(Superseded))))
	}
	if len(q.Kinds) > 0 {
		vs := make([]contract.Value, len(q.Kinds))
		for i, k := range q.Kinds {
			vs[i] = contract.String(string(k))
		}
		fs = append(fs, contract.In(fKind, vs...))
	}
	if q.Key != "" {
		fs = append(fs, contract.Eq(fKey, contract.String(q.Key)))
	}
	f := contract.And(fs...)
	// Archived records stay memories: the cold tier is searched too.
	cq := contract.Query{Text: q.Text, Vector: q.Vector, Filter: &f, Budget: q.Budget,
		Tiers: []contract.Tier{contract.Hot, contract.Warm, contract.Cold}}
	switch {
	case len(q.Vector) > 0 && strings.TrimSpace(q.Text) != "":
		cq.Mode = contract.Hybrid
	case len(q.Vector) > 0:
		cq.Mode = contract.Dense
	case s.col.Options().Embedding != nil:
		cq.Mode = contract.Hybrid
	default:
		cq.Mode = contract.Lexical
	}
	depth := min(contract.MaxTopK, 2*q.TopK+8)
	for {
		cq.TopK = depth
		res, err := s.col.Search(ctx, cq)
		if err != nil {
			return nil, false, err
		}
		s.mu.RLock()
		var out []Hit
		for _, e := range res.Hits {
			id, _ := strings.CutPrefix(e.DocID, recPrefix)
			r := s.recs[id]
			if r == nil || r.Subject != q.Subject {
				continue // deleted since the search's snapshot
			}
			v := s.view(r, q, at)
			if v == nil {
				continue // not valid at AsOf, or changed since the search's snapshot
			}
			if v == r {
				v = r.clone()
			}
			out = append(out, Hit{Record: v, Score: e.Score * v.Weight})
		}
		s.mu.RUnlock()
		if len(out) >= q.TopK || len(res.Hits) < depth || depth == contract.MaxTopK || res.Partial {
			slices.SortStableFunc(out, func(a, b Hit) int {
				if a.Score != b.Score {
					if a.Score > b.Score {
						return -1
					}
					return 1
				}
				return strings.Compare(a.Record.ID, b.Record.ID)
			})
			return out, res.Partial, nil
		}
		depth = min(contract.MaxTopK, 4*depth)
	}
}
