package server

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
)

// ---- collections ----

// CreateCollectionRequest is the body of POST /v1/collections.
type CreateCollectionRequest struct {
	Name    string                   `json:"name"`
	Options engine.CollectionOptions `json:"options"`
}

// CollectionView is a collection in responses. Stats is present for admin
// callers only (live document counts span tenants); for other callers
// Options.SourceRoots (server-side paths) is omitted, and so is Epoch
// (it counts every key's write batches: see hideEpoch).
type CollectionView struct {
	Name    string                   `json:"name"`
	Options engine.CollectionOptions `json:"options"`
	Epoch   uint64                   `json:"epoch"`
	Stats   *engine.CollectionStats  `json:"stats,omitempty"`
}

// Epoch-free forms of the responses that carry a collection's epoch, for
// non-admin API keys (hideEpoch): the nil Epoch shadows the embedded
// value's, and is omitted from the JSON.
type (
	keyCollectionView struct {
		CollectionView
		Epoch *uint64 `json:"epoch,omitempty"`
	}
	keyUpsertResponse struct {
		UpsertResponse
		Epoch *uint64 `json:"epoch,omitempty"`
	}
	keyDeleteResponse struct {
		DeleteResponse
		Epoch *uint64 `json:"epoch,omitempty"`
	}
)

// searchResponse is a search answer as the server writes it, through the
// contract's hand-written encoder (contract.Result.AppendJSON); epoch is
// false for a caller that may not see the collection's epoch (hideEpoch).
type searchResponse struct {
	res   *contract.Result
	epoch bool
}

func (r searchResponse) appendJSONErr(dst []byte) ([]byte, error) {
	return r.res.AppendJSON(dst, r.epoch)
}

// sizeHint is about the response's size: its contents plus the fixed
// members of each envelope.
func (r searchResponse) sizeHint() int {
	n := 64
	for i := range r.res.Hits {
		n += len(r.res.Hits[i].Content) + len(r.res.Hits[i].SourceURI) + 384
	}
	return n
}

// MarshalJSON writes what appendJSONErr does.
func (r searchResponse) MarshalJSON() ([]byte, error) { return r.appendJSONErr(nil) }

// hideEpoch reports whether rq's responses omit the collection's epoch:
// for every non-admin API key. The epoch counts the write batches of
// every key in the collection, so a key polling it (or comparing the
// epochs of its own writes) would learn when and how often other tenants
// write, the very count Stats is hidden for. Open mode and admin keys see
// it.
func (rq *request) hideEpoch() bool { return !rq.caller.admin }

// collectionView is view for rq's caller: stats and source roots for
// admins, no epoch for other keys (hideEpoch).
func (s *Server) collectionView(rq *request, c *engine.Collection) any {
	v := s.view(c, rq.caller.admin)
	if rq.hideEpoch() {
		return keyCollectionView{CollectionView: v}
	}
	return v
}

func (s *Server) view(c *engine.Collection, withStats bool) CollectionView {
	v := CollectionView{Name: c.Name(), Options: c.Options(), Epoch: c.Epoch()}
	if !withStats {
		// Server-side paths are for admins only (they map the host's
		// file system).
		v.Options.SourceRoots = nil
	}
	if withStats {
		st := c.Stats()
		v.Stats = &st
	}
	return v
}

func (s *Server) listCollections(rq *request) (int, any, error) {
	out := []any{}
	for _, name := range s.db.Collections() {
		c, err := s.db.Collection(name)
		if err != nil {
			continue
		}
		out = append(out, s.collectionView(rq, c))
	}
	return http.StatusOK, map[string]any{"collections": out}, nil
}

