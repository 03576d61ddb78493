package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/ingest"
)

// The tool definitions. Every input schema is closed
// (additionalProperties: false) with its units, enums and ranges; every
// output schema types the fields a model acts on (the text content
// carries the rest) and requires none, so a tool error's structured
// content (the error shape) validates too. They are kept terse on purpose:
// every tool any caller can see, an admin caller with the graph, memory
// and job families included, costs at most MaxDefinitionTokens together
// (TestDefinitionsBudgetOnTheWire).
const (
	searchIn = `{"type":"object","additionalProperties":false,"required":["query"],"properties":{` +
		`"query":{"type":"string","minLength":1,"maxLength":4096},` +
		`"mode":{"enum":["lexical","dense","hybrid"],"default":"lexical"},` +
		`"filter":{"type":"object","description":"{\"eq\":{\"field\":\"lang\",\"value\":\"go\"}}; ops eq in range prefix exists and or not; fields lang path kind symbol names"},` +
		`"top_k":{"type":"integer","minimum":1,"maximum":%d,"default":10},` +
		`"cursor":{"type":"string","maxLength":16384}%s}}`
	hitsOut = `{"type":"object","properties":{"hits":{"type":"array"},"next_cursor":{"type":"string"}%s}}`
	defOut  = `{"type":"object","properties":{"hits":{"type":"array"}%s}}`

	defIn = `{"type":"object","additionalProperties":false,"required":["symbol"],"properties":{` +
		`"symbol":{"type":"string","pattern":"^[A-Za-z_]\\w*(\\.[A-Za-z_]\\w*)?$","maxLength":256,"description":"Name, Type.Method or pkg.Name"},` +
		`"top_k":{"type":"integer","minimum":1,"maximum":%d,"default":5}%s}}`

	readIn = `{"type":"object","additionalProperties":false,"properties":{` +
		`"uri":{"type":"string","minLength":1,"maxLength":4096,"description":"source_uri or path"},` +
		`"start_line":{"type":"integer","minimum":1},` +
		`"end_line":{"type":"integer","minimum":1},` +
		`"cursor":{"type":"string","maxLength":8192}}}`
	readOut = `{"type":"object","properties":{"uri":{"type":"string"},"truncated":{"type":"boolean"},"next_cursor":{"type":"string"}}}`

	listIn = `{"type":"object","additionalProperties":false,"properties":{` +
		`"path":{"type":"string","maxLength":4096},` +
		`"limit":{"type":"integer","minimum":1,"maximum":%d,"default":100},` +
		`"cursor":{"type":"string","maxLength":8192}}}`
	listOut = `{"type":"object","properties":{"entries":{"type":"array"},"next_cursor":{"type":"string"}}}`

	mapIn = `{"type":"object","additionalProperties":false,"properties":{` +
		`"path":{"type":"string","maxLength":4096},` +
		`"token_budget":{"type":"integer","minimum":100,"maximum":%d},` +
		`"symbols_per_file":{"type":"integer","minimum":0,"maximum":10,"default":3},` +
		`"focus":{"type":"string","maxLength":1024,"description":"names, files to rank first"}}}`
	mapOut = `{"type":"object","properties":{"files":{"type":"integer"}}}`
)

// registerTools registers every tool. A new tool is an argument struct
// with a validate method, a run function and one line here.
func (s *Server) registerTools() {
	k := s.o.MaxTopK
	expand, paths, calls, entries := "", "", "", "" // the code-graph arguments (graph.go)
	if s.o.Graph != nil {
		expand, paths, calls, entries = fmt.Sprintf(expandProp, s.o.TokenBudget), pathsProp, callsProp, entriesProp
	}
	register(s, "search", "Search the indexed code and docs.", fmt.Sprintf(searchIn, k, expand), fmt.Sprintf(hitsOut, paths), runSearch)
	register(s, "find_definition", "Definitions of a symbol.", fmt.Sprintf(defIn, k, calls), fmt.Sprintf(defOut, entries), runFindDefinition)
	register(s, "read", "Read lines of an indexed file; long spans keep head and tail.", readIn, readOut, runRead)
	register(s, "list", "List a directory of the indexed tree.", fmt.Sprintf(listIn, MaxListLimit), listOut, runList)
	register(s, "repo_map", "Token-budgeted map: directories, files, top symbols.", fmt.Sprintf(mapIn, s.o.TokenBudget), mapOut, runRepoMap)
	s.registerJobTools()
}

// --- search ---

