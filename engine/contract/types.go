package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Trust is a document's provenance class (DESIGN.md "Data model"). It is a
// string type so that an unknown value survives decoding and is reported by
// Validate together with every other problem; JSON form: the string itself.
type Trust string

const (
	// Authoritative content comes from the system of record (the repository,
	// the official documentation).
	Authoritative Trust = "authoritative"
	// Derived content was produced from authoritative content (summaries,
	// generated docs).
	Derived Trust = "derived"
	// ExternalUnverified content comes from outside and was not checked
	// (web pages, tickets, e-mail). Redaction at ingest is on by default for it.
	ExternalUnverified Trust = "external_unverified"
)

// Valid reports whether t is one of the three trust classes.
func (t Trust) Valid() bool {
	return t == Authoritative || t == Derived || t == ExternalUnverified
}

// Mode selects the retrievers a query runs.
type Mode string

const (
	// Lexical runs BM25 only; it needs Text.
	Lexical Mode = "lexical"
	// Dense runs the vector index only; it needs Vector, or Text that the
	// collection's embedder turns into a vector.
	Dense Mode = "dense"
	// Hybrid runs both and fuses them (FusionParams).
	Hybrid Mode = "hybrid"
)

// Valid reports whether m is lexical, dense or hybrid.
func (m Mode) Valid() bool { return m == Lexical || m == Dense || m == Hybrid }

// Syntax selects how Query.Text is read by the lexical retriever.
type Syntax string

const (
	// SyntaxText matches the text as text: every word the analyzer keeps
	// is an optional term; quotes, leading + and - and a trailing * are
	// ordinary characters (the analyzer drops them). The default ("").
	SyntaxText Syntax = "text"
	// SyntaxOperators reads the operator syntax: "quoted phrase"
	// (required phrase; one word: a required term), +word (required),
	// -word (excluded), word* (prefix).
	SyntaxOperators Syntax = "operators"
)

// Valid reports whether s is "", text or operators.
func (s Syntax) Valid() bool { return s == "" || s == SyntaxText || s == SyntaxOperators }

// Tier names a storage tier (DESIGN.md "Write path").
type Tier string

const (
	// Hot is the in-memory MemTable.
	Hot Tier = "hot"
	// Warm is the set of immutable mmap segments.
	Warm Tier = "warm"
	// Cold is the Parquet archive; scanned only when asked, because it is slower.
	Cold Tier = "cold"
)

// Valid reports whether t is hot, warm or cold.
func (t Tier) Valid() bool { return t == Hot || t == Warm || t == Cold }

// DefaultTiers is the tier set searched when Query.Tiers is empty.
func DefaultTiers() []Tier { return []Tier{Hot, Warm} }

// Scope restricts a query to a namespace prefix and a source-URI prefix.
// Both are optional (empty = unrestricted), except that a MultiTenant
// collection requires Namespace.
type Scope struct {
	// Namespace is a namespace prefix, e.g. "tenant-a/" or "tenant-a/repo-x/".
	Namespace string `json:"namespace,omitempty"`
	// URIPrefix is a prefix of source_uri, e.g. "file:///repo/src/".
	URIPrefix string `json:"uri_prefix,omitempty"`
}

// Principal is the identity a query runs as. The server maps an API key to a
// principal; it never comes from the request body (Query.Principal has no
// JSON form). A nil principal is the embedded library's trusted caller.
type Principal struct {
	// Name is the principal's id, matched against Document.ACL.
	Name string
	// Groups are further ids matched against Document.ACL.
	Groups []string
	// Namespaces are the namespace prefixes the principal may read. Empty
	// means none. The single entry "*" means every namespace.
	Namespaces []string
}

// AllowsNamespace reports whether the principal may name namespace ns: ns has
// one of the principal's namespace prefixes (or the principal has "*"). The
// empty namespace is allowed only with "*".
func (p *Principal) AllowsNamespace(ns string) bool {
	for _, a := range p.Namespaces {
		if a == "*" {
			return true
		}
		if a != "" && ns != "" && strings.HasPrefix(ns, a) {
			return true
		}
	}
	return false
}

// CanRead reports whether the principal may read a document in namespace ns
// with access list acl: the namespace must be allowed, and an empty acl means
// "readable by every principal allowed its namespace"; otherwise acl must name
// the principal or one of its groups.
func (p *Principal) CanRead(ns string, acl []string) bool {
	if !p.AllowsNamespace(ns) {
		return false
	}
	if len(acl) == 0 {
		return true
	}
	for _, a := range acl {
		if a == p.Name && a != "" {
			return true
		}
		for _, g := range p.Groups {
			if a == g && g != "" {
				return true
			}
		}
	}
	return false
}