func (s *Server) createCollection(rq *request) (int, any, error) {
	var req CreateCollectionRequest
	if ae := decodeStrict(rq.body, "body", &req); ae != nil {
		return 0, nil, ae
	}
	var fes []contract.FieldError
	if req.Name == "" {
		fes = append(fes, contract.FieldError{Loc: []any{"body", "name"}, ErrorType: contract.ErrTypeMissing,
			Message: "name is required", ExpectedDomain: "1..128 of [A-Za-z0-9_.-]"})
	}
	o := req.Options
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		for _, e := range unjoin(err) {
			fes = append(fes, contract.FieldError{Loc: []any{"body", "options"}, InputValue: nil,
				ErrorType: contract.ErrTypeOutOfRange, Message: e.Error(), ExpectedDomain: "valid collection options"})
		}
	}
	if len(fes) > 0 {
		return 0, nil, validation(fes...)
	}
	c, err := s.db.CreateCollection(req.Name, req.Options)
	if errors.Is(err, engine.ErrBadName) {
		return 0, nil, validation(contract.FieldError{Loc: []any{"body", "name"}, InputValue: clip(req.Name),
			ErrorType: contract.ErrTypeInvalidFormat, Message: "invalid collection name", ExpectedDomain: "1..128 of [A-Za-z0-9_.-]"})
	}
	if errors.Is(err, engine.ErrExists) {
		return 0, nil, newErr(http.StatusConflict, StatusConflict, "exists", "collection already exists", []any{"body", "name"}, req.Name, "a new name")
	}
	if err != nil {
		return 0, nil, err
	}
	rq.header.Set("Location", "/v1/collections/"+c.Name())
	return http.StatusCreated, s.view(c, true), nil
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func (s *Server) collection(rq *request) (*engine.Collection, error) {
	name := rq.r.PathValue("name")
	c, err := s.db.Collection(name)
	if errors.Is(err, engine.ErrNotFound) {
		return nil, newErr(http.StatusNotFound, StatusNotFound, "not_found", "no such collection", []any{"path", "name"}, clip(name), "an existing collection")
	}
	return c, err
}

func (s *Server) getCollection(rq *request) (int, any, error) {
	c, err := s.collection(rq)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.collectionView(rq, c), nil
}

func (s *Server) dropCollection(rq *request) (int, any, error) {
	if len(rq.body) > 0 {
		return 0, nil, newErr(http.StatusBadRequest, StatusValidation, contract.ErrTypeInvalidFormat, "this request takes no body", []any{"body"}, nil, "no body")
	}
	c, err := s.collection(rq)
	if err != nil {
		return 0, nil, err
	}
	if err := s.db.DropCollection(c.Name()); err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return 0, nil, newErr(http.StatusNotFound, StatusNotFound, "not_found", "no such collection", []any{"path", "name"}, c.Name(), "an existing collection")
		}
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"dropped": c.Name()}, nil
}

// ---- documents ----

// UpsertRequest is the body of POST /v1/collections/{name}/documents: one
// atomic batch (one epoch). IfMatch maps ids to the version hash they must
// have when the batch is applied ("" = must not exist); the If-Match header
// does the same for a single-document batch. A mismatch fails the whole
// batch with 412.
type UpsertRequest struct {
	Documents BodyJSON          `json:"documents"`
	IfMatch   map[string]string `json:"if_match,omitempty"`
}

// BodyJSON is a JSON value kept as it is, like json.RawMessage, but
// aliasing the decoded input instead of copying it: the documents of an
// upsert are decoded from the request body, which the server holds until
// the request ends, so the body is not held twice. Decode it only with
// json.Unmarshal (contract.DecodeBytes) of input that outlives it — a
// json.Decoder reuses its buffer.
type BodyJSON []byte

// UnmarshalJSON keeps data (not a copy).
func (b *BodyJSON) UnmarshalJSON(data []byte) error {
	*b = data
	return nil
}

// ChecksOwnKeys marks BodyJSON a contract.KeysChecker: the documents are
// decoded by contract.DecodeDocuments, which checks their keys, so the
// request's own decoding does not collect them too.
func (BodyJSON) ChecksOwnKeys() {}

// MarshalJSON writes the value as it is ("null" when empty).
func (b BodyJSON) MarshalJSON() ([]byte, error) {
	if len(b) == 0 {
		return []byte("null"), nil
	}
	return b, nil
}

// UpsertResponse answers an upsert. Epoch, the batch's, is omitted for
// non-admin API keys (hideEpoch).
type UpsertResponse struct {
	Epoch uint64 `json:"epoch"`
	Count int    `json:"count"`
	// VersionHashes are the stored version hashes by id (the values
	// If-Match expects).
	VersionHashes map[string]string `json:"version_hashes"`
	// hashes, when not nil, stands for VersionHashes (appendJSON): the
	// batch's ids and hashes, in batch order (ids distinct).
	hashes []idHash
}

