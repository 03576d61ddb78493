package contract

import (
	"encoding/json"
	"errors"
	"math"
	"time"
)

// queryWire is Query's JSON form.
type queryWire struct {
	Text            string          `json:"text,omitempty"`
	Vector          vectorWire      `json:"vector,omitempty"`
	Scope           json.RawMessage `json:"scope,omitempty"`
	FreshnessMS     *int64          `json:"freshness_ms,omitempty"`
	TopK            int             `json:"top_k,omitempty"`
	BudgetMS        *int64          `json:"budget_ms,omitempty"`
	Filter          json.RawMessage `json:"filter,omitempty"`
	Mode            Mode            `json:"mode,omitempty"`
	Tiers           []Tier          `json:"tiers,omitempty"`
	Fusion          json.RawMessage `json:"fusion,omitempty"`
	MinScore        float64         `json:"min_score,omitempty"`
	TokenBudget     int             `json:"token_budget,omitempty"`
	MaxTokensPerHit int             `json:"max_tokens_per_hit,omitempty"`
	Verify          bool            `json:"verify,omitempty"`
	Cursor          string          `json:"cursor,omitempty"`
	Collapse        int             `json:"collapse,omitempty"`
	Highlight       bool            `json:"highlight,omitempty"`
	Syntax          Syntax          `json:"syntax,omitempty"`
	Expansion       []WeightedTerm  `json:"expansion,omitempty"`
	LexicalStats    *LexicalStats   `json:"lexical_stats,omitempty"`
}

// maxMS is the largest millisecond count a time.Duration holds.
const maxMS = math.MaxInt64 / int64(time.Millisecond)

func msPtr(d time.Duration) *int64 {
	if d == 0 {
		return nil
	}
	ms := int64(d / time.Millisecond)
	return &ms
}

