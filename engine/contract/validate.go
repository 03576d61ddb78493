package contract

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/stratasearch/strata/internal/base"
)

// ValidateOptions carries the collection facts a query or document is
// checked against.
type ValidateOptions struct {
	// MultiTenant requires a namespace on every query and write.
	MultiTenant bool
	// Principal is the caller. For documents it is the writer: each
	// document's namespace must be one it allows. For a query it is used when
	// Query.Principal is nil. Nil = trusted embedded caller, no check.
	Principal *Principal
}

// Validate reports every problem with q at once, as a *ValidationError
// (errors.Is(err, ErrInvalid)) with locs rooted at "query"; nil when q is
// valid. dim is the collection's vector dimension: when dim > 0 a non-empty
// Vector must have exactly dim components; dim ≤ 0 skips that check. Zero
// values that EnsureDefaults fills (TopK, Mode, Tiers, Fusion.Method, Fusion.K)
// are accepted; Validate does not modify q.
//
// Checked: text valid UTF-8; vector components finite (loc names the index)
// and dimension; budget_ms and freshness_ms ≥ 0; top_k in 1..1000; mode,
// tiers (known, no duplicates) and fusion method known; fusion k finite > 0,
// weights known retrievers, finite, ≥ 0 and not all 0, window ≥ 0; min_score
// in [0,1]; token_budget and max_tokens_per_hit ≥ 0; lexical needs text,
// dense and hybrid need text or a vector, and a query with neither is
// rejected; collapse in 0..1000; cursor base64url of at most
// MaxCursorBytes (its signature and query fingerprint are checked by the
// engine, which reports a mismatch in this same error shape); the filter
// tree (Filter.Validate); a MultiTenant collection needs
// scope.namespace; a Principal may name only namespaces its ACL allows.
func (q *Query) Validate(dim int, opts ValidateOptions) error {
	var c collector
	root := []any{"query"}
	hasText := strings.TrimSpace(q.Text) != ""
	hasVec := len(q.Vector) > 0

	if !utf8.ValidString(q.Text) {
		c.add(at(root, "text"), strings.ToValidUTF8(q.Text, "\uFFFD"), ErrTypeInvalidUTF8, "text is not valid UTF-8", "UTF-8 string")
	}
	validateVector(&c, func() []any { return at(root, "vector") }, q.Vector, dim)

	if q.Budget < 0 {
		c.add(at(root, "budget_ms"), q.Budget.Milliseconds(), ErrTypeOutOfRange, "budget must not be negative", "integer milliseconds ≥ 0 (0 = no deadline)")
	}
	if q.Freshness < 0 {
		c.add(at(root, "freshness_ms"), q.Freshness.Milliseconds(), ErrTypeOutOfRange, "freshness must not be negative", "integer milliseconds ≥ 0 (0 = no limit)")
	}
	if q.TopK < 0 || q.TopK > MaxTopK {
		c.add(at(root, "top_k"), q.TopK, ErrTypeOutOfRange, "top_k out of range", "integer 1..1000 (omitted = 10)")
	}

	switch {
	case q.Mode == "":
		if !hasText && !hasVec {
			c.add(root, nil, ErrTypeMissing, "a query needs text or a vector", "text and/or vector")
		}
	case !q.Mode.Valid():
		c.add(at(root, "mode"), string(q.Mode), ErrTypeUnknownValue, "unknown mode "+strconvQuote(string(q.Mode)), "lexical | dense | hybrid")
	case q.Mode == Lexical && !hasText:
		c.add(at(root, "text"), q.Text, ErrTypeMissing, "lexical mode needs text", "non-blank string")
	case (q.Mode == Dense || q.Mode == Hybrid) && !hasText && !hasVec:
		c.add(root, nil, ErrTypeMissing, string(q.Mode)+" mode needs a vector or text to embed", "vector and/or text")
	}

	seen := map[Tier]bool{}
	for i, t := range q.Tiers {
		if !t.Valid() {
			c.add(at(root, "tiers", i), string(t), ErrTypeUnknownValue, "unknown tier "+strconvQuote(string(t)), "hot | warm | cold")
		} else if seen[t] {
			c.add(at(root, "tiers", i), string(t), ErrTypeDuplicate, "tier listed twice", "distinct tiers")
		}
		seen[t] = true
	}

	f := q.Fusion
	floc := at(root, "fusion")
	switch f.Method {
	case "", "rrf", "minmax", "zscore", "maxnorm", "rerank-maxnorm":
	default:
		c.add(at(floc, "method"), f.Method, ErrTypeUnknownValue, "unknown fusion method "+strconvQuote(f.Method), "rrf | minmax | zscore | maxnorm | rerank-maxnorm")
	}
	if f.K < 0 || math.IsNaN(f.K) || math.IsInf(f.K, 0) {
		c.add(at(floc, "k"), safeNumber(f.K), ErrTypeOutOfRange, "fusion k must be a finite number > 0", "finite number > 0 (omitted = 60)")
	}
	if f.Window < 0 || f.Window > MaxFusionWindow {
		c.add(at(floc, "window"), f.Window, ErrTypeOutOfRange, "fusion window must be in 0.."+strconv.Itoa(MaxFusionWindow),
			"integer 0.."+strconv.Itoa(MaxFusionWindow)+" (0 = max(100, top_k))")
	}
	if len(f.Weights) > 0 {
		sum := 0.0
		for _, name := range sortedKeys(f.Weights) {
			w := f.Weights[name]
			if name != "lexical" && name != "dense" {
				c.add(at(floc, "weights", name), safeNumber(w), ErrTypeUnknownValue, "unknown retriever "+strconvQuote(name), "lexical | dense")
				continue
			}
			if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
				c.add(at(floc, "weights", name), safeNumber(w), ErrTypeOutOfRange, "weight must be finite and ≥ 0", "finite number ≥ 0")
				continue
			}
			sum += w
		}
		if sum == 0 && f.Weight("lexical") == 0 && f.Weight("dense") == 0 {
			c.add(at(floc, "weights"), nil, ErrTypeOutOfRange, "fusion weights are all zero", "at least one weight > 0")
		}
	}

	if !(q.MinScore >= 0 && q.MinScore <= 1) {
		c.add(at(root, "min_score"), safeNumber(q.MinScore), ErrTypeOutOfRange, "min_score must be in [0,1]", "number in [0,1]")
	}
	if q.TokenBudget < 0 {
		c.add(at(root, "token_budget"), q.TokenBudget, ErrTypeOutOfRange, "token_budget must not be negative", "integer ≥ 0 (0 = no limit)")
	}
	if q.MaxTokensPerHit < 0 {
		c.add(at(root, "max_tokens_per_hit"), q.MaxTokensPerHit, ErrTypeOutOfRange, "max_tokens_per_hit must not be negative", "integer ≥ 0 (0 = no limit)")
	}

	if len(q.Expansion) > MaxExpansionTerms {
		c.add(at(root, "expansion"), len(q.Expansion), ErrTypeOutOfRange, "too many expansion terms", "at most 64 terms")
	}
	for i, e := range q.Expansion {
		if e.Term == "" || len(e.Term) > MaxTermBytes || !utf8.ValidString(e.Term) {
			c.add(at(root, "expansion", i, "term"), e.Term, ErrTypeOutOfRange, "expansion term must be 1..128 bytes of UTF-8", "an index term, 1..128 bytes")
		}
		if !(e.Weight > 0 && e.Weight <= 1) {
			c.add(at(root, "expansion", i, "weight"), safeNumber(e.Weight), ErrTypeOutOfRange, "expansion weight must be in (0,1]", "number in (0,1]")
		}
	}
	if ls := q.LexicalStats; ls != nil {
		if ls.Docs < 0 || ls.SumDocLen < 0 {
			c.add(at(root, "lexical_stats"), ls.Docs, ErrTypeOutOfRange, "lexical_stats counts must not be negative", "docs ≥ 0, sum_doc_len ≥ 0")
		}
		if len(ls.DocFreq) > MaxLexicalStatsTerms {
			c.add(at(root, "lexical_stats", "doc_freq"), len(ls.DocFreq), ErrTypeOutOfRange, "too many lexical_stats terms", "at most 4096 terms")
		} else {
			terms := make([]string, 0, len(ls.DocFreq))
			for t := range ls.DocFreq {
				terms = append(terms, t)
			}
			slices.Sort(terms)
			for _, t := range terms {
				if n := ls.DocFreq[t]; n < 0 || n > ls.Docs {
					c.add(at(root, "lexical_stats", "doc_freq", t), n, ErrTypeOutOfRange, "document frequency out of range", "integer 0..docs")
				}
			}
		}
		if opts.MultiTenant {
			c.add(at(root, "lexical_stats"), nil, ErrTypeConflict, "lexical_stats with tenant-scoped statistics", "omitted in a MultiTenant collection")
		}
	}
	if !q.Syntax.Valid() {
		c.add(at(root, "syntax"), string(q.Syntax), ErrTypeUnknownValue, "unknown syntax "+strconvQuote(string(q.Syntax)), "text | operators (empty = text)")
	}
	if q.Collapse < 0 || q.Collapse > MaxTopK {
		c.add(at(root, "collapse"), q.Collapse, ErrTypeOutOfRange, "collapse out of range", "integer 0..1000 (0 = off)")
	}
	if len(q.Cursor) > MaxCursorBytes {
		c.add(at(root, "cursor"), len(q.Cursor), ErrTypeOutOfRange, "cursor is too long", "a next_cursor of a previous result (at most 8192 bytes)")
	} else if !isBase64URL(q.Cursor) {
		c.add(at(root, "cursor"), q.Cursor, ErrTypeInvalidFormat, "cursor is malformed", "a next_cursor of a previous result (base64url)")
	}

	if q.Filter != nil {
		n := 0
		q.Filter.validate(&c, at(root, "filter"), 1, &n)
	}

	ns := q.Scope.Namespace
	if !utf8.ValidString(ns) || !utf8.ValidString(q.Scope.URIPrefix) {
		c.add(at(root, "scope"), nil, ErrTypeInvalidUTF8, "scope is not valid UTF-8", "UTF-8 strings")
	}
	if opts.MultiTenant && ns == "" {
		c.add(at(root, "scope", "namespace"), ns, ErrTypeNamespaceRequired, "this collection is multi-tenant: a namespace is required", "non-empty namespace prefix")
	}
	p := q.Principal
	if p == nil {
		p = opts.Principal
	}
	if p != nil && ns != "" && !p.AllowsNamespace(ns) {
		c.add(at(root, "scope", "namespace"), ns, ErrTypeNamespaceForbidden, "principal "+strconvQuote(p.Name)+" may not read this namespace", "a namespace under one of the principal's prefixes")
	}
	return c.err()
}