// idHash is one document's id and version hash.
type idHash struct {
	id   string
	hash *[32]byte
}

func (u UpsertResponse) appendJSON(dst []byte) []byte { return u.appendJSONEpoch(dst, true) }

func (u keyUpsertResponse) appendJSON(dst []byte) []byte {
	return u.UpsertResponse.appendJSONEpoch(dst, false)
}

// appendJSONEpoch appends u's JSON form (the map's keys sorted, as
// json.Marshal writes them), with the epoch or without it.
func (u UpsertResponse) appendJSONEpoch(dst []byte, epoch bool) []byte {
	if u.hashes != nil {
		return u.appendHashesJSON(dst, epoch)
	}
	ids := make([]string, 0, len(u.VersionHashes))
	size := 64
	for id, h := range u.VersionHashes {
		ids = append(ids, id)
		size += len(id) + len(h) + 6
	}
	slices.Sort(ids)
	dst = slices.Grow(dst, size)
	dst = u.appendHead(dst, epoch)
	if u.VersionHashes == nil {
		return append(dst, `,"version_hashes":null}`...)
	}
	dst = append(dst, `,"version_hashes":{`...)
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = contract.AppendJSONString(dst, id)
		dst = append(dst, ':')
		dst = contract.AppendJSONString(dst, u.VersionHashes[id])
	}
	return append(dst, '}', '}')
}

// appendHead appends '{', the epoch (when epoch) and the count.
func (u UpsertResponse) appendHead(dst []byte, epoch bool) []byte {
	dst = append(dst, '{')
	if epoch {
		dst = append(dst, `"epoch":`...)
		dst = strconv.AppendUint(dst, u.Epoch, 10)
		dst = append(dst, ',')
	}
	dst = append(dst, `"count":`...)
	return strconv.AppendInt(dst, int64(u.Count), 10)
}

// appendHashesJSON is appendJSONEpoch of u.hashes (sorted by id in
// place), each hash written as hex straight from its bytes, into one
// buffer sized up front (ids that need escapes aside; a trailing
// newline included, for writeJSON).
func (u UpsertResponse) appendHashesJSON(dst []byte, epoch bool) []byte {
	size := 64 + 2
	for _, h := range u.hashes {
		size += len(h.id) + 2*len(h.hash) + 6
	}
	return u.appendHashesChunks(slices.Grow(dst, size), epoch, nil)
}

// appendHashesChunks appends the JSON of appendHashesJSON to dst; when
// flush is not nil, it is called with dst whenever dst holds
// chunkBytes or more, and appending goes on into what it returns.
func (u UpsertResponse) appendHashesChunks(dst []byte, epoch bool, flush func([]byte) []byte) []byte {
	slices.SortFunc(u.hashes, func(a, b idHash) int { return strings.Compare(a.id, b.id) })
	dst = u.appendHead(dst, epoch)
	dst = append(dst, `,"version_hashes":{`...)
	for i, h := range u.hashes {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = contract.AppendJSONString(dst, h.id)
		dst = append(dst, ':', '"')
		dst = hex.AppendEncode(dst, h.hash[:])
		dst = append(dst, '"')
		if flush != nil && len(dst) >= chunkBytes {
			dst = flush(dst)
		}
	}
	return append(dst, '}', '}')
}

// appendJSONChunks is appendJSON in pieces (jsonChunker): an upsert
// answers with one id and hash per document, which for a batch of many
// small documents is about as large as the request body.
func (u UpsertResponse) appendJSONChunks(dst []byte, flush func([]byte) []byte) ([]byte, bool) {
	if u.hashes == nil || len(u.hashes) < chunkedItems {
		return dst, false
	}
	return u.appendHashesChunks(dst, true, flush), true
}

func (u keyUpsertResponse) appendJSONChunks(dst []byte, flush func([]byte) []byte) ([]byte, bool) {
	if u.hashes == nil || len(u.hashes) < chunkedItems {
		return dst, false
	}
	return u.appendHashesChunks(dst, false, flush), true
}

func isHexHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// mismatch is the 412 of a failed precondition of documents[i]. It names
// neither the stored version hash nor whether the document exists.
func mismatch(i int, loc []any, expected string) *apiError {
	return newErr(http.StatusPreconditionFailed, StatusPrecondition, contract.ErrTypeConflict,
		"version mismatch for document at documents["+strconv.Itoa(i)+"]", loc, expected, "the version hash the document has")
}

// idUnavailable is the uniform answer to an upsert of an id held by a
// document the caller cannot read (another namespace, or an ACL that does
// not name it).
func idUnavailable(i int, id string) *apiError {
	return newErr(http.StatusConflict, StatusConflict, ErrTypeIDUnavailable,
		"id not available to this API key; choose another id (ids are one key space per collection: prefix them with your namespace)",
		[]any{"documents", i, "id"}, clip(id), "an id that is free or held by a document the key can read")
}

// ErrTypeSourceNotPermitted is the error_type of the 400 an upsert gets
// for a file:// source_uri outside every source root configured for the
// document's namespace (Options.VerifyRoots, the collection's
// SourceRoots): the server reads no other local file, so it will not
// store a source it could never verify.
const ErrTypeSourceNotPermitted = "source_not_permitted"

// ErrTypeIDUnavailable is the error_type of the 409 an upsert gets for an
// id it may not use.
const ErrTypeIDUnavailable = "id_unavailable"

func mapKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func docIDs(docs []contract.Document) []string {
	out := make([]string, len(docs))
	for i := range docs {
		out[i] = docs[i].ID
	}
	return out
}