// ValueKind is the type held by a Value.
type ValueKind uint8

const (
	// KindInvalid is the zero Value; Validate rejects it.
	KindInvalid ValueKind = iota
	// KindString is a UTF-8 string.
	KindString
	// KindNumber is a finite float64.
	KindNumber
	// KindBool is true or false.
	KindBool
	// KindStrings is a list of strings.
	KindStrings
)

func (k ValueKind) String() string {
	switch k {
	case KindString:
		return "string"
	case KindNumber:
		return "number"
	case KindBool:
		return "bool"
	case KindStrings:
		return "string list"
	}
	return "invalid"
}

// Value is a metadata value: a tagged union of string | number | bool |
// []string. JSON form: a JSON string, number, boolean or array of strings;
// null, objects and mixed arrays are rejected. Build one with String, Number,
// Bool or Strings.
//
// It is 40 bytes (a request's metadata map holds one per field): the
// list, the rarest kind, is held through a pointer.
type Value struct {
	kind ValueKind
	b    bool
	n    float64
	s    string
	ss   *[]string
}

// String makes a string Value.
func String(s string) Value { return Value{kind: KindString, s: s} }

// Number makes a number Value. It must be finite to pass validation.
func Number(f float64) Value { return Value{kind: KindNumber, n: f} }

// Bool makes a boolean Value.
func Bool(b bool) Value { return Value{kind: KindBool, b: b} }

// Strings makes a string-list Value (the slice is copied).
func Strings(ss ...string) Value {
	list := append([]string{}, ss...)
	return Value{kind: KindStrings, ss: &list}
}

// Kind returns the type held by v.
func (v Value) Kind() ValueKind { return v.kind }

// Str returns the string and whether v is a string.
func (v Value) Str() (string, bool) { return v.s, v.kind == KindString }

// Num returns the number and whether v is a number.
func (v Value) Num() (float64, bool) { return v.n, v.kind == KindNumber }

// Boolean returns the boolean and whether v is a bool.
func (v Value) Boolean() (bool, bool) { return v.b, v.kind == KindBool }

// List returns the string list and whether v is one. Do not modify it.
func (v Value) List() ([]string, bool) { return v.list(), v.kind == KindStrings }

// list is v's string list (nil unless a list).
func (v Value) list() []string {
	if v.ss == nil {
		return nil
	}
	return *v.ss
}

// IsScalar reports whether v is a string, number or bool.
func (v Value) IsScalar() bool {
	return v.kind == KindString || v.kind == KindNumber || v.kind == KindBool
}

// Equal reports whether v and w hold the same type and value.
func (v Value) Equal(w Value) bool {
	if v.kind != w.kind {
		return false
	}
	switch v.kind {
	case KindString:
		return v.s == w.s
	case KindNumber:
		return v.n == w.n
	case KindBool:
		return v.b == w.b
	case KindStrings:
		a, b := v.list(), w.list()
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}
	return true
}

// jsonable returns v as a plain Go value for error reports.
func (v Value) jsonable() any {
	switch v.kind {
	case KindString:
		return v.s
	case KindNumber:
		return safeNumber(v.n)
	case KindBool:
		return v.b
	case KindStrings:
		return v.list()
	}
	return nil
}

// MarshalJSON encodes v as a JSON string, number, boolean or string array. It
// fails for the zero Value and non-finite numbers.
func (v Value) MarshalJSON() ([]byte, error) {
	var dst []byte
	if v.kind == KindString {
		dst = make([]byte, 0, len(v.s)+2)
	}
	return v.AppendJSON(dst)
}

// AppendJSON appends v's JSON form (MarshalJSON's) to dst.
func (v Value) AppendJSON(dst []byte) ([]byte, error) {
	switch v.kind {
	case KindString:
		return appendJSONString(dst, v.s), nil
	case KindNumber:
		if math.IsNaN(v.n) || math.IsInf(v.n, 0) {
			return nil, fmt.Errorf("contract: metadata number %v is not finite", v.n)
		}
		return AppendNumber(dst, v.n), nil
	case KindBool:
		return strconv.AppendBool(dst, v.b), nil
	case KindStrings:
		return appendJSONStrings(dst, v.list()), nil // nil: "[]"
	}
	return nil, fmt.Errorf("contract: cannot encode an invalid (zero) Value")
}