// MarshalJSON encodes the closed JSON form shown on Query. Durations become
// integer milliseconds (truncated); Principal is never encoded.
func (q Query) MarshalJSON() ([]byte, error) {
	w := queryWire{
		Text: q.Text, Vector: vectorWire(q.Vector), FreshnessMS: msPtr(q.Freshness), TopK: q.TopK,
		BudgetMS: msPtr(q.Budget), Mode: q.Mode, Tiers: q.Tiers, MinScore: q.MinScore,
		TokenBudget: q.TokenBudget, MaxTokensPerHit: q.MaxTokensPerHit, Verify: q.Verify,
		Cursor: q.Cursor, Collapse: q.Collapse, Highlight: q.Highlight, Syntax: q.Syntax, Expansion: q.Expansion,
		LexicalStats: q.LexicalStats,
	}
	if q.Scope != (Scope{}) {
		b, err := json.Marshal(q.Scope)
		if err != nil {
			return nil, err
		}
		w.Scope = b
	}
	if q.Filter != nil {
		b, err := json.Marshal(q.Filter)
		if err != nil {
			return nil, err
		}
		w.Filter = b
	}
	if q.Fusion.Method != "" || q.Fusion.K != 0 || q.Fusion.Weights != nil || q.Fusion.Window != 0 {
		b, err := json.Marshal(q.Fusion)
		if err != nil {
			return nil, err
		}
		w.Fusion = b
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes the closed JSON form shown on Query: unknown fields
// are rejected (even under a plain json.Unmarshal), durations are integer
// milliseconds. It does not validate values; call Validate.
func (q *Query) UnmarshalJSON(data []byte) error {
	var w queryWire
	if err := strictUnmarshal(data, &w); err != nil {
		return err
	}
	out := Query{
		Text: w.Text, Vector: []float32(w.Vector), TopK: w.TopK, Mode: w.Mode, Tiers: w.Tiers,
		MinScore: w.MinScore, TokenBudget: w.TokenBudget, MaxTokensPerHit: w.MaxTokensPerHit, Verify: w.Verify,
		Cursor: w.Cursor, Collapse: w.Collapse, Highlight: w.Highlight, Syntax: w.Syntax, Expansion: w.Expansion,
		LexicalStats: w.LexicalStats,
	}
	if len(w.Scope) > 0 {
		if err := strictUnmarshal(w.Scope, &out.Scope); err != nil {
			return wrapNested(err, []any{"scope"}, err)
		}
	}
	if len(w.Fusion) > 0 {
		if err := strictUnmarshal(w.Fusion, &out.Fusion); err != nil {
			return wrapNested(err, []any{"fusion"}, err)
		}
	}
	for _, d := range []struct {
		name string
		ms   *int64
		dst  *time.Duration
	}{{"freshness_ms", w.FreshnessMS, &out.Freshness}, {"budget_ms", w.BudgetMS, &out.Budget}} {
		if d.ms == nil {
			continue
		}
		if *d.ms > maxMS || *d.ms < -maxMS {
			return &decodeError{loc: []any{d.name}, input: *d.ms, typ: ErrTypeOutOfRange, msg: d.name + " does not fit a duration", domain: "0 ≤ milliseconds ≤ 9223372036854"}
		}
		*d.dst = time.Duration(*d.ms) * time.Millisecond
	}
	if len(w.Filter) > 0 && string(w.Filter) != "null" {
		n := 0
		f, err := parseFilter(w.Filter, []any{"filter"}, 1, &n)
		if err != nil {
			return err
		}
		out.Filter = &f
	}
	*q = out
	return nil
}

// documentWire is Document's JSON form; metadata is decoded by
// decodeMetadata, so that an error can name its key.
type documentWire struct {
	ID          string       `json:"id"`
	Content     string       `json:"content"`
	Vector      vectorWire   `json:"vector,omitempty"`
	SourceURI   string       `json:"source_uri,omitempty"`
	Metadata    metadataWire `json:"metadata,omitempty"`
	Namespace   string       `json:"namespace,omitempty"`
	Trust       Trust        `json:"trust"`
	ACL         []string     `json:"acl,omitempty"`
	VersionHash string       `json:"version_hash,omitempty"`
	Timestamp   time.Time    `json:"timestamp,omitzero"`
}

// UnmarshalJSON decodes the closed JSON form shown on Document (unknown
// fields rejected). It does not validate values; call Validate.
func (d *Document) UnmarshalJSON(data []byte) error { return d.unmarshal(data, nil) }

// unmarshal is UnmarshalJSON; with sc not nil, it decodes through sc's
// wire form, and the vector into sc's reused array (docScratch).
func (d *Document) unmarshal(data []byte, sc *docScratch) error {
	return d.unmarshalVia(data, sc, sc != nil)
}

// unmarshalVia is unmarshal; with fast, through decodeFast where it takes
// data (data must be valid JSON then), else through strictUnmarshal.
func (d *Document) unmarshalVia(data []byte, sc *docScratch, fast bool) error {
	var w *documentWire
	if sc != nil {
		sc.w = documentWire{Vector: sc.vec[:0]}
		w = &sc.w
	} else {
		w = new(documentWire)
	}
	vec0 := w.Vector
	var err error
	if !fast || !w.decodeFast(data) {
		if fast {
			*w = documentWire{Vector: vec0}
		}
		err = strictUnmarshal(data, w)
	}
	if sc != nil && sc.reuse {
		if cap(w.Vector) > cap(sc.vec) {
			sc.vec = w.Vector[:0]
		}
		if len(w.Vector) == 0 && cap(w.Vector) > 0 {
			w.Vector = nil // no vector field: the array as it was given
		}
	}
	if err != nil {
		return err
	}
	out := Document{ID: w.ID, Content: w.Content, Vector: []float32(w.Vector), SourceURI: w.SourceURI,
		Namespace: w.Namespace, Trust: w.Trust, ACL: w.ACL, VersionHash: w.VersionHash, Timestamp: w.Timestamp}
	if w.Metadata != nil {
		m, err := decodeMetadata(w.Metadata)
		if err != nil {
			return err
		}
		out.Metadata = m
	}
	*d = out
	return nil
}

// docScratch is what EachDocument decodes every element through: one
// Document handed to f, one wire form, and (EachDocumentReusing) one
// vector array.
type docScratch struct {
	d     Document
	w     documentWire
	vec   []float32
	reuse bool // vec is reused across documents
}

// ChecksOwnKeys marks Document a KeysChecker: UnmarshalJSON checks the
// keys of its own input (strictUnmarshal on documentWire), so an
// enclosing decoding need not collect them again.
func (*Document) ChecksOwnKeys() {}

// documentOut mirrors Document without its methods, for MarshalJSON.
type documentOut Document

// MarshalJSON encodes the JSON form shown on Document.
func (d Document) MarshalJSON() ([]byte, error) { return json.Marshal(documentOut(d)) }

// DecodeQuery reads one JSON query under the closed-schema rules. Errors are
// *ValidationError with locs rooted at "query". It does not run Validate.
func DecodeQuery(data []byte) (Query, error) {
	var q Query
	if err := strictUnmarshal(data, &q); err != nil {
		return Query{}, decodeFailure(err, "query")
	}
	return q, nil
}

// splitArray returns the elements of data, a valid JSON array, as
// subslices of data (no copy), or ok=false when data is not one.
func splitArray(data []byte) (elems []json.RawMessage, ok bool) {
	if !json.Valid(data) {
		return nil, false
	}
	s := keyScanner{b: data, skipOnly: true}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '[' {
		return nil, false
	}
	s.i++
	elems = []json.RawMessage{}
	for {
		s.ws()
		if s.i >= len(s.b) {
			return nil, false
		}
		if s.b[s.i] == ']' {
			return elems, true
		}
		start := s.i
		if err := s.value(nil); err != nil {
			return nil, false
		}
		elems = append(elems, s.b[start:s.i])
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ',' {
			s.i++
		}
	}
}

// minDocumentBytes is the length of the shortest document that
// validates: {"id":"x","trust":"derived"}.
const minDocumentBytes = 28

// DocumentsHint is about how many documents data, a JSON array of
// documents, holds, for sizing what a writer keeps per document: the
// number of its elements, at most len(data)/28 (the shortest valid
// document is 28 bytes, so elements that cannot be documents do not
// inflate it), or 0 when data is not an array. It moves past the
// elements without decoding them and allocates nothing.
func DocumentsHint(data []byte) int {
	s := keyScanner{b: data, skipOnly: true}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '[' {
		return 0
	}
	s.i++
	n := 0
	for {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] == ']' {
			break
		}
		at := s.i
		if s.value(nil) != nil || s.i == at {
			break
		}
		n++
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ',' {
			s.i++
		}
	}
	return min(n, len(data)/minDocumentBytes)
}

// DecodeDocuments reads a JSON array of documents under the closed-schema
// rules. Errors are *ValidationError with locs rooted at "documents".
func DecodeDocuments(data []byte) ([]Document, error) {
	var ds []Document
	if err := EachDocument(data, func(_ int, d *Document) error {
		ds = append(ds, *d)
		return nil
	}); err != nil {
		return nil, err
	}
	if ds == nil {
		ds = []Document{}
	}
	return ds, nil
}

// EachDocument is DecodeDocuments one element at a time: it decodes
// documents[i] and calls f with it, in order, so that only one decoded
// document need exist at a time. d itself is reused for the next element:
// f copies *d to keep it (its strings, slices and map are fresh for each
// element, and f's from then on). The first element that does not decode
// stops it with that element's *ValidationError (locs rooted at
// "documents", i); an error of f stops it and is returned as is. data
// that is not a JSON array is refused before f is called (JSON null is
// an empty array).
func EachDocument(data []byte, f func(i int, d *Document) error) error {
	return eachDocument(data, false, f)
}

// EachDocumentReusing is EachDocument where every document's Vector
// reuses one backing array too: f must copy what it keeps of d.Vector
// before it returns. A writer
// that encodes each document as it comes (engine.Upserter) then holds one
// decoded vector, not one per document.
func EachDocumentReusing(data []byte, f func(i int, d *Document) error) error {
	return eachDocument(data, true, f)
}

func eachDocument(data []byte, reuse bool, f func(i int, d *Document) error) error {
	sc := &docScratch{reuse: reuse}
	if !json.Valid(data) {
		return eachRaw(data, sc, f)
	}
	s := keyScanner{b: data, skipOnly: true}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '[' {
		return eachRaw(data, sc, f)
	}
	s.i++
	for i := 0; ; i++ {
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			return nil
		}
		start := s.i
		if s.i >= len(s.b) || s.value(nil) != nil {
			if i > 0 { // (valid JSON scans; FuzzSplitArray)
				return decodeFailure(errors.New("documents: malformed array"), "documents")
			}
			return eachRaw(data, sc, f)
		}
		if err := eachElement(i, s.b[start:s.i], sc, f); err != nil {
			return err
		}
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ',' {
			s.i++
		}
	}
}

// eachElement decodes one element of a documents array, valid JSON, and
// calls f with it. Document checks its own keys, so its UnmarshalJSON is
// what strictUnmarshal would end in, without a second pass of
// encoding/json over the element.
func eachElement(i int, raw []byte, sc *docScratch, f func(i int, d *Document) error) error {
	d := &sc.d
	*d = Document{}
	if err := d.unmarshal(raw, sc); err != nil {
		ve := decodeFailure(err, "documents")
		for j := range ve.Errors {
			ve.Errors[j].Loc = at([]any{"documents", i}, ve.Errors[j].Loc[1:]...)
		}
		return ve
	}
	return f(i, d)
}

// eachRaw is EachDocument for data the scanner does not take as an array:
// encoding/json splits it, or says why it is not one. Nothing has been
// passed to f when it is called.
func eachRaw(data []byte, sc *docScratch, f func(i int, d *Document) error) error {
	var rs []json.RawMessage
	if err := strictUnmarshal(data, &rs); err != nil {
		return decodeFailure(err, "documents")
	}
	for i, raw := range rs {
		if err := eachElement(i, raw, sc, f); err != nil {
			return err
		}
	}
	return nil
}