func (s *Server) upsert(rq *request) (int, any, error) {
	c, err := s.collection(rq)
	if err != nil {
		return 0, nil, err
	}
	var req UpsertRequest
	if ae := decodeStrict(rq.body, "body", &req); ae != nil {
		return 0, nil, ae
	}
	if len(req.Documents) == 0 || string(req.Documents) == "null" {
		return 0, nil, validation(contract.FieldError{Loc: []any{"documents"}, ErrorType: contract.ErrTypeMissing,
			Message: "documents is required", ExpectedDomain: "a non-empty array of documents"})
	}
	// The documents are decoded, checked and handed to the engine one at
	// a time (engine.Upserter encodes each into the batch's WAL payload),
	// so that the request's decoded form never exists whole. The tenancy
	// rules (namespaces, ids held by documents the key cannot read,
	// preconditions against what it can see) are the engine's
	// (engine.As), checked and applied atomically at Commit.
	p := rq.caller.principal
	u := c.NewUpserter(engine.As(p))
	u.Grow(contract.DocumentsHint(req.Documents))
	var srcFes, permFes []contract.FieldError
	firstID := ""
	if err := contract.EachDocumentReusing(req.Documents, func(i int, d *contract.Document) error {
		if fe := checkSourceURI(d.SourceURI, nil); fe != nil {
			fe.Loc = []any{"documents", i, "source_uri"} // (only for an error)
			srcFes = append(srcFes, *fe)
		}
		// A file:// source the engine may not read for this namespace is
		// refused: stored, it could only be kept unverified (verification
		// must not read files the caller could not), and a caller relying
		// on verify would not know. Only the caller's own namespaces'
		// roots are consulted: a document in a namespace the key may not
		// write is left to the engine's tenancy rules (403). These are
		// reported only when nothing else is wrong.
		if (p == nil || p.AllowsNamespace(d.Namespace)) && !c.SourcePermitted(d.Namespace, d.SourceURI) {
			permFes = append(permFes, contract.FieldError{Loc: []any{"documents", i, "source_uri"}, InputValue: clip(d.SourceURI), ErrorType: ErrTypeSourceNotPermitted,
				Message:        "file:// source_uri is not under a source root the server has configured for this document's namespace (the server reads no other local file)",
				ExpectedDomain: "a file:// URI under a configured verify root of the namespace, or a URI of another scheme"})
		}
		if i == 0 {
			firstID = d.ID
		}
		u.Add(d)
		return nil
	}); err != nil {
		return 0, nil, err
	}
	// Every document is in the batch's payload now: the body need not
	// stay live while the batch is written (the request's only other
	// references to it, req.Documents and the ids the Upserter keeps, do
	// not outlive the request).
	rq.body, req.Documents = nil, nil
	n := u.Len()
	if n == 0 {
		return 0, nil, validation(contract.FieldError{Loc: []any{"documents"}, InputValue: 0, ErrorType: contract.ErrTypeOutOfRange,
			Message: "documents is empty", ExpectedDomain: "a non-empty array of documents"})
	}
	fes := append(srcFes, u.DocumentErrors()...)
	// user holds the caller's own version expectations (if_match body
	// entries and the If-Match header) with where each came from; every
	// if_match id must name a document of the batch.
	user := map[string]string{}
	userLoc := map[string][]any{}
	for _, id := range sortedStrings(mapKeys(req.IfMatch)) {
		h := req.IfMatch[id]
		if _, ok := u.Index(id); !ok {
			// (the caller's own input, named back to it; existence is not
			// consulted)
			fes = append(fes, contract.FieldError{Loc: []any{"body", "if_match", clip(id)}, InputValue: clip(h), ErrorType: contract.ErrTypeUnknownValue,
				Message: "if_match names an id that is not in documents", ExpectedDomain: "ids of the batch's documents"})
			continue
		}
		if h != "" && !isHexHash(h) {
			fes = append(fes, contract.FieldError{Loc: []any{"body", "if_match", clip(id)}, InputValue: clip(h), ErrorType: contract.ErrTypeInvalidFormat,
				Message: "expected version hash is not 64 lowercase hex digits", ExpectedDomain: "64 lowercase hex digits or \"\" (must not exist)"})
		}
		user[id] = h
		userLoc[id] = []any{"body", "if_match", id}
	}
	if im := rq.r.Header.Get("If-Match"); im != "" {
		h := strings.Trim(strings.TrimPrefix(im, "W/"), `"`)
		switch {
		case n != 1:
			fes = append(fes, contract.FieldError{Loc: []any{"header", "If-Match"}, InputValue: clip(im), ErrorType: contract.ErrTypeInvalidFormat,
				Message: "the If-Match header needs a single-document batch (use if_match in the body for batches)", ExpectedDomain: "a batch of one document"})
		case !isHexHash(h):
			fes = append(fes, contract.FieldError{Loc: []any{"header", "If-Match"}, InputValue: clip(im), ErrorType: contract.ErrTypeInvalidFormat,
				Message: "If-Match is not a version hash", ExpectedDomain: "64 lowercase hex digits (optionally quoted)"})
		default:
			user[firstID] = h
			userLoc[firstID] = []any{"header", "If-Match"}
		}
	}
	if len(fes) > 0 {
		return 0, nil, validation(fes...)
	}
	if len(permFes) > 0 {
		return 0, nil, validation(permFes...)
	}
	var wopts []engine.WriteOption
	if len(user) > 0 {
		wopts = append(wopts, engine.IfMatch(user))
	}
	epoch, err := u.Commit(rq.ctx, wopts...)
	var nsErr *engine.NamespaceError
	var idErr *engine.IDUnavailableError
	var cfErr *engine.ConflictError
	switch {
	case errors.As(err, &nsErr):
		return 0, nil, newErr(http.StatusForbidden, StatusForbidden, contract.ErrTypeNamespaceForbidden,
			"the API key may not write this namespace", []any{"documents", nsErr.Index, "namespace"}, clip(nsErr.Namespace), strings.Join(nsErr.Allowed, " | "))
	case errors.As(err, &idErr):
		return 0, nil, idUnavailable(idErr.Index, idErr.ID)
	case errors.As(err, &cfErr):
		// Never pass the engine's text on: the 412 names the caller's own
		// precondition, not the stored state.
		if loc, ok := userLoc[cfErr.ID]; ok && cfErr.Index >= 0 {
			return 0, nil, mismatch(cfErr.Index, loc, cfErr.Expected)
		}
		return 0, nil, newErr(http.StatusConflict, StatusConflict, contract.ErrTypeConflict, "a document changed concurrently; retry", []any{"documents"}, nil, "")
	}
	if err != nil {
		return 0, nil, err
	}
	hashes := make([]idHash, 0, n)
	u.VersionHashes(func(id string, h *[32]byte) { hashes = append(hashes, idHash{id, h}) })
	if n == 1 {
		rq.header.Set("ETag", `"`+hex.EncodeToString(hashes[0].hash[:])+`"`)
	}
	up := UpsertResponse{Epoch: epoch, Count: n, hashes: hashes}
	if rq.hideEpoch() {
		return http.StatusOK, keyUpsertResponse{UpsertResponse: up}, nil
	}
	return http.StatusOK, up, nil
}