// AppendNumber appends the shortest JSON form of the finite f: the
// shorter of the plain decimal and the exponent form (ties: plain), each
// with the fewest digits that parse back to f exactly. encoding/json writes
// every |f| < 1e21 in plain decimal, so 1e20 became the 21 digits of
// 100000000000000000000 — a stored form five times its input; this one is
// never longer than the shortest JSON spelling of f.
func AppendNumber(dst []byte, f float64) []byte {
	var fb, eb [32]byte
	plain := strconv.AppendFloat(fb[:0], f, 'f', -1, 64)
	exp := strconv.AppendFloat(eb[:0], f, 'e', -1, 64)
	// Shorten the exponent: "e+20" → "e20", "e-07" → "e-7".
	if i := bytes.IndexByte(exp, 'e'); i >= 0 {
		mant, e := exp[:i+1], exp[i+1:]
		neg := e[0] == '-'
		e = bytes.TrimLeft(e[1:], "0")
		if len(e) == 0 {
			e = []byte("0")
		}
		if neg {
			mant = append(mant, '-')
		}
		exp = append(mant, e...)
	}
	if len(exp) < len(plain) {
		return append(dst, exp...)
	}
	return append(dst, plain...)
}

// UnmarshalJSON decodes a JSON string, number, boolean or array of strings.
func (v *Value) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return errValue
	}
	switch data[0] {
	case '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*v = String(s)
	case 't', 'f':
		var b bool
		if err := json.Unmarshal(data, &b); err != nil {
			return err
		}
		*v = Bool(b)
	case '[':
		var ss []string
		if err := json.Unmarshal(data, &ss); err != nil {
			return errValue
		}
		*v = Strings(ss...)
	case 'n', '{':
		return errValue
	default:
		var f float64
		if err := json.Unmarshal(data, &f); err != nil {
			return errValue
		}
		*v = Number(f)
	}
	return nil
}

var errValue = &decodeError{typ: "json_type", msg: "a metadata value must be a string, number, boolean or array of strings", domain: "string | number | bool | [string]"}

// FusionParams configures how hybrid mode merges the lexical and dense
// rankings (package engine/fusion implements it). The zero value means RRF
// with k = 60, equal weights and the default rank window.
type FusionParams struct {
	// Method is "rrf" (default), "minmax", "zscore", "maxnorm" (score
	// fusion over the full lists, package engine/fusion), or
	// "rerank-maxnorm": the lexical top N re-ranked by
	// (1−α)·s_bm25/max s_bm25 + α·s_dense/max|s_dense|, the rest of the
	// lexical list after them; N = Window (default 20), α =
	// w_dense/(w_lexical + w_dense) from Weights (default 0.35); K does
	// not apply. A query that sets no fusion field gets its collection's
	// HybridDefault.
	Method string `json:"method,omitempty"`
	// K is the RRF constant k (> 0, finite). 0 means the default 60.
	K float64 `json:"k,omitempty"`
	// Weights maps a retriever, "lexical" or "dense", to its weight w_m
	// (finite, ≥ 0; a missing retriever weighs 1; not all zero).
	Weights map[string]float64 `json:"weights,omitempty"`
	// Window is the rank window per input list, 0..MaxFusionWindow: each
	// retriever returns this many candidates. 0 means max(100, TopK).
	Window int `json:"window,omitempty"`
}

// FusionMethods lists the accepted FusionParams.Method names.
var FusionMethods = []string{"rrf", "minmax", "zscore", "maxnorm", "rerank-maxnorm"}

// Weight returns the weight of retriever name ("lexical" or "dense"),
// 1 when unset.
func (f FusionParams) Weight(name string) float64 {
	if w, ok := f.Weights[name]; ok {
		return w
	}
	return 1
}

// DefaultTopK is Query.TopK when omitted; MaxTopK is its upper bound.
const (
	DefaultTopK = 10
	MaxTopK     = 1000
	// MaxFusionWindow bounds FusionParams.Window (the per-retriever
	// candidate depth, which sizes each retriever's heap).
	MaxFusionWindow = 10 * MaxTopK
	// DefaultRRFK is the RRF constant k of Cormack et al. (2009).
	DefaultRRFK = 60
)

