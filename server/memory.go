package server

import (
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/memory"
)

// The memory routes (package engine/memory), registered by EnableMemory:
//
//	POST /v1/memory/remember     {"writes":[Write…]}          → {"outcomes":[Outcome…]}
//	POST /v1/memory/recall       Query                        → Result (framed hits)
//	POST /v1/memory/forget       {"subject","ids":[…]} | {"subject","all":true} → RollbackReport
//	GET  /v1/memory/history?subject=…&key=…&known_at=…       → {"records":[Record…],"framed":[…],"text","nonce"}
//	POST /v1/memory/rollback     {"provenance":"…"}  (admin)  → RollbackReport
//	POST /v1/memory/consolidate  {"subject":"…"}     (admin; "" = every subject)
//	POST /v1/memory/purge        {}                  (admin)  → PurgeReport
//
// The subject is the caller's to name only within its API key: an
// omitted subject is the key's principal name; a named one must be that
// name or lie under one of the key's namespace prefixes (else 403). Open
// mode (no keys) requires a subject. A write's trust is never raised by
// the route: memory.Remember stores derived or external_unverified only.
// These routes are the application's (the runtime's) API, so a write may
// state any evidence level, verified included; the MCP tools, the
// model's, may not claim verified.
// Recall's known_at and history's known_at (RFC 3339) ask what the store
// held at that transaction time (memory.Query.KnownAt, Store.HistoryAt).
// A version conflict is 409 (status "conflict", loc
// ["body","writes",i,"if_version"]) whose expected_domain is the current
// version.

// RememberRequest is the body of POST /v1/memory/remember.
type RememberRequest struct {
	Writes []memory.Write `json:"writes"`
}

// RememberResponse is its answer.
type RememberResponse struct {
	Outcomes []memory.Outcome `json:"outcomes"`
}

// ForgetRequest is the body of POST /v1/memory/forget.
type ForgetRequest struct {
	Subject string   `json:"subject,omitempty"`
	IDs     []string `json:"ids,omitempty"`
	All     bool     `json:"all,omitempty"`
}

// RollbackRequest is the body of POST /v1/memory/rollback.
type RollbackRequest struct {
	Provenance string `json:"provenance"`
}

// ConsolidateRequest is the body of POST /v1/memory/consolidate.
type ConsolidateRequest struct {
	Subject string `json:"subject"`
}

// HistoryResponse is the answer of GET /v1/memory/history. Records are
// data for the application; Framed and Text are what may reach a model.
type HistoryResponse struct {
	Records []*memory.Record `json:"records"`
	// Framed[i] is Records[i] as evidence: sanitised, escaped and framed
	// with its trust, provenance and version (contract.FrameHit), as
	// recall frames its hits, so a stored instruction reaches a model as
	// quoted data.
	Framed []string `json:"framed"`
	// Text is every Framed entry, oldest first.
	Text string `json:"text"`
	// Nonce is the per-request nonce every frame carries.
	Nonce string `json:"nonce"`
}

// maxMemoryWrites bounds one remember batch.
const maxMemoryWrites = 1000

// EnableMemory serves st's routes (above). Call it before serving.
func (s *Server) EnableMemory(st *memory.Store) {
	m := &memoryRoutes{s: s, st: st}
	s.handle("POST", "/v1/memory/remember", mutating, m.remember)
	s.handle("POST", "/v1/memory/recall", 0, m.recall)
	s.handle("POST", "/v1/memory/forget", mutating, m.forget)
	s.handle("GET", "/v1/memory/history", 0, m.history)
	s.handle("POST", "/v1/memory/rollback", mutating|admin, m.rollback)
	s.handle("POST", "/v1/memory/consolidate", mutating|admin, m.consolidate)
	s.handle("POST", "/v1/memory/purge", mutating|admin, m.purge)
}

type memoryRoutes struct {
	s  *Server
	st *memory.Store
}

// subject resolves the request's subject (see the route notes).
func (m *memoryRoutes) subject(rq *request, given string, loc []any) (string, error) {
	p := rq.caller.principal
	switch {
	case p == nil && given == "":
		return "", validation(contract.FieldError{Loc: loc, ErrorType: contract.ErrTypeMissing, Message: "subject is required", ExpectedDomain: "a subject (user, repository or tenant)"})
	case p == nil:
		return given, nil
	case given == "" || given == p.Name || p.AllowsNamespace(given):
		if given == "" {
			given = p.Name
		}
		return given, nil
	}
	return "", newErr(http.StatusForbidden, StatusForbidden, contract.ErrTypeNamespaceForbidden, "this API key may not name that subject", loc, clip(given),
		"the key's principal name or a subject under one of its namespace prefixes")
}

// memoryErr maps the store's errors.
func memoryErr(err error) error {
	var ce *memory.ConflictError
	switch {
	case errors.As(err, &ce):
		cur := "none (the key or record has no current version)"
		if ce.Current != nil {
			cur = ce.Current.Version
		}
		return newErr(http.StatusConflict, StatusConflict, contract.ErrTypeConflict, "version conflict: re-read (history), merge and write with the current version",
			[]any{"body", "writes", ce.Index, "if_version"}, ce.Expected, cur)
	case errors.Is(err, memory.ErrNotFound):
		return newErr(http.StatusNotFound, StatusNotFound, "not_found", err.Error(), []any{"body", "ids"}, nil, "ids of the subject's records")
	case errors.Is(err, memory.ErrInvalid):
		return newErr(http.StatusBadRequest, StatusValidation, contract.ErrTypeInvalidFormat, err.Error(), []any{"body"}, nil, "")
	}
	return err
}