// validateVector checks v against dim and the norm bound; loc gives the
// vector's location, built only for an error.
func validateVector(c *collector, loc func() []any, v []float32, dim int) {
	if dim > 0 && len(v) > 0 && len(v) != dim {
		c.add(loc(), len(v), ErrTypeDimensionMismatch, "vector has the wrong dimension", "float32["+itoa(dim)+"]")
	}
	var norm2 float64
	finite := true
	for i, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			c.add(at(loc(), i), safeNumber(f), ErrTypeNotFinite, "vector component is not finite", "finite float32")
			finite = false
			continue
		}
		norm2 += f * f
	}
	// Bound the squared norm so that every distance between two valid
	// vectors is finite in float32: |q−x|² ≤ (|q|+|x|)² ≤ 4·MaxVectorNorm2
	// = MaxFloat32, and |q·x| ≤ |q|·|x| ≤ MaxVectorNorm2.
	if finite && norm2 > MaxVectorNorm2 {
		c.add(loc(), norm2, ErrTypeVectorNorm, "vector's squared norm is too large: distances to it would overflow float32", "Σx² ≤ "+strconv.FormatFloat(MaxVectorNorm2, 'g', 4, 64))
	}
}

// MaxVectorNorm2 is the largest squared Euclidean norm a vector may have
// (math.MaxFloat32 / 4), so that L2 and inner-product distances between
// any two accepted vectors stay finite in float32.
const MaxVectorNorm2 = math.MaxFloat32 / 4