// DeleteRequest is the body of POST /v1/collections/{name}/documents/delete.
type DeleteRequest struct {
	IDs []string `json:"ids"`
}

// DeleteResponse answers a delete: the epoch of the batch and the number of
// ids deleted. Absent ids are not errors; in open mode Count is the number
// of ids named, with API keys it is the number of distinct ids the key
// could read (ids it cannot read, by namespace or ACL, count as absent and
// are not deleted). Epoch is omitted for non-admin API keys (hideEpoch).
type DeleteResponse struct {
	Epoch uint64 `json:"epoch"`
	Count int    `json:"count"`
}

func (s *Server) deleteDocuments(rq *request) (int, any, error) {
	c, err := s.collection(rq)
	if err != nil {
		return 0, nil, err
	}
	var req DeleteRequest
	if ae := decodeStrict(rq.body, "body", &req); ae != nil {
		return 0, nil, ae
	}
	var fes []contract.FieldError
	if len(req.IDs) == 0 {
		fes = append(fes, contract.FieldError{Loc: []any{"body", "ids"}, ErrorType: contract.ErrTypeMissing,
			Message: "ids is required and non-empty", ExpectedDomain: "a non-empty array of ids"})
	}
	for i, id := range req.IDs {
		if id == "" || len(id) > contract.MaxIDBytes {
			fes = append(fes, contract.FieldError{Loc: []any{"body", "ids", i}, InputValue: clip(id), ErrorType: contract.ErrTypeOutOfRange,
				Message: "id is empty or too long", ExpectedDomain: "1.." + strconv.Itoa(contract.MaxIDBytes) + " bytes"})
		}
	}
	if len(fes) > 0 {
		return 0, nil, validation(fes...)
	}
	return s.doDelete(rq, c, req.IDs)
}

func (s *Server) doDelete(rq *request, c *engine.Collection, ids []string) (int, any, error) {
	p := rq.caller.principal
	if p == nil {
		epoch, err := c.Delete(rq.ctx, ids)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, DeleteResponse{Epoch: epoch, Count: len(ids)}, nil
	}
	// Ids the caller cannot read (absent, another namespace, or an ACL
	// that does not name it) are treated alike: not found, not deleted,
	// no existence leak (engine.As; the check and the delete are one
	// atomic step).
	var n int
	epoch, err := c.Delete(rq.ctx, ids, engine.As(p), engine.CountInto(&n))
	if err != nil {
		return 0, nil, err
	}
	if rq.hideEpoch() {
		return http.StatusOK, keyDeleteResponse{DeleteResponse: DeleteResponse{Epoch: epoch, Count: n}}, nil
	}
	return http.StatusOK, DeleteResponse{Epoch: epoch, Count: n}, nil
}

func (s *Server) deleteDocument(rq *request) (int, any, error) {
	c, err := s.collection(rq)
	if err != nil {
		return 0, nil, err
	}
	id := rq.r.PathValue("id")
	if !utf8.ValidString(id) {
		return 0, nil, validation(contract.FieldError{Loc: []any{"path", "id"}, InputValue: clip(strings.ToValidUTF8(id, "\uFFFD")), ErrorType: contract.ErrTypeInvalidUTF8,
			Message: "id is not valid UTF-8", ExpectedDomain: "valid UTF-8"})
	}
	if id == "" || len(id) > contract.MaxIDBytes {
		return 0, nil, validation(contract.FieldError{Loc: []any{"path", "id"}, InputValue: clip(id), ErrorType: contract.ErrTypeOutOfRange,
			Message: "id is empty or too long", ExpectedDomain: "1.." + strconv.Itoa(contract.MaxIDBytes) + " bytes"})
	}
	if len(rq.body) > 0 {
		return 0, nil, newErr(http.StatusBadRequest, StatusValidation, contract.ErrTypeInvalidFormat, "this request takes no body", []any{"body"}, nil, "no body")
	}
	return s.doDelete(rq, c, []string{id})
}