// Query is the retrieval contract: ⟨Text and/or Vector, Scope, Freshness,
// TopK, Budget, Filter, Mode, Tiers, Fusion, MinScore, staging, Verify⟩.
// JSON form (closed: unknown fields are rejected):
//
//	{"text":"…","vector":[…],"scope":{"namespace":"…","uri_prefix":"…"},
//	 "freshness_ms":60000,"top_k":10,"budget_ms":25,"filter":{…},
//	 "mode":"hybrid","tiers":["hot","warm"],
//	 "fusion":{"method":"rrf","k":60,"weights":{"lexical":1,"dense":1},"window":100},
//	 "min_score":0.2,"token_budget":4000,"max_tokens_per_hit":800,"verify":true,
//	 "cursor":"…","collapse":2,"highlight":true}
type Query struct {
	// Text is the query text (lexical; also embedded for dense when no Vector).
	Text string
	// Vector is the query embedding, float32[dim]; every component finite.
	Vector []float32
	// Scope restricts the namespace and source-URI prefixes.
	Scope Scope
	// Freshness is the maximum age of a hit's version before the source is
	// re-checked, for sources that emit no change events (≥ 0; 0 = no limit).
	// JSON: freshness_ms, integer milliseconds.
	Freshness time.Duration
	// TopK is the number of hits, 1..1000. 0 means DefaultTopK (10).
	TopK int
	// Budget is the deadline for the whole search (≥ 0; 0 = none).
	// JSON: budget_ms, integer milliseconds.
	Budget time.Duration
	// Filter is a predicate tree on metadata; nil = no filter.
	Filter *Filter
	// Mode is lexical | dense | hybrid; empty = inferred by EnsureDefaults.
	Mode Mode
	// Tiers lists the tiers to search; empty = hot + warm.
	Tiers []Tier
	// Fusion configures hybrid fusion.
	Fusion FusionParams
	// MinScore is σ_min ∈ [0,1]: staging drops hits scoring below it.
	MinScore float64
	// TokenBudget is S_budget, the total tokens of staged output (≥ 0; 0 = no limit).
	TokenBudget int
	// MaxTokensPerHit is S_max, the tokens of one staged hit's content (≥ 0; 0 = no limit).
	MaxTokensPerHit int
	// Verify asks the engine to re-check every hit against its source.
	Verify bool
	// Principal is who runs the query; set by the server from the API key,
	// never decoded from JSON. Nil = trusted embedded caller.
	Principal *Principal
	// Cursor continues a previous result: the Result.NextCursor of a query
	// that was identical except for TopK (the page size), Budget and Cursor.
	// Opaque, signed by the engine; at most MaxCursorBytes of base64url.
	// Empty = the first page. JSON: cursor.
	Cursor string
	// Collapse keeps at most Collapse hits per source file (the
	// SourceURI without its #fragment; hits without a SourceURI are
	// never collapsed), filling TopK from deeper candidates. 0 = off;
	// 0..MaxTopK. JSON: collapse.
	Collapse int
	// Highlight asks for Envelope.Highlights: the byte spans of the
	// query's terms in each hit's Content. JSON: highlight.
	Highlight bool
	// Syntax is how Text is read: "" or SyntaxText (plain text, the
	// default) or SyntaxOperators (phrases, +required, -excluded,
	// prefix*). JSON: syntax.
	Syntax Syntax
	// Expansion adds optional lexical terms, each scaled by its Weight:
	// index terms as the collection's analyzer emits them (lower-case),
	// used verbatim; a term the text already scores is not added again.
	// At most MaxExpansionTerms, each 1..MaxTermBytes bytes, weights in
	// (0, 1]. JSON: expansion, [{"term": …, "weight": …}].
	Expansion []WeightedTerm
	// LexicalStats, if set, are the BM25 collection statistics the lexical
	// retriever scores with (hot and warm tiers) instead of the
	// collection's own: a query fanned out to the shards of a collection
	// carries the sum of their Collection.LexicalStats, so each shard
	// scores its documents as one collection holding every shard's would.
	// Terms it lacks count df 0. Not for a tenant-scoped query of a
	// MultiTenant collection. Nil = the collection's own. JSON:
	// lexical_stats.
	LexicalStats *LexicalStats
}

// LexicalStats are BM25 collection statistics: the number of documents,
// the sum of their lengths (tokens) and each term's document frequency.
type LexicalStats struct {
	Docs      int64            `json:"docs"`
	SumDocLen int64            `json:"sum_doc_len"`
	DocFreq   map[string]int64 `json:"doc_freq,omitempty"`
}

