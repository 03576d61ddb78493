package codegraph

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
)

// ExpandOptions bound one expansion. Zero fields take their defaults.
type ExpandOptions struct {
	// SeedK is k₀, the number of search hits that seed the walk. Default 10.
	SeedK int
	// BudgetTokens is S_max, the token budget of the chosen chunks' source
	// text (staging's estimate, ⌈bytes/4⌉). Default 4000.
	BudgetTokens int
	// PPR are the walk's parameters (graph.PPROptions; α = 0.85).
	PPR graph.PPROptions
}

// ExpandResult is the evidence an expansion returns.
type ExpandResult struct {
	// Hits are the chosen chunks' envelopes in PPR score order (Score is
	// the PPR score), verified when the query asks (Query.Verify).
	Hits []contract.Envelope `json:"hits"`
	// Paths[i] is Hits[i]'s path from a seed (graph.FormatPath); a seed's
	// path is its own name.
	Paths []string `json:"paths"`
	// Seeds are the seed chunks' ids, in search order.
	Seeds []string `json:"seeds"`
	// TokensUsed (of BudgetTokens) counts the chosen chunks' source text.
	TokensUsed   int `json:"tokens_used"`
	BudgetTokens int `json:"budget_tokens"`
	// Dropped lists chosen chunks removed by verification.
	Dropped []contract.Dropped `json:"dropped,omitempty"`
	// Epoch is the collection's epoch, GraphEpoch the graph view's.
	Epoch      uint64 `json:"epoch"`
	GraphEpoch uint64 `json:"graph_epoch"`
	// Visited and Pushes are the walk's cost: nodes that received mass,
	// push operations.
	Visited int `json:"visited"`
	Pushes  int `json:"pushes"`
}

// TokensOf is staging's token estimate of a chunk's source text: ⌈bytes/4⌉.
func TokensOf(content string, meta map[string]contract.Value) int {
	return (len(ingest.Snippet(content, meta)) + contract.DefaultBytesPerToken - 1) / contract.DefaultBytesPerToken
}

// ErrNoSeeds is returned by Expand when the search found no chunk that is
// a node of the graph.
var ErrNoSeeds = errors.New("codegraph: no search hit is in the graph")