func (s *Server) getDocument(rq *request) (int, any, error) {
	c, err := s.collection(rq)
	if err != nil {
		return 0, nil, err
	}
	id := rq.r.PathValue("id")
	if !utf8.ValidString(id) {
		return 0, nil, validation(contract.FieldError{Loc: []any{"path", "id"}, InputValue: clip(strings.ToValidUTF8(id, "\uFFFD")), ErrorType: contract.ErrTypeInvalidUTF8,
			Message: "id is not valid UTF-8", ExpectedDomain: "valid UTF-8"})
	}
	notFound := newErr(http.StatusNotFound, StatusNotFound, "not_found", "no such document", []any{"path", "id"}, clip(id), "an existing document id")
	d, err := c.Get(rq.ctx, id)
	if errors.Is(err, engine.ErrNotFound) {
		return 0, nil, notFound
	}
	if err != nil {
		return 0, nil, err
	}
	if p := rq.caller.principal; p != nil && !p.CanRead(d.Namespace, d.ACL) {
		return 0, nil, notFound
	}
	rq.header.Set("ETag", `"`+d.VersionHash+`"`)
	return http.StatusOK, d, nil
}

// DocumentSummary is one listed document (GET the document for content,
// vector and metadata).
type DocumentSummary struct {
	ID          string         `json:"id"`
	Namespace   string         `json:"namespace,omitempty"`
	SourceURI   string         `json:"source_uri,omitempty"`
	VersionHash string         `json:"version_hash"`
	Timestamp   time.Time      `json:"timestamp,omitzero"`
	Trust       contract.Trust `json:"trust"`
}

