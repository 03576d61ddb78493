package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest/codegraph"
)

// expandRequest is the body of POST /v1/collections/{name}/expand: a
// retrieval-contract query whose top hits seed the walk, the number of
// seeds k₀ and the token budget of the chosen chunks' source text.
type expandRequest struct {
	Query       json.RawMessage `json:"query"`
	Seeds       int             `json:"seeds"`
	TokenBudget int             `json:"token_budget"`
}

// expandResponse is its answer: codegraph.ExpandResult, with graph false
// when the collection has no code graph (Options.Graphs; then the hits
// are the search's own, in order, within the budget). Epochs are shown to
// admin keys only.
type expandResponse struct {
	Hits         []contract.Envelope `json:"hits"`
	Paths        []string            `json:"paths"`
	Seeds        []string            `json:"seeds"`
	TokensUsed   int                 `json:"tokens_used"`
	BudgetTokens int                 `json:"budget_tokens"`
	Dropped      []contract.Dropped  `json:"dropped,omitempty"`
	Graph        bool                `json:"graph"`
	Epoch        uint64              `json:"epoch,omitempty"`
	GraphEpoch   uint64              `json:"graph_epoch,omitempty"`
	Visited      int                 `json:"visited"`
}

// expand serves the expand query mode (ingest/codegraph.Expand): seeds,
// personalized PageRank over the collection's graph, token budget;
// verified envelopes with a path per hit.
func (s *Server) expand(rq *request) (int, any, error) {
	c, err := s.collection(rq)
	if err != nil {
		return 0, nil, err
	}
	var req expandRequest
	if ae := decodeStrict(rq.body, "body", &req); ae != nil {
		return 0, nil, ae
	}
	var fes []contract.FieldError
	if req.Seeds < 0 || req.Seeds > contract.MaxTopK {
		fes = append(fes, contract.FieldError{Loc: []any{"body", "seeds"}, InputValue: req.Seeds, ErrorType: contract.ErrTypeOutOfRange,
			Message: "seeds out of range", ExpectedDomain: "integer 1..1000 (omitted = 10)"})
	}
	if req.TokenBudget < 0 || req.TokenBudget > 1<<20 {
		fes = append(fes, contract.FieldError{Loc: []any{"body", "token_budget"}, InputValue: req.TokenBudget, ErrorType: contract.ErrTypeOutOfRange,
			Message: "token_budget out of range", ExpectedDomain: "integer 1..1048576 (omitted = 4000)"})
	}
	if len(req.Query) == 0 {
		fes = append(fes, contract.FieldError{Loc: []any{"body", "query"}, ErrorType: contract.ErrTypeMissing,
			Message: "query is required", ExpectedDomain: "a JSON query"})
	}
	if len(fes) > 0 {
		return 0, nil, validation(fes...)
	}
	q, err := contract.DecodeQuery(req.Query)
	if err != nil {
		return 0, nil, err
	}
	if q.Budget == 0 || q.Budget > s.o.RequestTimeout {
		if q.Budget >= 0 {
			q.Budget = s.o.RequestTimeout
		}
	}
	q.Principal = rq.caller.principal
	var v *graph.View
	if st := s.o.Graphs[c.Name()]; st != nil {
		v = st.View()
	}
	res, err := codegraph.Expand(rq.ctx, c, v, q, codegraph.ExpandOptions{SeedK: req.Seeds, BudgetTokens: req.TokenBudget})
	if err != nil && !errors.Is(err, codegraph.ErrNoSeeds) {
		return 0, nil, err
	}
	out := expandResponse{Hits: res.Hits, Paths: res.Paths, Seeds: res.Seeds, TokensUsed: res.TokensUsed, BudgetTokens: res.BudgetTokens,
		Dropped: res.Dropped, Graph: v != nil, Visited: res.Visited}
	if out.Hits == nil {
		out.Hits, out.Paths, out.Seeds = []contract.Envelope{}, []string{}, []string{}
	}
	if !rq.hideEpoch() {
		out.Epoch, out.GraphEpoch = res.Epoch, res.GraphEpoch
	}
	return http.StatusOK, out, nil
}