// Validate reports every problem with d at once (locs rooted at
// "document"). dim > 0 is the collection's dimension (a non-empty Vector
// must match it). Checked: id required, valid UTF-8, ≤ MaxIDBytes; trust one
// of the three classes; vector finite and of the right dimension; metadata
// keys non-empty and valid UTF-8, values set and numbers finite; namespace
// required in a MultiTenant collection and allowed for opts.Principal; acl entries non-empty; version_hash
// empty or 64 lowercase hex digits; content and source_uri valid UTF-8.
func (d *Document) Validate(dim int, opts ValidateOptions) error {
	var c collector
	d.validate(&c, func() []any { return []any{"document"} }, dim, opts)
	return c.err()
}

// ValidateDocuments validates a write batch, reporting every problem of every
// document (locs ["documents", i, …]) plus duplicate ids within the batch.
func ValidateDocuments(ds []Document, dim int, opts ValidateOptions) error {
	v := &BatchValidator{seen: make(map[string]int, len(ds)), dim: dim, opts: opts}
	for i := range ds {
		v.Add(&ds[i])
	}
	return v.Err()
}

// BatchValidator is ValidateDocuments a document at a time, for a batch
// whose documents do not all exist at once: Add the documents in batch
// order, then Err reports what ValidateDocuments would. It keeps each id
// (for duplicates) and the field errors, nothing else of a document.
type BatchValidator struct {
	c    collector
	seen map[string]int
	n    int
	dim  int
	opts ValidateOptions
}