// ListResponse is a page of documents; NextCursor is set when the page is
// full (the next page may be empty).
type ListResponse struct {
	Documents  []DocumentSummary `json:"documents"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

func (s *Server) listDocuments(rq *request) (int, any, error) {
	c, err := s.collection(rq)
	if err != nil {
		return 0, nil, err
	}
	q := rq.r.URL.Query()
	var fes []contract.FieldError
	for k := range q {
		if k != "limit" && k != "cursor" {
			fes = append(fes, contract.FieldError{Loc: []any{"query", k}, InputValue: clip(q.Get(k)), ErrorType: contract.ErrTypeUnknownField,
				Message: "unknown query parameter", ExpectedDomain: "limit, cursor"})
		}
	}
	limit := DefaultListLimit
	if ls := q.Get("limit"); ls != "" {
		n, err := strconv.Atoi(ls)
		if err != nil || n < 1 {
			fes = append(fes, contract.FieldError{Loc: []any{"query", "limit"}, InputValue: clip(ls), ErrorType: contract.ErrTypeOutOfRange,
				Message: "limit must be a positive integer", ExpectedDomain: "integer ≥ 1 (values above 1000 are capped)"})
		}
		limit = min(n, MaxListLimit)
	}
	principalName := rq.caller.name
	after := ""
	if cur := q.Get("cursor"); cur != "" {
		a, err := s.cursors.decode(cur, c.Name(), principalName)
		if err != nil {
			fes = append(fes, contract.FieldError{Loc: []any{"query", "cursor"}, InputValue: clip(cur), ErrorType: contract.ErrTypeInvalidFormat,
				Message: err.Error(), ExpectedDomain: "a next_cursor returned by this listing"})
		}
		after = a
	}
	if len(fes) > 0 {
		return 0, nil, validation(fes...)
	}
	// Scope and ACL are the engine's pre-filter: a page costs
	// O(page + log n) whoever else owns documents in the collection.
	docs, err := c.ListDocuments(rq.ctx, rq.caller.principal, after, limit)
	if err != nil {
		return 0, nil, err
	}
	out := ListResponse{Documents: make([]DocumentSummary, 0, len(docs))}
	for _, d := range docs {
		after = d.ID
		out.Documents = append(out.Documents, DocumentSummary{ID: d.ID, Namespace: d.Namespace, SourceURI: d.SourceURI,
			VersionHash: d.VersionHash, Timestamp: d.Timestamp, Trust: d.Trust})
	}
	if len(out.Documents) == limit {
		out.NextCursor = s.cursors.encode(c.Name(), principalName, after)
	}
	return http.StatusOK, out, nil
}

// ---- search ----

func (s *Server) search(rq *request) (int, any, error) {
	c, err := s.collection(rq)
	if err != nil {
		return 0, nil, err
	}
	if len(rq.body) == 0 {
		return 0, nil, validation(contract.FieldError{Loc: []any{"query"}, ErrorType: contract.ErrTypeMissing,
			Message: "request body (a query) is required", ExpectedDomain: "a JSON query"})
	}
	q, err := contract.DecodeQuery(rq.body)
	if err != nil {
		return 0, nil, err
	}
	// The contract reads top_k 0 as "omitted" (the default 10); over HTTP an
	// explicit 0 is a client bug and is rejected.
	var raw map[string]json.RawMessage
	if json.Unmarshal(rq.body, &raw) == nil {
		if v, ok := raw["top_k"]; ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(string(v)), 64); err == nil && f == 0 {
				return 0, nil, validation(contract.FieldError{Loc: []any{"query", "top_k"}, InputValue: 0, ErrorType: contract.ErrTypeOutOfRange,
					Message: "top_k out of range", ExpectedDomain: "integer 1..1000 (omitted = 10)"})
			}
		}
	}
	// The request deadline bounds the contract's budget.
	if q.Budget == 0 || q.Budget > s.o.RequestTimeout {
		if q.Budget >= 0 {
			q.Budget = s.o.RequestTimeout
		}
	}
	q.Principal = rq.caller.principal
	res, err := c.Search(rq.ctx, q)
	if err != nil {
		return 0, nil, err
	}
	if res.Hits == nil {
		res.Hits = []contract.Envelope{}
	}
	return http.StatusOK, searchResponse{res: &res, epoch: !rq.hideEpoch()}, nil
}

// ---- jobs ----

func (s *Server) submitJob(rq *request) (int, any, error) {
	var req JobRequest
	if ae := decodeStrict(rq.body, "body", &req); ae != nil {
		return 0, nil, ae
	}
	j, err := s.queueJob(req, JobOptions{})
	if errors.Is(err, errQueueFull) {
		return 0, nil, newErr(http.StatusTooManyRequests, StatusTooMany, "job_queue_full", err.Error(), nil, nil, "")
	}
	if errors.Is(err, errJobsClosed) {
		return 0, nil, newErr(http.StatusServiceUnavailable, StatusUnavailable, "shutting_down", err.Error(), nil, nil, "")
	}
	if err != nil {
		return 0, nil, err
	}
	v, _ := s.jobs.get(j.id)
	rq.header.Set("Location", "/v1/jobs/"+j.id)
	return http.StatusAccepted, v, nil
}

func (s *Server) listJobs(rq *request) (int, any, error) {
	return http.StatusOK, map[string]any{"jobs": s.jobs.list()}, nil
}

func (s *Server) getJob(rq *request) (int, any, error) {
	id := rq.r.PathValue("id")
	v, ok := s.jobs.get(id)
	if !ok {
		return 0, nil, newErr(http.StatusNotFound, StatusNotFound, "not_found", "no such job", []any{"path", "id"}, clip(id), "a job id")
	}
	return http.StatusOK, v, nil
}

func (s *Server) cancelJob(rq *request) (int, any, error) {
	id := rq.r.PathValue("id")
	v, ok, finished := s.jobs.cancelJob(id)
	if !ok {
		return 0, nil, newErr(http.StatusNotFound, StatusNotFound, "not_found", "no such job", []any{"path", "id"}, clip(id), "a job id")
	}
	if finished {
		return 0, nil, newErr(http.StatusConflict, StatusConflict, "job_finished", "the job has already finished ("+string(v.State)+")", []any{"path", "id"}, id, "a queued or running job")
	}
	return http.StatusOK, v, nil
}