type searchArgs struct {
	Query string `json:"query"`
	Mode  string `json:"mode"`
	// FilterJSON is decoded by validate into Filter, so that a filter's
	// decoding errors keep their place under "filter".
	FilterJSON json.RawMessage  `json:"filter"`
	Filter     *contract.Filter `json:"-"`
	TopK       *int             `json:"top_k"`
	Cursor     string           `json:"cursor"`
	// Expand is the token budget of a walk over the code graph from the
	// hits (Options.Graph only).
	Expand *int `json:"expand"`
}

func (a *searchArgs) validate(c *call) []contract.FieldError {
	var fes []contract.FieldError
	fes = append(fes, checkText([]any{"arguments", "query"}, a.Query, 1, 4096)...)
	switch a.Mode {
	case "", "lexical", "dense", "hybrid":
	default:
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "mode"}, InputValue: clip(a.Mode), ErrorType: contract.ErrTypeUnknownValue,
			Message: "unknown mode", ExpectedDomain: "lexical | dense | hybrid"})
	}
	fes = append(fes, checkTopK(a.TopK, c.s.o.MaxTopK)...)
	if len(a.Cursor) > contract.MaxCursorBytes {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "cursor"}, InputValue: len(a.Cursor), ErrorType: contract.ErrTypeOutOfRange,
			Message: "cursor too long", ExpectedDomain: fmt.Sprintf("at most %d bytes", contract.MaxCursorBytes)})
	}
	if a.Expand != nil {
		fes = append(fes, a.checkExpand(c)...)
	}
	if raw := bytes.TrimSpace(a.FilterJSON); len(raw) > 0 && string(raw) != "null" {
		var f contract.Filter
		if err := contract.Decode(bytes.NewReader(raw), "filter", &f); err != nil {
			fes = append(fes, rebase(err, []any{"arguments", "filter"})...)
		} else if err := f.Validate(); err != nil {
			fes = append(fes, rebase(err, []any{"arguments", "filter"})...)
		} else {
			a.Filter = &f
		}
	}
	return fes
}

// query builds the contract query: the model's text, mode, filter, top_k
// and cursor; the runtime's scope, principal, deadline.
func (c *call) query(text, mode string, f *contract.Filter, topK *int, def int, cursor string) contract.Query {
	k := def
	if topK != nil {
		k = min(*topK, c.s.o.MaxTopK)
	}
	m := contract.Lexical
	if mode != "" {
		m = contract.Mode(mode)
	}
	return contract.Query{Text: text, Mode: m, Filter: f, TopK: k, Cursor: cursor,
		Scope:     contract.Scope{Namespace: c.s.o.Namespace},
		Principal: c.caller.Principal,
		Budget:    searchBudget(c.s.o.Deadline)}
}

// searchBudget is the engine's contract Budget within a call's deadline:
// a tenth (at most 100 ms) is left for staging and the reply, so a slow
// search comes back partial (partial: true) rather than as a timeout.
func searchBudget(deadline time.Duration) time.Duration {
	return deadline - min(deadline/10, 100*time.Millisecond)
}

// hitsResult is search's and find_definition's structured content.
type hitsResult struct {
	Hits       []stagedHit `json:"hits"`
	NextCursor string      `json:"next_cursor,omitempty"`
	Partial    bool        `json:"partial"`
	Reason     string      `json:"reason,omitempty"`
	Dropped    int         `json:"dropped,omitempty"`
	Tokens     int         `json:"tokens"`
	Nonce      string      `json:"nonce"`
}

// stagedHit is one envelope as staged for the model: sanitised (and
// possibly cut) content, with what sanitising removed.
type stagedHit struct {
	DocID       string                  `json:"doc_id"`
	SourceURI   string                  `json:"source_uri"`
	Score       float64                 `json:"score"`
	Trust       contract.Trust          `json:"trust"`
	VersionHash string                  `json:"version_hash"`
	Symbol      string                  `json:"symbol,omitempty"`
	Kind        string                  `json:"kind,omitempty"`
	Content     string                  `json:"content"`
	Cut         *contract.Cut           `json:"cut,omitempty"`
	Sanitized   *contract.SanitizeStats `json:"sanitized,omitempty"`
}