// Expand answers q in expand mode: the top SeedK hits of ingest.Search
// (lexical, hybrid or dense per q.Mode) seed personalized PageRank over
// the view v (teleport weights: the hits' scores), and the chunks it
// ranks are added in score order while their source text fits
// BudgetTokens. Only chunks q's scope and principal may read are
// considered, and a chunk whose path from a seed passes through one the
// caller may not read (or through a file or package node) is not
// returned; the walk's scores may still flow through such nodes. The
// chosen chunks are returned through engine.Collection.Fetch, so they
// are verified like any hit. Errors:
// the search's, ErrNoSeeds, bad options. With a nil view there is no
// expansion: the hits themselves, in search order, while they fit.
func Expand(ctx context.Context, col *engine.Collection, v *graph.View, q contract.Query, o ExpandOptions) (*ExpandResult, error) {
	if o.SeedK == 0 {
		o.SeedK = 10
	}
	if o.BudgetTokens == 0 {
		o.BudgetTokens = 4000
	}
	if o.SeedK < 1 || o.SeedK > contract.MaxTopK || o.BudgetTokens < 1 {
		return nil, fmt.Errorf("codegraph: seed k %d (1..%d) or token budget %d (≥ 1) out of range", o.SeedK, contract.MaxTopK, o.BudgetTokens)
	}
	sq := q
	sq.TopK, sq.Cursor = o.SeedK, ""
	sq.Verify = false // the chosen chunks are verified below
	res, err := ingest.Search(ctx, col, sq)
	if err != nil {
		return nil, err
	}
	out := &ExpandResult{BudgetTokens: o.BudgetTokens, Epoch: res.Epoch}
	if v == nil {
		return seedsOnly(ctx, col, q, res.Hits, out)
	}
	out.GraphEpoch = v.Epoch()
	var seeds []graph.Seed
	for rank, h := range res.Hits {
		ids := v.ByDoc(h.DocID)
		if len(ids) == 0 {
			continue
		}
		out.Seeds = append(out.Seeds, h.DocID)
		w := h.Score
		if w <= 0 {
			w = 1 / float64(rank+2)
		}
		for _, id := range ids {
			seeds = append(seeds, graph.Seed{Node: id, Weight: w / float64(len(ids))})
		}
	}
	if len(seeds) == 0 {
		return out, ErrNoSeeds
	}
	sn, err := col.Snapshot()
	if err != nil {
		return nil, err
	}
	defer sn.Close()
	seen := map[string]int{} // doc → tokens, -1: not readable by the caller
	tokens := func(doc string) int {
		if t, ok := seen[doc]; ok {
			return t
		}
		t := -1
		if d, err := sn.Get(ctx, doc); err == nil && visible(&q, d) {
			t = TokensOf(d.Content, d.Metadata)
		}
		seen[doc] = t
		return t
	}
	cost := func(doc string) int {
		if t := tokens(doc); t >= 0 {
			return t
		}
		return o.BudgetTokens + 1 // never chosen
	}
	ex, err := graph.Expand(v, seeds, graph.ExpandOptions{PPR: o.PPR, BudgetTokens: o.BudgetTokens, Tokens: cost})
	if err != nil {
		return nil, err
	}
	out.Visited, out.Pushes = ex.PPR.Visited, ex.PPR.Pushes
	// A chunk reached only through a node the caller may not read (or a
	// node with no chunk: a file, a package) is not returned: its path
	// would name what the caller cannot see.
	kept := ex.Chosen[:0]
	for _, c := range ex.Chosen {
		ok := true
		for _, st := range c.Path {
			if n := v.Node(st.To); n == nil || n.DocID == "" || tokens(n.DocID) < 0 {
				ok = false
				break
			}
		}
		if ok {
			kept = append(kept, c)
		}
	}
	ex.Chosen = kept
	ids := make([]string, len(ex.Chosen))
	for i, c := range ex.Chosen {
		ids[i] = c.DocID
	}
	fr, err := col.Fetch(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	byID := map[string]int{}
	for i, c := range ex.Chosen {
		byID[c.DocID] = i
	}
	for _, h := range fr.Hits {
		c := ex.Chosen[byID[h.DocID]]
		h.Score = c.Score
		out.Hits = append(out.Hits, h)
		out.Paths = append(out.Paths, graph.FormatPath(v, c.Path))
		out.TokensUsed += c.Tokens
	}
	out.Dropped = fr.Dropped
	return out, nil
}

// seedsOnly is Expand without a graph: the hits in search order while
// their source text fits the budget, fetched (and verified) as Expand's.
func seedsOnly(ctx context.Context, col *engine.Collection, q contract.Query, hits []contract.Envelope, out *ExpandResult) (*ExpandResult, error) {
	var ids []string
	used := 0
	for _, h := range hits {
		out.Seeds = append(out.Seeds, h.DocID)
		if t := TokensOf(h.Content, h.Metadata); used+t <= out.BudgetTokens {
			used += t
			ids = append(ids, h.DocID)
		}
	}
	fr, err := col.Fetch(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	score := map[string]float64{}
	for _, h := range hits {
		score[h.DocID] = h.Score
	}
	for _, h := range fr.Hits {
		h.Score = score[h.DocID]
		out.Hits = append(out.Hits, h)
		out.Paths = append(out.Paths, "")
		out.TokensUsed += TokensOf(h.Content, h.Metadata)
	}
	out.Dropped = fr.Dropped
	return out, nil
}

// visible applies q's scope and principal to a document (as the engine's
// read path does).
func visible(q *contract.Query, d contract.Document) bool {
	return strings.HasPrefix(d.Namespace, q.Scope.Namespace) && strings.HasPrefix(d.SourceURI, q.Scope.URIPrefix) &&
		(q.Principal == nil || q.Principal.CanRead(d.Namespace, d.ACL))
}

// Neighbour is one caller or callee of a definition, with the call
// site's file and line.
type Neighbour struct {
	Key   string `json:"key"`
	Name  string `json:"name"`
	File  string `json:"file"`
	Line  int    `json:"line"` // the call site's line (in the caller's file)
	Count int    `json:"count"`
	DocID string `json:"doc_id"`
}

// Calls returns the CALLS neighbours of every live node whose Key is key
// or whose Name is key (a method's "Type.Method", a function's bare
// name): callers when in is true, callees otherwise, at most limit.
func Calls(v *graph.View, key string, in bool, limit int) []Neighbour {
	var out []Neighbour
	for _, id := range Resolve(v, key) {
		visit := func(e graph.Edge) bool {
			if e.Kind != graph.Calls {
				return true
			}
			other := e.To
			if in {
				other = e.From
			}
			n := v.Node(other)
			if n == nil {
				return true
			}
			file := n.File // the site is in the caller's file
			if src := v.Node(e.From); !in && src != nil {
				file = src.File
			}
			out = append(out, Neighbour{Key: n.Key, Name: n.Name, File: file, Line: int(e.Line), Count: int(e.Count), DocID: n.DocID})
			return len(out) < limit
		}
		if in {
			v.In(id, visit)
		} else {
			v.Out(id, visit)
		}
		if len(out) >= limit {
			break
		}
	}
	return out
}

// Resolve returns the live nodes a symbol names: the node with that Key,
// or else every func or type whose Name is the symbol or ends in
// "."+symbol's last part after a package qualifier ("strings.EqualFold"
// → Key ending in "/strings.EqualFold" or "strings.EqualFold"). It scans
// the view for names (O(nodes)); the Key lookup is O(1).
func Resolve(v *graph.View, symbol string) []graph.NodeID {
	if id := v.Lookup(symbol); id != graph.None {
		return []graph.NodeID{id}
	}
	var out []graph.NodeID
	for id := graph.NodeID(0); int(id) < v.N(); id++ {
		n := v.Node(id)
		if n == nil || (n.Kind != graph.Func && n.Kind != graph.Type) {
			continue
		}
		if n.Name == symbol || strings.HasSuffix(n.Key, "/"+symbol) || n.Key == symbol {
			out = append(out, id)
		}
	}
	return out
}
