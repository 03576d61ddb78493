package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"time"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/memory"
)

// MemoryOptions configures the memory tools (EnableMemory): remember,
// recall and forget over one memory.Store. The model
// proposes content, kind, key, query and filters; the runtime fills the
// subject (from the caller), the provenance (the MCP session), the
// ceilings and the deadline, and admission (memory.Store.Remember)
// decides what is stored.
type MemoryOptions struct {
	Store *memory.Store
	// Subject is the subject of a caller without a principal (the
	// trusted stdio caller). A caller with a principal always works on
	// the subject named by its principal.
	Subject string
	// Provenance returns the provenance URI of a remember call; default
	// "mcp:<principal>/session/<session id>" (or ".../call/<nonce>" for a
	// call without a session).
	Provenance func(c Caller, sessionID, nonce string) string
}

// Memory tool schemas (closed; units and ranges as the tools check them).
const (
	rememberIn = `{"type":"object","additionalProperties":false,"required":["content","kind"],"properties":{` +
		`"content":{"type":"string","minLength":1,"maxLength":8192},` +
		`"kind":{"enum":["preference","fact","lesson","episode","note"]},` +
		`"key":{"type":"string","maxLength":256,"description":"e.g. contact.email"},` +
		`"evidence":{"enum":["user_stated","observed","self_report"],"default":"self_report"},` +
		`"external":{"type":"boolean","description":"unverified source"},` +
		`"valid_from":{"type":"string","pattern":"^\\d{4}-\\d\\d-\\d\\dT"},` +
		`"if_version":{"type":"string","pattern":"^[0-9a-f]{64}$","description":"version read; conflict if changed"}},"dependentRequired":{"if_version":["key"]}}`
	rememberOut = `{"type":"object","properties":{"status":{"type":"string"},"id":{"type":"string"},"version":{"type":"string"}}}`
	recallIn    = `{"type":"object","additionalProperties":false,"properties":{` +
		`"query":{"type":"string","maxLength":4096},` +
		`"kinds":{"type":"array","maxItems":5,"items":{"enum":["preference","fact","lesson","episode","note"]}},` +
		`"key":{"type":"string","maxLength":256},` +
		`"as_of":{"type":"string","pattern":"^\\d{4}-\\d\\d-\\d\\dT"},` +
		`"known_at":{"type":"string","pattern":"^\\d{4}-\\d\\d-\\d\\dT"},` +
		`"history":{"type":"boolean"},` +
		`"top_k":{"type":"integer","minimum":1,"maximum":%d,"default":10}}}`
	memHitsOut = `{"type":"object","properties":{"hits":{"type":"array"}}}`
	forgetIn   = `{"type":"object","additionalProperties":false,"required":["ids"],"properties":{` +
		`"ids":{"type":"array","minItems":1,"maxItems":100,"items":{"type":"string","pattern":"^[0-9a-f]{32}$"}}}}`
	forgetOut = `{"type":"object","properties":{"deleted":{"type":"array"}}}`
)

// EnableMemory registers the memory tools. Call it before serving (tools
// are fixed once a caller's MCP server is built).
func (s *Server) EnableMemory(o MemoryOptions) error {
	if o.Store == nil {
		return errors.New("mcp: EnableMemory: Store is required")
	}
	if o.Provenance == nil {
		o.Provenance = defaultProvenance
	}
	s.mem = &o
	s.registerMemoryTools()
	return nil
}

// registerMemoryTools registers remember, recall and forget.
func (s *Server) registerMemoryTools() {
	register(s, "remember", "Propose a memory about the user; the runtime decides.", rememberIn, rememberOut, runRemember)
	register(s, "recall", "Recall memories. as_of: valid time; known_at: record time; key+history, no query: every version, oldest first.", fmt.Sprintf(recallIn, s.o.MaxTopK), memHitsOut, runRecall)
	register(s, "forget", "Forget memories by id, every copy too.", forgetIn, forgetOut, runForget)
}

func defaultProvenance(c Caller, sessionID, nonce string) string {
	who := "local"
	if c.Principal != nil {
		who = c.Principal.Name
	}
	if sessionID != "" {
		return "mcp:" + url.PathEscape(who) + "/session/" + url.PathEscape(sessionID)
	}
	return "mcp:" + url.PathEscape(who) + "/call/" + nonce
}

// errNoMemory: a memory tool called on a server without a store.
var errNoMemory = errors.New("mcp: memory is not enabled")

