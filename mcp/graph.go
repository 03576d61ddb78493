package mcp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/ingest/codegraph"
)

// The code-graph arguments, present when Options.Graph is set: search's
// expand (the hits are seeds of a personalized PageRank walk over the
// graph, fitted to a token budget) and find_definition's calls (the
// symbol's callers or callees instead of its definitions).
const (
	// expandProp and pathsProp join search's schemas.
	expandProp = `,"expand":{"type":"integer","minimum":100,"maximum":%d,"description":"token budget; widen the top_k hits over the code graph"}`
	pathsProp  = `,"paths":{"type":"array"}`
	// callsProp and entriesProp join find_definition's schemas.
	callsProp   = `,"calls":{"enum":["callers","callees"],"description":"instead: callers or callees, with call sites (top_k default 20)"}`
	entriesProp = `,"entries":{"type":"array"}`
)

// expandArgs are search's arguments with expand set: the query, its mode,
// the number of seeds (top_k) and the token budget (expand).
type expandArgs struct {
	Query       string
	Mode        string
	Seeds       *int
	TokenBudget *int
}

// expandResult is search's structured content with expand: the staged hits (as
// search's), each hit's path from a seed, the source tokens chosen
// against the walk's budget, and the framed tokens.
type expandResult struct {
	Hits         []stagedHit `json:"hits"`
	Paths        []string    `json:"paths"`
	TokensUsed   int         `json:"tokens_used"`
	BudgetTokens int         `json:"budget_tokens"`
	Tokens       int         `json:"tokens"`
	Dropped      int         `json:"dropped,omitempty"`
	Nonce        string      `json:"nonce"`
}

func runExpand(ctx context.Context, c *call, a *expandArgs) (expandResult, string, error) {
	col, err := c.s.collection()
	if err != nil {
		return expandResult{}, "", err
	}
	budget := c.s.o.TokenBudget
	if a.TokenBudget != nil {
		budget = *a.TokenBudget
	}
	k := DefaultTopK
	if a.Seeds != nil {
		k = *a.Seeds
	}
	q := c.query(a.Query, a.Mode, nil, &k, k, "")
	q.Verify = true
	// The walk's budget counts source text; a quarter is left for frames.
	res, err := codegraph.Expand(ctx, col, c.s.o.Graph.View(), q, codegraph.ExpandOptions{SeedK: k, BudgetTokens: budget * 3 / 4})
	if errors.Is(err, codegraph.ErrNoSeeds) {
		return expandResult{Hits: []stagedHit{}, Paths: []string{}, BudgetTokens: budget * 3 / 4}, "no hits\n", nil
	}
	if err != nil {
		return expandResult{}, "", rebaseQuery(err)
	}
	st, err := contract.Stage(res.Hits, contract.StageOptions{TokenBudget: budget, MaxTokensPerHit: budget, Nonce: c.nonce})
	if err != nil {
		return expandResult{}, "", err
	}
	out := expandResult{Hits: []stagedHit{}, Paths: []string{}, TokensUsed: res.TokensUsed, BudgetTokens: res.BudgetTokens,
		Tokens: st.TokensUsed, Dropped: len(res.Dropped) + len(st.Dropped), Nonce: st.Nonce}
	path := map[string]string{}
	for i, h := range res.Hits {
		path[h.DocID], _ = contract.Sanitize(res.Paths[i])
	}
	var paths strings.Builder
	for _, h := range st.Hits {
		e := h.Envelope
		out.Hits = append(out.Hits, stagedHit{DocID: e.DocID, SourceURI: e.SourceURI, Score: e.Score, Trust: e.Trust,
			VersionHash: e.VersionHash, Content: ingest.Snippet(e.Content, e.Metadata), Cut: h.Cut})
		out.Paths = append(out.Paths, path[e.DocID])
		paths.WriteString(path[e.DocID] + "\n")
	}
	if len(st.Hits) == 0 {
		return out, "no hits\n", nil
	}
	// The paths name indexed code: framed as evidence like the hits.
	pf, err := contract.FrameHit(contract.Envelope{DocID: "paths", SourceURI: "graph:paths", Content: paths.String(), Score: 1,
		Trust: contract.Derived, VersionHash: engine.VersionHash([]byte(paths.String()))}, c.nonce)
	if err != nil {
		return expandResult{}, "", err
	}
	return out, pf + st.Text, nil
}

// callsArgs are find_definition's arguments with calls set: the symbol,
// the direction (callers or callees) and the limit (top_k).
type callsArgs struct {
	Symbol    string
	Direction string
	Limit     *int
}