// MaxLexicalStatsTerms bounds LexicalStats.DocFreq in a Query.
const MaxLexicalStatsTerms = 4096

// Add adds o's counts to s (the statistics of the union of two disjoint
// document sets).
func (s *LexicalStats) Add(o LexicalStats) {
	s.Docs += o.Docs
	s.SumDocLen += o.SumDocLen
	if len(o.DocFreq) > 0 && s.DocFreq == nil {
		s.DocFreq = make(map[string]int64, len(o.DocFreq))
	}
	for t, n := range o.DocFreq {
		s.DocFreq[t] += n
	}
}

// WeightedTerm is one expansion term of a Query.
type WeightedTerm struct {
	Term   string  `json:"term"`
	Weight float64 `json:"weight"`
}

// Query.Expansion bounds.
const (
	MaxExpansionTerms = 64
	MaxTermBytes      = 128
)

// MaxCursorBytes bounds Query.Cursor (a cursor records up to MaxTopK
// returned hits in 8 bytes each, base64url).
const MaxCursorBytes = 16384

// Span is a byte range [Start, End) of an Envelope's Content. JSON:
// [start, end].
type Span struct {
	Start, End int
}

// MarshalJSON encodes s as [start, end].
func (s Span) MarshalJSON() ([]byte, error) {
	return json.Marshal([2]int{s.Start, s.End})
}

// UnmarshalJSON decodes [start, end].
func (s *Span) UnmarshalJSON(b []byte) error {
	var a [2]int
	if err := json.Unmarshal(b, &a); err != nil {
		return err
	}
	s.Start, s.End = a[0], a[1]
	return nil
}

// EnsureDefaults fills omitted fields: TopK 10; Mode hybrid when both Text
// and Vector are set, lexical for Text only, dense for Vector only; Tiers
// hot + warm; Fusion rrf with k = 60.
func (q *Query) EnsureDefaults() {
	if q.TopK == 0 {
		q.TopK = DefaultTopK
	}
	if q.Mode == "" {
		hasText, hasVec := strings.TrimSpace(q.Text) != "", len(q.Vector) > 0
		switch {
		case hasText && hasVec:
			q.Mode = Hybrid
		case hasVec:
			q.Mode = Dense
		case hasText:
			q.Mode = Lexical
		}
	}
	if len(q.Tiers) == 0 {
		q.Tiers = DefaultTiers()
	}
	if q.Fusion.Method == "" {
		q.Fusion.Method = "rrf"
	}
	if q.Fusion.K == 0 {
		q.Fusion.K = DefaultRRFK
	}
}