// checkExpand validates expand: only on a server with the code graph, in
// 100..Options.TokenBudget, without a filter or a cursor.
func (a *searchArgs) checkExpand(c *call) []contract.FieldError {
	loc := []any{"arguments", "expand"}
	if c.s.o.Graph == nil {
		return []contract.FieldError{{Loc: loc, InputValue: "expand", ErrorType: contract.ErrTypeUnknownField,
			Message: `unknown field "expand"`, ExpectedDomain: "a field of the tool's input schema (expand needs the code graph)"}}
	}
	var fes []contract.FieldError
	if *a.Expand < 100 || *a.Expand > c.s.o.TokenBudget {
		fes = append(fes, contract.FieldError{Loc: loc, InputValue: *a.Expand, ErrorType: contract.ErrTypeOutOfRange,
			Message: fmt.Sprintf("expand must be in [100, %d]", c.s.o.TokenBudget), ExpectedDomain: fmt.Sprintf("[100, %d] tokens", c.s.o.TokenBudget)})
	}
	if raw := bytes.TrimSpace(a.FilterJSON); len(raw) > 0 && string(raw) != "null" {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "filter"}, InputValue: nil, ErrorType: contract.ErrTypeUnknownField,
			Message: "filter does not apply with expand", ExpectedDomain: "no filter when expand is set"})
	}
	if a.Cursor != "" {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "cursor"}, InputValue: clip(a.Cursor), ErrorType: contract.ErrTypeUnknownField,
			Message: "cursor does not apply with expand", ExpectedDomain: "no cursor when expand is set"})
	}
	return fes
}

// runSearch runs a search, or with expand a walk over the code graph
// from its hits (runExpand).
func runSearch(ctx context.Context, c *call, a *searchArgs) (any, string, error) {
	if a.Expand != nil {
		return runExpand(ctx, c, &expandArgs{Query: a.Query, Mode: a.Mode, Seeds: a.TopK, TokenBudget: a.Expand})
	}
	return c.searchHits(ctx, c.query(a.Query, a.Mode, a.Filter, a.TopK, DefaultTopK, a.Cursor))
}

// searchHits runs q on the engine and stages the hits with the call's
// nonce and the configured budgets.
func (c *call) searchHits(ctx context.Context, q contract.Query) (hitsResult, string, error) {
	col, err := c.s.collection()
	if err != nil {
		return hitsResult{}, "", err
	}
	res, err := col.Search(ctx, q)
	if err != nil {
		return hitsResult{}, "", rebaseQuery(err)
	}
	st, err := contract.Stage(res.Hits, contract.StageOptions{TokenBudget: c.s.o.TokenBudget, MaxTokensPerHit: c.s.o.MaxTokensPerHit, Nonce: c.nonce})
	if err != nil {
		return hitsResult{}, "", err
	}
	out := hitsResult{Hits: make([]stagedHit, 0, len(st.Hits)), NextCursor: res.NextCursor, Partial: res.Partial, Reason: res.Reason,
		Dropped: len(res.Dropped) + len(st.Dropped), Tokens: st.TokensUsed, Nonce: st.Nonce}
	for _, h := range st.Hits {
		e := h.Envelope
		sh := stagedHit{DocID: e.DocID, SourceURI: e.SourceURI, Score: e.Score, Trust: e.Trust, VersionHash: e.VersionHash,
			Content: ingest.Snippet(e.Content, e.Metadata), Cut: h.Cut}
		if v, ok := e.Metadata[ingest.MetaSymbol]; ok {
			sh.Symbol, _ = v.Str()
			sh.Symbol, _ = contract.Sanitize(sh.Symbol)
		}
		if v, ok := e.Metadata[ingest.MetaKind]; ok {
			sh.Kind, _ = v.Str()
			sh.Kind, _ = contract.Sanitize(sh.Kind)
		}
		if h.Sanitized.Changed() {
			s := h.Sanitized
			sh.Sanitized = &s
		}
		out.Hits = append(out.Hits, sh)
	}
	text := st.Text
	if len(st.Hits) == 0 {
		text = "no hits\n"
	}
	if res.NextCursor != "" {
		text += "more hits: call again with cursor=next_cursor\n"
	}
	if res.Partial {
		text += "partial result: the deadline passed\n"
	}
	return out, text, nil
}

// --- find_definition ---

type defArgs struct {
	Symbol string `json:"symbol"`
	TopK   *int   `json:"top_k"`
	// Calls (callers | callees; Options.Graph only) asks for the
	// symbol's callers or callees instead of its definitions.
	Calls string `json:"calls"`
}

var symbolRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

func (a *defArgs) validate(c *call) []contract.FieldError {
	var fes []contract.FieldError
	if len(a.Symbol) > 256 || !symbolRE.MatchString(a.Symbol) {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "symbol"}, InputValue: clip(a.Symbol), ErrorType: contract.ErrTypeInvalidFormat,
			Message: "symbol is not an identifier", ExpectedDomain: "Name, Type.Method or pkg.Name (at most 256 bytes)"})
	}
	switch {
	case a.Calls == "":
	case c.s.o.Graph == nil:
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "calls"}, InputValue: "calls", ErrorType: contract.ErrTypeUnknownField,
			Message: `unknown field "calls"`, ExpectedDomain: "a field of the tool's input schema (calls needs the code graph)"})
	case a.Calls != "callers" && a.Calls != "callees":
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "calls"}, InputValue: clip(a.Calls), ErrorType: contract.ErrTypeUnknownValue,
			Message: "unknown calls direction", ExpectedDomain: "callers | callees"})
	}
	return append(fes, checkTopK(a.TopK, c.s.o.MaxTopK)...)
}