func (m *memoryRoutes) remember(rq *request) (int, any, error) {
	var req RememberRequest
	if ae := decodeStrict(rq.body, "body", &req); ae != nil {
		return 0, nil, ae
	}
	if len(req.Writes) == 0 || len(req.Writes) > maxMemoryWrites {
		return 0, nil, validation(contract.FieldError{Loc: []any{"body", "writes"}, InputValue: len(req.Writes), ErrorType: contract.ErrTypeOutOfRange,
			Message: "writes must hold 1..1000 writes", ExpectedDomain: "1..1000 writes"})
	}
	for i := range req.Writes {
		sub, err := m.subject(rq, req.Writes[i].Subject, []any{"body", "writes", i, "subject"})
		if err != nil {
			return 0, nil, err
		}
		req.Writes[i].Subject = sub
	}
	out, err := m.st.Remember(rq.ctx, req.Writes)
	if err != nil {
		return 0, nil, memoryErr(err)
	}
	return http.StatusOK, RememberResponse{Outcomes: out}, nil
}

func (m *memoryRoutes) recall(rq *request) (int, any, error) {
	var q memory.Query
	if ae := decodeStrict(rq.body, "body", &q); ae != nil {
		return 0, nil, ae
	}
	sub, err := m.subject(rq, q.Subject, []any{"body", "subject"})
	if err != nil {
		return 0, nil, err
	}
	q.Subject = sub
	q.Budget = m.s.o.RequestTimeout - min(m.s.o.RequestTimeout/10, 100*time.Millisecond)
	res, err := m.st.Recall(rq.ctx, q)
	if err != nil {
		return 0, nil, memoryErr(err)
	}
	if res.Hits == nil {
		res.Hits = []memory.Hit{}
	}
	return http.StatusOK, res, nil
}

func (m *memoryRoutes) forget(rq *request) (int, any, error) {
	var req ForgetRequest
	if ae := decodeStrict(rq.body, "body", &req); ae != nil {
		return 0, nil, ae
	}
	sub, err := m.subject(rq, req.Subject, []any{"body", "subject"})
	if err != nil {
		return 0, nil, err
	}
	var rep memory.RollbackReport
	switch {
	case req.All && len(req.IDs) == 0:
		rep, err = m.st.DeleteSubject(rq.ctx, sub)
	case !req.All && len(req.IDs) > 0:
		rep, err = m.st.Delete(rq.ctx, sub, req.IDs)
	default:
		return 0, nil, validation(contract.FieldError{Loc: []any{"body", "ids"}, ErrorType: contract.ErrTypeMissing,
			Message: "give ids or all (not both)", ExpectedDomain: `{"ids":[…]} or {"all":true}`})
	}
	if err != nil {
		return 0, nil, memoryErr(err)
	}
	return http.StatusOK, rep, nil
}

func (m *memoryRoutes) history(rq *request) (int, any, error) {
	qv := rq.r.URL.Query()
	sub, err := m.subject(rq, qv.Get("subject"), []any{"query", "subject"})
	if err != nil {
		return 0, nil, err
	}
	var knownAt time.Time
	if v := qv.Get("known_at"); v != "" {
		if knownAt, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return 0, nil, validation(contract.FieldError{Loc: []any{"query", "known_at"}, InputValue: clip(v), ErrorType: contract.ErrTypeInvalidFormat,
				Message: "known_at is not an RFC 3339 date-time", ExpectedDomain: "e.g. 2026-03-01T09:00:00Z"})
		}
	}
	recs := m.st.HistoryAt(sub, qv.Get("key"), knownAt)
	if recs == nil {
		recs = []*memory.Record{}
	}
	resp := HistoryResponse{Records: recs, Framed: make([]string, len(recs)), Nonce: frameNonce()}
	var text strings.Builder
	for i, r := range recs {
		f, err := contract.FrameHit(contract.Envelope{DocID: r.ID, Content: r.Content, SourceURI: r.Provenance,
			VersionHash: r.Version, Timestamp: r.RecordedAt, Score: 1, Trust: r.Trust}, resp.Nonce)
		if err != nil {
			return 0, nil, err
		}
		resp.Framed[i] = f
		text.WriteString(f)
	}
	resp.Text = text.String()
	return http.StatusOK, resp, nil
}

// frameNonce returns a fresh 128-bit frame nonce, as contract.Stage draws
// one.
func frameNonce() string { return rand.Text() }

func (m *memoryRoutes) rollback(rq *request) (int, any, error) {
	var req RollbackRequest
	if ae := decodeStrict(rq.body, "body", &req); ae != nil {
		return 0, nil, ae
	}
	if req.Provenance == "" {
		return 0, nil, validation(contract.FieldError{Loc: []any{"body", "provenance"}, ErrorType: contract.ErrTypeMissing,
			Message: "provenance is required", ExpectedDomain: "a provenance URI"})
	}
	rep, err := m.st.Rollback(rq.ctx, req.Provenance)
	if err != nil {
		return 0, nil, memoryErr(err)
	}
	return http.StatusOK, rep, nil
}

func (m *memoryRoutes) consolidate(rq *request) (int, any, error) {
	var req ConsolidateRequest
	if len(rq.body) > 0 {
		if ae := decodeStrict(rq.body, "body", &req); ae != nil {
			return 0, nil, ae
		}
	}
	rep, err := m.st.Consolidate(rq.ctx, req.Subject)
	if err != nil {
		return 0, nil, memoryErr(err)
	}
	return http.StatusOK, rep, nil
}

func (m *memoryRoutes) purge(rq *request) (int, any, error) {
	rep, err := m.st.Purge(rq.ctx)
	if err != nil {
		return 0, nil, memoryErr(err)
	}
	return http.StatusOK, rep, nil
}