// HasTier reports whether the query searches tier t (after defaults: an empty
// Tiers means hot + warm).
func (q *Query) HasTier(t Tier) bool {
	ts := q.Tiers
	if len(ts) == 0 {
		ts = DefaultTiers()
	}
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// Document is one stored chunk (DESIGN.md "Data model"). JSON form (closed):
//
//	{"id":"…","content":"…","vector":[…],"source_uri":"file:///…#L10-L42",
//	 "metadata":{"lang":"go","lines":42,"generated":false,"tags":["a","b"]},
//	 "namespace":"tenant-a/repo-x/","trust":"authoritative","acl":["alice"],
//	 "version_hash":"<64 hex>","timestamp":"2026-11-29T12:00:00Z"}
type Document struct {
	// ID is the user-given id (required, valid UTF-8, at most MaxIDBytes).
	ID string `json:"id"`
	// Content is the chunk text.
	Content string `json:"content"`
	// Vector is the optional embedding, float32[dim], every component finite.
	Vector []float32 `json:"vector,omitempty"`
	// SourceURI locates the source span, e.g. file:///repo/a.go#L10-L42.
	SourceURI string `json:"source_uri,omitempty"`
	// Metadata maps field names to values.
	Metadata map[string]Value `json:"metadata,omitempty"`
	// Namespace is the scope path, e.g. "tenant-a/repo-x/".
	Namespace string `json:"namespace,omitempty"`
	// Trust is the provenance class (required).
	Trust Trust `json:"trust"`
	// ACL lists the principals allowed to read; empty = the namespace default.
	ACL []string `json:"acl,omitempty"`
	// VersionHash is the BLAKE3-256 of the source bytes, 64 lowercase hex
	// digits; empty on input means "compute it at ingest".
	VersionHash string `json:"version_hash,omitempty"`
	// Timestamp is when this version was committed (set by the engine).
	Timestamp time.Time `json:"timestamp,omitzero"`
}

// MaxIDBytes bounds Document.ID.
const MaxIDBytes = 1024

// Explain tells how a hit was scored.
type Explain struct {
	// LexicalRank is the 1-based rank in the BM25 list, 0 if absent.
	LexicalRank int `json:"lexical_rank,omitempty"`
	// DenseRank is the 1-based rank in the dense list, 0 if absent.
	DenseRank int `json:"dense_rank,omitempty"`
	// LexicalScore is the raw BM25 score (0 if absent).
	LexicalScore float64 `json:"lexical_score,omitempty"`
	// DenseScore is the raw similarity or distance (0 if absent).
	DenseScore float64 `json:"dense_score,omitempty"`
	// FusedScore is the raw fused score before normalisation into [0,1].
	FusedScore float64 `json:"fused_score,omitempty"`
	// Prior is the factor a re-ranking layer multiplied Score by (code
	// search's path priors, ingest.Prior; 0 = none applied).
	Prior float64 `json:"prior,omitempty"`
	// Expansion lists the terms a query expansion added to the lexical
	// query (Query.Expansion), space-separated "term^weight" (code
	// search's vocabulary bridging, ingest.Bridge; empty = none).
	Expansion string `json:"expansion,omitempty"`
}

// Envelope is one verified hit: ⟨DocID, Content, SourceURI, VersionHash,
// Timestamp, Score, Trust, Explain⟩.
type Envelope struct {
	DocID   string `json:"doc_id"`
	Content string `json:"content"`
	// SourceURI locates the source span the content came from.
	SourceURI string `json:"source_uri,omitempty"`
	// VersionHash is BLAKE3-256 of the source bytes, 64 lowercase hex digits.
	VersionHash string `json:"version_hash"`
	// Timestamp is when this version was committed.
	Timestamp time.Time `json:"timestamp,omitzero"`
	// Score is in [0,1] in every mode (see the package doc).
	Score float64 `json:"score"`
	Trust Trust   `json:"trust"`
	// Namespace is the document's namespace.
	Namespace string `json:"namespace,omitempty"`
	// Metadata is the document's metadata, when requested.
	Metadata map[string]Value `json:"metadata,omitempty"`
	// Reread is set when verification found the stored version stale and the
	// content was re-read from the source.
	Reread  bool    `json:"reread,omitempty"`
	Explain Explain `json:"explain"`
	// Highlights are the byte spans [start, end) in Content of the
	// query's terms as the collection's analyzer matches them (identifier
	// parts, stemmed forms), sorted, non-overlapping, never inside a UTF-8
	// sequence; set only when Query.Highlight is. They are computed on the
	// final Content (after a verification re-read and staging's truncation
	// and sanitising).
	Highlights []Span `json:"highlights,omitempty"`
}

// DropReason says why a hit was left out of a result.
type DropReason string

const (
	DropBelowMinScore DropReason = "below_min_score"
	DropTokenBudget   DropReason = "token_budget"
	DropMissingID     DropReason = "missing_id"
	DropInvalidTrust  DropReason = "invalid_trust"
	DropInvalidHash   DropReason = "invalid_hash"
	DropInvalidScore  DropReason = "invalid_score"
	DropInvalidURI    DropReason = "invalid_uri"
	DropStale         DropReason = "stale"
)

// Dropped reports one hit left out of a result, and why.
type Dropped struct {
	DocID  string     `json:"doc_id"`
	Reason DropReason `json:"reason"`
	Detail string     `json:"detail,omitempty"`
}

// CountDropped counts drops by reason.
func CountDropped(ds []Dropped) map[DropReason]int {
	m := make(map[DropReason]int)
	for _, d := range ds {
		m[d.Reason]++
	}
	return m
}

// Result is a search answer.
type Result struct {
	// Hits are the envelopes, best first.
	Hits []Envelope `json:"hits"`
	// Partial is true when the budget ran out before every retriever finished.
	Partial bool `json:"partial"`
	// Reason says why the result is partial (empty otherwise).
	Reason string `json:"reason,omitempty"`
	// Epoch is the epoch the query read at.
	Epoch uint64 `json:"epoch"`
	// Dropped lists every hit removed after retrieval (verification,
	// structural checks, σ_min, token budget), never silently.
	Dropped []Dropped `json:"dropped,omitempty"`
	// NextCursor continues this result (Query.Cursor) when the page was
	// full and the MaxTopK window is not exhausted; empty otherwise.
	NextCursor string `json:"next_cursor,omitempty"`
}