// NewBatchValidator returns a validator for a collection of dimension dim
// (0: any).
func NewBatchValidator(dim int, opts ValidateOptions) *BatchValidator {
	return &BatchValidator{seen: map[string]int{}, dim: dim, opts: opts}
}

// Add validates d as documents[Len()].
func (v *BatchValidator) Add(d *Document) {
	i := v.n
	v.n++
	loc := func() []any { return []any{"documents", i} } // only for an error
	d.validate(&v.c, loc, v.dim, v.opts)
	if j, dup := v.seen[d.ID]; dup && d.ID != "" {
		v.c.add(at(loc(), "id"), d.ID, ErrTypeDuplicate, "id repeated in the batch (first at index "+itoa(j)+")", "distinct ids")
	} else {
		v.seen[d.ID] = i
	}
}

// Len returns the number of documents added.
func (v *BatchValidator) Len() int { return v.n }

// Grow makes room for n more ids, so that the id table of a large batch
// is made once, not grown id by id.
func (v *BatchValidator) Grow(n int) { v.seen = base.GrowMap(v.seen, n) }

// Index returns the index of the first document added with id.
func (v *BatchValidator) Index(id string) (int, bool) {
	i, ok := v.seen[id]
	return i, ok
}

// IDs calls f with each distinct id added and the index of its first
// document, in no particular order.
func (v *BatchValidator) IDs(f func(id string, i int)) {
	for id, i := range v.seen {
		f(id, i)
	}
}

// Errors returns the problems found so far, in batch order.
func (v *BatchValidator) Errors() []FieldError { return v.c.errs }

// Err returns every problem found as one *ValidationError, or nil.
func (v *BatchValidator) Err() error { return v.c.err() }