// runFindDefinition looks the name up in the "names" keyword field that
// ingestion writes for every Go declaration (a filter the engine applies
// while generating BM25 candidates), ranking by BM25 of the whole symbol
// (a qualifier — package or receiver — matches the chunk header's path
// and names).
func runFindDefinition(ctx context.Context, c *call, a *defArgs) (any, string, error) {
	if a.Calls != "" {
		return runCalls(ctx, c, &callsArgs{Symbol: a.Symbol, Direction: a.Calls, Limit: a.TopK})
	}
	name := a.Symbol
	qual := ""
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		qual, name = name[:i], name[i+1:]
	}
	f := contract.In(ingest.MetaNames, contract.String(name))
	if qual != "" {
		// Type.Method: the method's symbol is exactly that; pkg.Name: any
		// declaration of Name (BM25 of the qualifier ranks the package's
		// path first).
		f = contract.Or(contract.Eq(ingest.MetaSymbol, contract.String(a.Symbol)), f)
	}
	text := strings.TrimSpace(qual + " " + name)
	return c.searchHits(ctx, c.query(text, "lexical", &f, a.TopK, 5, ""))
}

// --- shared validation helpers ---

func checkText(loc []any, s string, minLen, maxLen int) []contract.FieldError {
	switch {
	case !utf8.ValidString(s):
		return []contract.FieldError{{Loc: loc, InputValue: nil, ErrorType: contract.ErrTypeInvalidUTF8, Message: "not valid UTF-8", ExpectedDomain: "UTF-8 text"}}
	case len(s) < minLen:
		return []contract.FieldError{{Loc: loc, InputValue: s, ErrorType: contract.ErrTypeMissing, Message: "required", ExpectedDomain: fmt.Sprintf("%d..%d bytes of text", minLen, maxLen)}}
	case len(s) > maxLen:
		return []contract.FieldError{{Loc: loc, InputValue: len(s), ErrorType: contract.ErrTypeOutOfRange, Message: "too long", ExpectedDomain: fmt.Sprintf("%d..%d bytes of text", minLen, maxLen)}}
	}
	return nil
}

func checkTopK(k *int, maxK int) []contract.FieldError {
	if k != nil && (*k < 1 || *k > maxK) {
		return []contract.FieldError{{Loc: []any{"arguments", "top_k"}, InputValue: *k, ErrorType: contract.ErrTypeOutOfRange,
			Message: "top_k out of range", ExpectedDomain: fmt.Sprintf("integer 1..%d (the server's ceiling)", maxK)}}
	}
	return nil
}

// rebase re-roots a validation error's locs at base (replacing their
// first element, the validated value's own root).
func rebase(err error, base []any) []contract.FieldError {
	var ve *contract.ValidationError
	if !errors.As(err, &ve) {
		return []contract.FieldError{{Loc: base, ErrorType: contract.ErrTypeInvalidFilter, Message: "invalid filter", ExpectedDomain: "a filter tree"}}
	}
	out := make([]contract.FieldError, len(ve.Errors))
	for i, fe := range ve.Errors {
		loc := append([]any{}, base...)
		if len(fe.Loc) > 1 {
			loc = append(loc, fe.Loc[1:]...)
		}
		fe.Loc = loc
		out[i] = fe
	}
	return out
}

// rebaseQuery maps the engine's query validation locs ("query", …) to the
// tool's arguments; the runtime-filled fields (scope, principal) keep
// their "query" root, so a model sees they are not its to set.
func rebaseQuery(err error) error {
	var ve *contract.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	fes := make([]contract.FieldError, len(ve.Errors))
	for i, fe := range ve.Errors {
		if len(fe.Loc) >= 2 && fe.Loc[0] == "query" {
			switch fe.Loc[1] {
			case "text":
				fe.Loc = append([]any{"arguments", "query"}, fe.Loc[2:]...)
			case "mode", "filter", "top_k", "cursor":
				fe.Loc = append([]any{"arguments"}, fe.Loc[1:]...)
			}
		}
		fes[i] = fe
	}
	return &contract.ValidationError{Errors: fes}
}