// callEntry is one caller or callee the caller may read.
type callEntry struct {
	Name      string `json:"name"`
	File      string `json:"file"`
	Line      int    `json:"line"`
	Count     int    `json:"count"`
	SourceURI string `json:"source_uri"`
}

type callsResult struct {
	Entries []callEntry `json:"entries"`
	Nonce   string      `json:"nonce"`
}

// runCalls lists the graph's CALLS neighbours of the symbol (its callers:
// incoming edges; its callees: outgoing) whose chunks the caller may read
// (engine.Collection.Fetch applies scope and principal), framed as
// evidence.
func runCalls(ctx context.Context, c *call, a *callsArgs) (callsResult, string, error) {
	in := a.Direction == "callers"
	col, err := c.s.collection()
	if err != nil {
		return callsResult{}, "", err
	}
	limit := 20
	if a.Limit != nil {
		limit = *a.Limit
	}
	v := c.s.o.Graph.View()
	ns := codegraph.Calls(v, a.Symbol, in, 4*limit)
	var ids []string
	for _, n := range ns {
		if n.DocID != "" {
			ids = append(ids, n.DocID)
		}
	}
	q := c.query("", "", nil, nil, 1, "")
	vis, err := col.Fetch(ctx, q, ids)
	if err != nil {
		return callsResult{}, "", err
	}
	uri := map[string]string{}
	for _, h := range vis.Hits {
		uri[h.DocID] = h.SourceURI
	}
	out := callsResult{Entries: []callEntry{}, Nonce: c.nonce}
	var b strings.Builder
	for _, n := range ns {
		u, ok := uri[n.DocID]
		if !ok || len(out.Entries) == limit {
			continue
		}
		name, _ := contract.Sanitize(n.Name)
		e := callEntry{Name: name, File: safeName(filepath.Base(n.File)), Line: n.Line, Count: n.Count, SourceURI: u}
		out.Entries = append(out.Entries, e)
		fmt.Fprintf(&b, "%s:%d %s (%d sites) %s\n", e.File, e.Line, e.Name, e.Count, e.SourceURI)
	}
	if len(out.Entries) == 0 {
		return out, "no calls found\n", nil
	}
	id := "callees:"
	if in {
		id = "callers:"
	}
	text, err := contract.FrameHit(contract.Envelope{DocID: id + clip(a.Symbol), SourceURI: "graph:" + id, Content: b.String(), Score: 1,
		Trust: contract.Derived, VersionHash: engine.VersionHash([]byte(b.String()))}, c.nonce)
	return out, text, err
}

// rankedMap is repo_map over the code graph (Options.Graph): signatures
// ranked by PageRank personalised to the request — the files under path
// (when one is given) and the names and paths in focus — fitted to the
// budget within ±15% (codegraph.RankedMap), of files the caller may read
// under top, shown relative to their root.
func (c *call) rankedMap(cat *catalog, vis *visibility, top *dir, a *mapArgs, budget int) (mapResult, string, error) {
	abs := filepath.Join(c.s.roots[top.key.root], filepath.FromSlash(top.key.rel))
	o := codegraph.MapOptions{Include: func(f string) (string, bool) {
		cf := cat.byAbs[f]
		if cf == nil || !vis.file[cf.idx] || cf.idx < top.first || cf.idx >= top.last {
			return "", false
		}
		return safeName(cf.rel), true
	}}
	if top.key.rel != "" {
		o.Files = append(o.Files, abs+string(filepath.Separator))
	}
	for _, w := range strings.Fields(a.Focus) {
		if strings.ContainsAny(w, "/\\") || strings.HasSuffix(w, ".go") {
			o.Files = append(o.Files, filepath.Join(c.s.roots[top.key.root], filepath.FromSlash(w)))
		} else {
			o.Names = append(o.Names, w)
		}
	}
	// The frame costs tokens too: the map gets what is left.
	o.BudgetTokens = max(1, budget-(frameOverhead(abs)+3)/contract.DefaultBytesPerToken)
	body, _ := codegraph.RankedMap(c.s.o.Graph.View(), o)
	res := mapResult{Path: top.key.rel, Files: vis.count(top.first, top.last), Nonce: c.nonce}
	res.ShownFiles = strings.Count(body, ":\n")
	res.Truncated = res.ShownFiles < res.Files
	text, err := frameTree(c, top, body)
	if err != nil {
		return mapResult{}, "", err
	}
	res.Tokens = (len(text) + contract.DefaultBytesPerToken - 1) / contract.DefaultBytesPerToken
	return res, text, nil
}