func (d *Document) validate(c *collector, root func() []any, dim int, opts ValidateOptions) {
	switch {
	case d.ID == "":
		c.add(at(root(), "id"), "", ErrTypeMissing, "id is required", "non-empty string")
	case !utf8.ValidString(d.ID):
		c.add(at(root(), "id"), strings.ToValidUTF8(d.ID, "\uFFFD"), ErrTypeInvalidUTF8, "id is not valid UTF-8", "UTF-8 string")
	case len(d.ID) > MaxIDBytes:
		c.add(at(root(), "id"), len(d.ID), ErrTypeOutOfRange, "id is too long", "at most 1024 bytes")
	}
	if !d.Trust.Valid() {
		c.add(at(root(), "trust"), string(d.Trust), ErrTypeUnknownValue, "trust must be authoritative, derived or external_unverified", "authoritative | derived | external_unverified")
	}
	validateVector(c, func() []any { return at(root(), "vector") }, d.Vector, dim)
	if !utf8.ValidString(d.Content) {
		c.add(at(root(), "content"), nil, ErrTypeInvalidUTF8, "content is not valid UTF-8", "UTF-8 string")
	}
	if !utf8.ValidString(d.SourceURI) {
		c.add(at(root(), "source_uri"), strings.ToValidUTF8(d.SourceURI, "\uFFFD"), ErrTypeInvalidUTF8, "source_uri is not valid UTF-8", "UTF-8 URI")
	}
	for _, k := range badMetadataKeys(d.Metadata) {
		v := d.Metadata[k]
		l := func() []any { return at(root(), "metadata", k) } // only for an error
		if k == "" || !utf8.ValidString(k) {
			c.add(l(), strings.ToValidUTF8(k, "\uFFFD"), ErrTypeInvalidFormat, "metadata key must be a non-empty UTF-8 string", "non-empty UTF-8 field name")
		}
		switch v.Kind() {
		case KindInvalid:
			c.add(l(), nil, ErrTypeMissing, "metadata value is unset", "string | number | bool | [string]")
		case KindNumber:
			if n, _ := v.Num(); math.IsNaN(n) || math.IsInf(n, 0) {
				c.add(l(), safeNumber(n), ErrTypeNotFinite, "metadata number is not finite", "finite number")
			}
		}
	}
	if opts.MultiTenant && d.Namespace == "" {
		c.add(at(root(), "namespace"), "", ErrTypeNamespaceRequired, "this collection is multi-tenant: a namespace is required", "non-empty namespace")
	}
	if p := opts.Principal; p != nil && (d.Namespace != "" || opts.MultiTenant) && !p.AllowsNamespace(d.Namespace) {
		c.add(at(root(), "namespace"), d.Namespace, ErrTypeNamespaceForbidden, "principal "+strconvQuote(p.Name)+" may not write this namespace", "a namespace under one of the principal's prefixes")
	}
	for i, a := range d.ACL {
		if a == "" {
			c.add(at(root(), "acl", i), "", ErrTypeMissing, "acl entry is empty", "principal or group name")
		}
	}
	if d.VersionHash != "" && !isHash(d.VersionHash) {
		c.add(at(root(), "version_hash"), d.VersionHash, ErrTypeInvalidFormat, "version_hash must be BLAKE3-256 as 64 lowercase hex digits", "64 lowercase hex digits")
	}
}

// badMetadataKeys returns, sorted, the keys of m whose key or value the
// metadata checks of validateDocument refuse (a list sized by the
// problems, not by the metadata).
func badMetadataKeys(m map[string]Value) []string {
	var bad []string
	for k, v := range m {
		n, _ := v.Num()
		if k == "" || !utf8.ValidString(k) || v.Kind() == KindInvalid || math.IsNaN(n) || math.IsInf(n, 0) {
			bad = append(bad, k)
		}
	}
	slices.Sort(bad)
	return bad
}

// isBase64URL reports whether s holds only unpadded base64url characters.
func isBase64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_') {
			return false
		}
	}
	return true
}

// isHash reports whether s is 64 lowercase hex digits.
func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'f') {
			return false
		}
	}
	return true
}
