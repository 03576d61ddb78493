package engine

import (
	"context"
	"maps"
	"strings"

	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/contract"
)

// LexicalStats returns the BM25 statistics q's lexical retriever collects
// at the newest epoch over the hot and warm tiers: the number of rows,
// the sum of their lengths and the df of each of q's terms (prefix
// expansions included). The statistics of the shards of one collection,
// summed (contract.LexicalStats.Add) and passed back in
// Query.LexicalStats, make every shard score its documents as one
// collection holding all of them would, so a merge of the shards' top k
// by score is exact (the distributed-frequency phase of a fan-out; the
// shards must be read at the same versions in both phases). A query
// without text returns zero statistics. Prefix expansion is per shard:
// a prefix with more than MaxExpansions matching terms may expand to
// different terms on different shards. Errors: validation, a
// MultiTenant collection (its statistics are per tenant), ErrClosed.
func (c *Collection) LexicalStats(ctx context.Context, q contract.Query) (contract.LexicalStats, error) {
	var out contract.LexicalStats
	if err := c.check(ctx); err != nil {
		return out, err
	}
	q.LexicalStats, q.Mode, q.Vector, q.Cursor = nil, contract.Lexical, nil, ""
	if strings.TrimSpace(q.Text) == "" && len(q.Expansion) == 0 {
		return out, nil
	}
	if c.o.MultiTenant {
		return out, &contract.ValidationError{Errors: []contract.FieldError{{Loc: []any{"query"}, ErrorType: contract.ErrTypeConflict,
			Message: "a MultiTenant collection's lexical statistics are per tenant", ExpectedDomain: "a collection that is not MultiTenant"}}}
	}
	q.EnsureDefaults()
	if err := q.Validate(c.o.Dim, c.validateOpts()); err != nil {
		return out, err
	}
	pin := newPinned(c.store.Snapshot())
	defer pin.release()
	pl, err := c.newPlan(ctx, q, pin, true, false)
	if err != nil {
		return out, err
	}
	bq, expanded, _, segs, ok := c.lexicalQuery(pl.views, nil, &pl.q)
	if !ok {
		return out, nil
	}
	st := bm25.CollectStats(segs, append(bq.Terms(), expanded...))
	out.Docs, out.SumDocLen, out.DocFreq = st.N, st.SumDL, maps.Clone(st.DF)
	return out, nil
}