// subject is the call's memory subject: the principal's name, or the
// configured subject for a caller without one.
func (c *call) subject() (string, error) {
	if c.s.mem == nil {
		return "", errNoMemory
	}
	if p := c.caller.Principal; p != nil {
		return p.Name, nil
	}
	if c.s.mem.Subject == "" {
		return "", &shapedError{body: failure("unavailable", "no memory subject for this caller", "a server configured with a subject")}
	}
	return c.s.mem.Subject, nil
}

func checkTime(loc string, v string) []contract.FieldError {
	if v == "" {
		return nil
	}
	if _, err := time.Parse(time.RFC3339, v); err != nil || !dateTimeRE.MatchString(v) {
		return []contract.FieldError{{Loc: []any{"arguments", loc}, InputValue: clip(v), ErrorType: contract.ErrTypeInvalidFormat,
			Message: "not an RFC 3339 date-time", ExpectedDomain: "e.g. 2026-03-01T09:00:00Z"}}
	}
	return nil
}

// dateTimeRE is the input schemas' date-time pattern (RFC 3339).
var dateTimeRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$`)

func checkKind(loc []any, k string) []contract.FieldError {
	if !memory.Kind(k).Valid() {
		return []contract.FieldError{{Loc: loc, InputValue: clip(k), ErrorType: contract.ErrTypeUnknownValue,
			Message: "unknown kind", ExpectedDomain: "preference | fact | lesson | episode | note"}}
	}
	return nil
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// --- remember ---

type rememberArgs struct {
	Content   string `json:"content"`
	Kind      string `json:"kind"`
	Key       string `json:"key"`
	Evidence  string `json:"evidence"`
	External  bool   `json:"external"`
	ValidFrom string `json:"valid_from"`
	IfVersion string `json:"if_version"`
}

func (a *rememberArgs) validate(c *call) []contract.FieldError {
	fes := checkText([]any{"arguments", "content"}, a.Content, 1, 8192)
	fes = append(fes, checkKind([]any{"arguments", "kind"}, a.Kind)...)
	fes = append(fes, checkText([]any{"arguments", "key"}, a.Key, 0, 256)...)
	switch a.Evidence {
	case "", string(memory.UserStated), string(memory.Observed), string(memory.SelfReport):
	default:
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "evidence"}, InputValue: clip(a.Evidence), ErrorType: contract.ErrTypeUnknownValue,
			Message: "unknown evidence level (verified is the runtime's to set)", ExpectedDomain: "user_stated | observed | self_report"})
	}
	fes = append(fes, checkTime("valid_from", a.ValidFrom)...)
	if a.IfVersion != "" && a.Key == "" {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "key"}, ErrorType: contract.ErrTypeMissing,
			Message: "if_version needs the key it was read from", ExpectedDomain: "a keyed fact path"})
	}
	if a.IfVersion != "" && !isHex(a.IfVersion, 64) {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "if_version"}, InputValue: clip(a.IfVersion), ErrorType: contract.ErrTypeInvalidFormat,
			Message: "not a version", ExpectedDomain: "64 lowercase hex digits"})
	}
	return fes
}

type rememberResult struct {
	Status     string   `json:"status"`
	Reason     string   `json:"reason,omitempty"`
	ID         string   `json:"id,omitempty"`
	Version    string   `json:"version,omitempty"`
	Superseded []string `json:"superseded,omitempty"`
}

func runRemember(ctx context.Context, c *call, a *rememberArgs) (rememberResult, string, error) {
	sub, err := c.subject()
	if err != nil {
		return rememberResult{}, "", err
	}
	sid := ""
	if c.req != nil && c.req.Session != nil {
		sid = c.req.Session.ID()
	}
	w := memory.Write{Subject: sub, Kind: memory.Kind(a.Kind), Key: a.Key, Content: a.Content,
		Provenance: c.s.mem.Provenance(c.caller, sid, c.nonce), Evidence: memory.Evidence(a.Evidence), IfVersion: a.IfVersion}
	if w.Evidence == "" {
		w.Evidence = memory.SelfReport
	}
	if a.External {
		w.Trust = contract.ExternalUnverified
	}
	if a.ValidFrom != "" {
		w.ValidFrom, _ = time.Parse(time.RFC3339, a.ValidFrom)
	}
	out, err := c.s.mem.Store.Remember(ctx, []memory.Write{w})
	var ce *memory.ConflictError
	if errors.As(err, &ce) {
		cur := "none"
		if ce.Current != nil {
			cur = ce.Current.Version
		}
		return rememberResult{}, "", &shapedError{body: errorBody{Status: "conflict", ErrorCount: 1, Errors: []contract.FieldError{{
			Loc: []any{"arguments", "if_version"}, InputValue: a.IfVersion, ErrorType: contract.ErrTypeConflict,
			Message: "the memory changed since it was read: recall it again and retry with its version", ExpectedDomain: cur}}}}
	}
	if err != nil {
		return rememberResult{}, "", err
	}
	o := out[0]
	r := rememberResult{Status: o.Status, Reason: o.Reason, Superseded: o.Superseded}
	text := o.Status
	if o.Record != nil {
		r.ID, r.Version = o.Record.ID, o.Record.Version
		text += " " + o.Record.ID
	}
	if o.Reason != "" {
		text += ": " + o.Reason
	}
	return r, text + "\n", nil
}

// --- recall ---

type recallArgs struct {
	Query   string   `json:"query"`
	Kinds   []string `json:"kinds"`
	Key     string   `json:"key"`
	AsOf    string   `json:"as_of"`
	KnownAt string   `json:"known_at"`
	History bool     `json:"history"`
	TopK    *int     `json:"top_k"`
}

func (a *recallArgs) validate(c *call) []contract.FieldError {
	fes := checkText([]any{"arguments", "query"}, a.Query, 0, 4096)
	if len(a.Kinds) > 5 {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "kinds"}, InputValue: len(a.Kinds), ErrorType: contract.ErrTypeOutOfRange,
			Message: "too many kinds", ExpectedDomain: "at most 5"})
	}
	for i, k := range a.Kinds {
		fes = append(fes, checkKind([]any{"arguments", "kinds", i}, k)...)
	}
	fes = append(fes, checkText([]any{"arguments", "key"}, a.Key, 0, 256)...)
	fes = append(fes, checkTime("as_of", a.AsOf)...)
	fes = append(fes, checkTime("known_at", a.KnownAt)...)
	return append(fes, checkTopK(a.TopK, c.s.o.MaxTopK)...)
}

// memHit is one record as staged for the model.
type memHit struct {
	ID         string         `json:"id"`
	Kind       string         `json:"kind"`
	Key        string         `json:"key,omitempty"`
	Content    string         `json:"content"`
	Trust      contract.Trust `json:"trust"`
	Evidence   string         `json:"evidence"`
	Provenance string         `json:"provenance"`
	Version    string         `json:"version"`
	Status     string         `json:"status"`
	ValidFrom  time.Time      `json:"valid_from"`
	ValidTo    time.Time      `json:"valid_to,omitzero"`
	Score      float64        `json:"score"`
}

type memHitsResult struct {
	Hits   []memHit `json:"hits"`
	Tokens int      `json:"tokens"`
	Nonce  string   `json:"nonce"`
}

// stageRecords frames records as evidence with the call's nonce and the
// server's token budget.
func (c *call) stageRecords(recs []*memory.Record, scores []float64) (memHitsResult, string, error) {
	envs := make([]contract.Envelope, len(recs))
	byID := map[string]*memory.Record{}
	for i, r := range recs {
		envs[i] = contract.Envelope{DocID: r.ID, Content: r.Content, SourceURI: r.Provenance, VersionHash: r.Version,
			Timestamp: r.RecordedAt, Score: min(1, max(0, scores[i])), Trust: r.Trust}
		byID[r.ID] = r
	}
	st, err := contract.Stage(envs, contract.StageOptions{TokenBudget: c.s.o.TokenBudget, MaxTokensPerHit: c.s.o.MaxTokensPerHit, Nonce: c.nonce})
	if err != nil {
		return memHitsResult{}, "", err
	}
	out := memHitsResult{Hits: make([]memHit, 0, len(st.Hits)), Tokens: st.TokensUsed, Nonce: st.Nonce}
	for _, h := range st.Hits {
		r := byID[h.Envelope.DocID]
		out.Hits = append(out.Hits, memHit{ID: r.ID, Kind: string(r.Kind), Key: r.Key, Content: h.Envelope.Content, Trust: r.Trust,
			Evidence: string(r.Evidence), Provenance: r.Provenance, Version: r.Version, Status: string(r.Status),
			ValidFrom: r.ValidFrom, ValidTo: r.ValidTo, Score: h.Envelope.Score})
	}
	text := st.Text
	if len(st.Hits) == 0 {
		text = "no memories\n"
	}
	return out, text, nil
}

func runRecall(ctx context.Context, c *call, a *recallArgs) (memHitsResult, string, error) {
	sub, err := c.subject()
	if err != nil {
		return memHitsResult{}, "", err
	}
	if a.History && a.Key != "" && a.Query == "" {
		return c.keyHistory(sub, a)
	}
	q := memory.Query{Subject: sub, Text: a.Query, Key: a.Key, History: a.History, TopK: DefaultTopK, Budget: searchBudget(c.s.o.Deadline)}
	if a.TopK != nil {
		q.TopK = min(*a.TopK, c.s.o.MaxTopK)
	}
	for _, k := range a.Kinds {
		q.Kinds = append(q.Kinds, memory.Kind(k))
	}
	if a.AsOf != "" {
		q.AsOf, _ = time.Parse(time.RFC3339, a.AsOf)
	}
	if a.KnownAt != "" {
		q.KnownAt, _ = time.Parse(time.RFC3339, a.KnownAt)
	}
	res, err := c.s.mem.Store.Recall(ctx, q)
	if errors.Is(err, memory.ErrInvalid) {
		return memHitsResult{}, "", &shapedError{body: failure("validation_error", "invalid recall", "")}
	}
	if err != nil {
		return memHitsResult{}, "", err
	}
	recs := make([]*memory.Record, len(res.Hits))
	scores := make([]float64, len(res.Hits))
	for i, h := range res.Hits {
		recs[i], scores[i] = h.Record, h.Score
	}
	return c.stageRecords(recs, scores)
}

// keyHistory is recall of one key's history without a query: every
// version of the keyed fact as recorded at known_at (default now), oldest
// first, of the given kinds (default all), at most top_k when it is given
// (as_of does not apply: history spans every valid time). Staging orders
// by score, so each version's score is its rank (1, 1−1/n, …).
func (c *call) keyHistory(sub string, a *recallArgs) (memHitsResult, string, error) {
	var knownAt time.Time
	if a.KnownAt != "" {
		knownAt, _ = time.Parse(time.RFC3339, a.KnownAt)
	}
	var recs []*memory.Record
	for _, r := range c.s.mem.Store.HistoryAt(sub, a.Key, knownAt) {
		if len(a.Kinds) == 0 || slices.Contains(a.Kinds, string(r.Kind)) {
			recs = append(recs, r)
		}
	}
	if a.TopK != nil && len(recs) > *a.TopK {
		recs = recs[:*a.TopK]
	}
	scores := make([]float64, len(recs))
	for i := range recs {
		scores[i] = 1 - float64(i)/float64(len(recs))
	}
	return c.stageRecords(recs, scores)
}

// --- forget ---

type forgetArgs struct {
	IDs []string `json:"ids"`
}

func (a *forgetArgs) validate(c *call) []contract.FieldError {
	var fes []contract.FieldError
	if len(a.IDs) < 1 || len(a.IDs) > 100 {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "ids"}, InputValue: len(a.IDs), ErrorType: contract.ErrTypeOutOfRange,
			Message: "ids must hold 1..100 record ids", ExpectedDomain: "1..100 ids"})
	}
	for i, id := range a.IDs {
		if !isHex(id, 32) {
			fes = append(fes, contract.FieldError{Loc: []any{"arguments", "ids", i}, InputValue: clip(id), ErrorType: contract.ErrTypeInvalidFormat,
				Message: "not a record id", ExpectedDomain: "32 lowercase hex digits"})
		}
	}
	return fes
}

type forgetResult struct {
	Deleted []string `json:"deleted"`
}

func runForget(ctx context.Context, c *call, a *forgetArgs) (forgetResult, string, error) {
	sub, err := c.subject()
	if err != nil {
		return forgetResult{}, "", err
	}
	rep, err := c.s.mem.Store.Delete(ctx, sub, a.IDs)
	if errors.Is(err, memory.ErrNotFound) {
		return forgetResult{}, "", &shapedError{body: failure("not_found", "no such memory of yours", "ids returned by recall")}
	}
	if err != nil {
		return forgetResult{}, "", err
	}
	if rep.Deleted == nil {
		rep.Deleted = []string{}
	}
	return forgetResult{Deleted: rep.Deleted}, fmt.Sprintf("forgot %d records\n", len(rep.Deleted)), nil
}
