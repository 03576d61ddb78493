package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stratasearch/strata/engine/catalog"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/redact"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/engine/tier"
	"github.com/stratasearch/strata/engine/verify"
)

// Collection is a named set of documents with a fixed vector dimension and
// metric, stored in its own directory. Safe for concurrent use.
type Collection struct {
	db     *DB
	name   string
	dir    string
	o      CollectionOptions
	metric tier.Metric
	an     *text.Analyzer
	store  *tier.Store
	warm   *catalog.WarmCache    // lexical catalogs of warm segment sets
	cold   *catalog.ColdCache    // and of cold archives
	lists  *catalog.ListingCache // id listings of warm segments and cold archives
	verify *verify.Cache

	// writeMu serialises writes, so an IfMatch check and the batch it
	// guards are one atomic step, and DeleteByNamespace / DeleteBySource
	// see no concurrent write between listing and deleting.
	writeMu sync.Mutex
	closed  atomic.Bool
	shape   shapeState         // shape.go: cursor key, retained snapshots
	emb     collectionEmbedder // embedding.go: the live embedder
	keys    keySpaceCache      // keyspace.go: the last search key space

	// testHookRetriever, if set, runs at the start of each retriever
	// ("lexical", "dense") in Search, and testHookRetrieverDone when its
	// goroutine ends. Tests only.
	testHookRetriever     func(name string)
	testHookRetrieverDone func(name string)
	// testHookPlan, if set, runs each time a search builds its plan
	// (plan.go). Tests only.
	testHookPlan func()
}

func openCollection(db *DB, name, dir string, o CollectionOptions) (*Collection, error) {
	var topts text.Options
	if o.Analyzer == AnalyzerProse {
		topts = text.ProseOptions()
	} else {
		topts = text.CodeOptions()
	}
	an, err := text.New(topts)
	if err != nil {
		return nil, fmt.Errorf("engine: collection %q: analyzer: %w", name, err)
	}
	sync, err := o.Sync.wal()
	if err != nil {
		return nil, fmt.Errorf("engine: collection %q: %w", name, err)
	}
	metric, err := parseMetric(o.Metric)
	if err != nil {
		return nil, fmt.Errorf("engine: collection %q: %w", name, err)
	}
	c := &Collection{db: db, name: name, dir: dir, o: o, metric: metric, an: an, verify: verify.NewCache(),
		warm: catalog.NewWarmCache(an, o.IndexedFields), cold: catalog.NewColdCache(an),
		lists: catalog.NewListingCache()}
	memSize := o.MemTableSizeBytes
	if memSize < 0 {
		memSize = 0 // automatic flush off
	}
	to := tier.Options{
		FS:                db.o.FS,
		Dir:               filepath.Join(dir, storeDir),
		Dim:               o.Dim,
		Metric:            c.metric,
		Sync:              sync,
		SyncInterval:      o.SyncInterval,
		NewLexical:        func() tier.LexicalIndexer { return newHotIndex(an, o.IndexedFields) },
		LexicalSegments:   catalog.Segments{An: an},
		MemTableSizeBytes: memSize,
		// Background compaction after each automatic flush keeps the
		// warm segment count bounded (and writes out of the tier's
		// backpressure stop bound).
		AutoCompact: !db.o.Replica,
		// A replica serves its segment set as published: the indexes a
		// background flush deferred are built by an explicit Flush only.
		ManualIndex: db.o.Replica,
		Logger:      db.o.Logger,
		Fetch:       db.o.SegmentFetch,
	}
	o.TierSegmentIndex(&to)
	if testTierOptions != nil {
		testTierOptions(&to)
	}
	st, err := tier.Open(to)
	if err != nil {
		return nil, fmt.Errorf("engine: collection %q: %w", name, err)
	}
	c.store = st
	if err := c.attachConfiguredEmbedder(); err != nil { // embedding.go
		_ = st.Close()
		return nil, fmt.Errorf("engine: collection %q: %w", name, err)
	}
	return c, nil
}

// testTierOptions, if set, adjusts every collection's tier options before
// it opens (mutation checks in tests).
var testTierOptions func(*tier.Options)

// Name returns the collection's name.
func (c *Collection) Name() string { return c.name }

// Options returns the collection's options (defaults filled).
func (c *Collection) Options() CollectionOptions { return c.o }

// Epoch returns the newest visible epoch.
func (c *Collection) Epoch() uint64 { return c.store.Epoch() }

func (c *Collection) close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.shape.releaseAll() // shape.go
	return c.store.Close()
}

func (c *Collection) check(ctx context.Context) error {
	if c.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

// WriteOption modifies one Upsert or Delete (IfMatch, As, CountInto).
type WriteOption func(*writeOpts)

type writeOpts struct {
	ifMatch    map[string]string
	principal  *contract.Principal // tenancy.go
	count      *int
	verifiable bool // VerifiableSources (verify.go)
}

// IfMatch makes an Upsert or Delete conditional (optimistic concurrency):
// for every id in expected, the version stored when the batch is applied
// must have exactly that version hash (64 lowercase hex digits), or the
// whole batch fails with a *ConflictError (errors.Is(err, ErrConflict))
// and nothing is written. An expected "" means the id must not exist
// (or, with As, not be readable by the principal).
func IfMatch(expected map[string]string) WriteOption {
	return func(w *writeOpts) { w.ifMatch = expected }
}

func (c *Collection) validateOpts() contract.ValidateOptions {
	return contract.ValidateOptions{MultiTenant: c.o.MultiTenant}
}

// Upsert writes docs as one atomic batch (one WAL record, one epoch) and
// returns that epoch; after it returns, every search sees the new versions
// and never the replaced ones. docs are validated first
// (contract.ValidateDocuments plus the collection's IndexedFields schema):
// every problem comes back in one *contract.ValidationError. A document
// without a VersionHash gets BLAKE3-256 of its Content. Documents with
// content and no vector are embedded by the collection's live embedder, in
// one call, before the WAL append (embedding.go; ErrNoEmbedder when the
// collection records a model and none is attached). A batch whose WAL
// record could exceed MaxBatchBytes is refused before embedding
// (ErrBatchTooLarge). With As(p) the tenancy rules apply (tenancy.go):
// namespaces p may not name fail with *NamespaceError, ids held by
// documents p cannot read with *IDUnavailableError. Errors: validation,
// ErrBatchTooLarge, *ConflictError (IfMatch), ErrClosed, the context's
// error, tier write errors (tier.ErrReadOnly after an I/O failure). In a
// collection that does not embed, each document is checked and encoded
// into the batch's WAL payload in turn (Upserter, which a caller decoding
// a large request can use directly, one document at a time); the
// MemTable applies the payload's decoded form.
func (c *Collection) Upsert(ctx context.Context, docs []contract.Document, opts ...WriteOption) (uint64, error) {
	if err := c.check(ctx); err != nil {
		return 0, err
	}
	u := c.NewUpserter(opts...)
	if u.embed {
		epoch, _, err := c.upsertDocs(ctx, docs, u.wo)
		return epoch, err
	}
	for i := range docs {
		u.Add(&docs[i])
	}
	return u.Commit(ctx)
}

// upsertDocs is Upsert with the whole batch decoded (a collection that
// embeds: the documents without a vector are embedded in one call). It
// also returns the batch's ops as applied.
func (c *Collection) upsertDocs(ctx context.Context, docs []contract.Document, wo writeOpts) (uint64, []tier.Op, error) {
	if err := c.validateDocs(docs); err != nil {
		return 0, nil, err
	}
	p := wo.principal
	if p != nil {
		for i := range docs {
			if !p.AllowsNamespace(docs[i].Namespace) {
				return 0, nil, &NamespaceError{Index: i, Namespace: docs[i].Namespace, Allowed: p.Namespaces}
			}
		}
	}
	ids := make([]string, len(docs))
	for i := range docs {
		ids[i] = docs[i].ID
	}
	// Redaction at ingest (package engine/redact), before anything
	// derives from the text (embedding, postings, doc store).
	docs = c.redactDocs(docs)
	// What will be written is bounded before any further work (limits.go).
	if err := c.checkBatchSize(docs); err != nil {
		return 0, nil, err
	}
	// Embedding (embedding.go): text-only documents get vectors from the
	// live embedder, in one call, before the WAL append.
	docs, err := c.embedDocs(ctx, docs)
	if err != nil {
		return 0, nil, err
	}
	b := tier.Batch{Ops: make([]tier.Op, 0, len(docs))}
	for i := range docs {
		td, err := toTier(&docs[i], wo.verifiable && docs[i].SourceURI != "")
		if err != nil {
			return 0, nil, fmt.Errorf("engine: document %d: %w", i, err)
		}
		b.Upsert(td)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.closed.Load() {
		return 0, nil, ErrClosed
	}
	if len(wo.ifMatch) > 0 || p != nil {
		sn := c.store.Snapshot()
		defer sn.Close()
		if err := checkIfMatch(sn, p, ids, wo.ifMatch); err != nil {
			return 0, nil, err
		}
		if p != nil {
			for i, id := range ids {
				if _, hidden := visibleVersion(sn, p, id); hidden {
					return 0, nil, &IDUnavailableError{Index: i, ID: id}
				}
			}
		}
	}
	epoch, err := c.store.Apply(&b)
	if err != nil {
		return 0, nil, err
	}
	return epoch, b.Ops, nil
}

// validateDocs runs contract.ValidateDocuments and the IndexedFields
// schema check, merging every problem into one ValidationError.
// checkedMetaKeys returns, sorted, the keys of m that validateDocs looks
// at: reserved ones and indexed fields (a list sized by those, not by the
// metadata).
func (c *Collection) checkedMetaKeys(m map[string]contract.Value) []string {
	var ks []string
	for k := range m {
		if _, indexed := c.o.IndexedFields[k]; indexed || strings.HasPrefix(k, reservedMetaPrefix) {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

func (c *Collection) validateDocs(docs []contract.Document) error {
	var fes []contract.FieldError
	if err := contract.ValidateDocuments(docs, c.o.Dim, c.validateOpts()); err != nil {
		var ve *contract.ValidationError
		if !errors.As(err, &ve) {
			return err
		}
		fes = append(fes, ve.Errors...)
	}
	for i := range docs {
		fes = c.docChecks(fes, i, &docs[i])
	}
	if len(fes) > 0 {
		return &contract.ValidationError{Errors: fes}
	}
	return nil
}

// docChecks appends to fes the collection's own checks of d, documents[i]
// (beyond contract.ValidateDocuments): a zero vector under cosine,
// reserved metadata keys, the IndexedFields schema.
func (c *Collection) docChecks(fes []contract.FieldError, i int, d *contract.Document) []contract.FieldError {
	if fe, bad := c.zeroCosine(d.Vector, nil); bad {
		fe.Loc = []any{"documents", i, "vector"} // (only for an error)
		fes = append(fes, fe)
	}
	for _, f := range c.checkedMetaKeys(d.Metadata) {
		if strings.HasPrefix(f, reservedMetaPrefix) {
			fes = append(fes, contract.FieldError{
				Loc:            []any{"documents", i, "metadata", f},
				InputValue:     f,
				ErrorType:      contract.ErrTypeInvalidFormat,
				Message:        "metadata keys starting with \"\\u0000strata.\" are reserved for the engine",
				ExpectedDomain: "a field name not starting with \"\\u0000strata.\"",
			})
			continue
		}
		ft, ok := c.o.IndexedFields[f]
		if !ok {
			continue
		}
		v := d.Metadata[f]
		k := v.Kind()
		okType := (ft == FieldKeyword && (k == contract.KindString || k == contract.KindStrings)) ||
			(ft == FieldBool && k == contract.KindBool) ||
			(ft == FieldNumber && k == contract.KindNumber)
		if !okType && k != contract.KindInvalid {
			fes = append(fes, contract.FieldError{
				Loc:            []any{"documents", i, "metadata", f},
				InputValue:     v,
				ErrorType:      contract.ErrTypeInvalidFormat,
				Message:        fmt.Sprintf("metadata field %q is declared %s", f, ft),
				ExpectedDomain: fieldDomain(ft),
			})
		}
	}
	return fes
}

// zeroCosine reports a zero vector in a cosine collection: it has no
// direction, so every cosine similarity to it would be an arbitrary 0.
func (c *Collection) zeroCosine(v []float32, loc []any) (contract.FieldError, bool) {
	if c.metric != tier.Cosine || len(v) == 0 {
		return contract.FieldError{}, false
	}
	for _, x := range v {
		if x != 0 {
			return contract.FieldError{}, false
		}
	}
	return contract.FieldError{Loc: loc, InputValue: "zero vector", ErrorType: contract.ErrTypeOutOfRange,
		Message:        "a cosine collection cannot hold or search with a zero vector (it has no direction)",
		ExpectedDomain: "a vector with at least one non-zero component"}, true
}

func fieldDomain(ft FieldType) string {
	switch ft {
	case FieldKeyword:
		return "string or list of strings"
	case FieldBool:
		return "boolean"
	default:
		return "finite number"
	}
}

// Delete removes ids as one atomic batch (one epoch) and returns the epoch.
// Deleting an absent id is not an error. After it returns, no lexical,
// dense or filtered search and no Get returns them. With As(p), ids held
// by documents p cannot read are skipped, as absent ones (tenancy.go); when
// nothing is left to delete the current epoch is returned. IfMatch makes it
// conditional, CountInto reports how many documents went. Errors: an empty
// or empty-id list (*contract.ValidationError), *ConflictError (IfMatch),
// ErrClosed, context, tier.
func (c *Collection) Delete(ctx context.Context, ids []string, opts ...WriteOption) (uint64, error) {
	if err := c.check(ctx); err != nil {
		return 0, err
	}
	var wo writeOpts
	for _, o := range opts {
		o(&wo)
	}
	var fes []contract.FieldError
	if len(ids) == 0 {
		fes = append(fes, contract.FieldError{Loc: []any{"ids"}, InputValue: []string{}, ErrorType: contract.ErrTypeMissing,
			Message: "no ids to delete", ExpectedDomain: "at least one id"})
	}
	for i, id := range ids {
		if id == "" {
			fes = append(fes, contract.FieldError{Loc: []any{"ids", i}, InputValue: id, ErrorType: contract.ErrTypeMissing,
				Message: "empty id", ExpectedDomain: "non-empty string"})
		}
	}
	if len(fes) > 0 {
		return 0, &contract.ValidationError{Errors: fes}
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.closed.Load() {
		return 0, ErrClosed
	}
	p := wo.principal
	var b tier.Batch
	if len(wo.ifMatch) == 0 && p == nil && wo.count == nil {
		for _, id := range ids {
			b.Delete(id)
		}
		return c.store.Apply(&b)
	}
	sn := c.store.Snapshot()
	defer sn.Close()
	if err := checkIfMatch(sn, p, ids, wo.ifMatch); err != nil {
		return 0, err
	}
	seen := make(map[string]bool, len(ids))
	n := 0
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		d, _, ok := sn.Get(id)
		if !ok {
			if p == nil {
				b.Delete(id) // absent: a no-op, as without options
			}
			continue
		}
		if p != nil && !p.CanRead(d.Namespace, d.ACL) {
			continue
		}
		b.Delete(id)
		n++
	}
	if b.Len() == 0 {
		if wo.count != nil {
			*wo.count = 0
		}
		return sn.Epoch(), nil
	}
	e, err := c.store.Apply(&b)
	if err == nil && wo.count != nil {
		*wo.count = n
	}
	return e, err
}

// deleteWhere deletes, as one batch, every live document for which match
// holds. It returns the epoch (the current one when nothing matched) and
// the number of documents deleted.
func (c *Collection) deleteWhere(ctx context.Context, match func(*tier.Document) bool) (uint64, int, error) {
	if err := c.check(ctx); err != nil {
		return 0, 0, err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.closed.Load() {
		return 0, 0, ErrClosed
	}
	sn := c.store.Snapshot()
	var b tier.Batch
	for _, id := range sn.LiveIDs() {
		if d, _, ok := sn.Get(id); ok && match(d) {
			b.Delete(id)
		}
	}
	e := sn.Epoch()
	sn.Close()
	if b.Len() == 0 {
		return e, 0, nil
	}
	e, err := c.store.Apply(&b)
	if err != nil {
		return 0, 0, err
	}
	return e, b.Len(), nil
}

// DeleteByNamespace deletes every document whose namespace starts with
// prefix (a namespace is a scope path such as "tenant-a/repo-x/"), as one
// atomic epoch. It returns the epoch and the count. An empty prefix is a
// validation error (it would delete everything).
func (c *Collection) DeleteByNamespace(ctx context.Context, prefix string) (uint64, int, error) {
	if prefix == "" {
		return 0, 0, &contract.ValidationError{Errors: []contract.FieldError{{Loc: []any{"namespace"}, InputValue: "",
			ErrorType: contract.ErrTypeMissing, Message: "empty namespace prefix", ExpectedDomain: "non-empty namespace prefix"}}}
	}
	return c.deleteWhere(ctx, func(d *tier.Document) bool { return strings.HasPrefix(d.Namespace, prefix) })
}

// DeleteBySource deletes every chunk of a source: every document whose
// SourceURI, without its fragment (#L10-L42), equals uri without its
// fragment, or equals the redacted form of uri without its fragment (the
// SourceURI Upsert stores when the Redact policy applies and uri holds a
// secret, see redact.URI; so a connector deletes by the URI it wrote
// with). One atomic epoch; returns the epoch and the count.
func (c *Collection) DeleteBySource(ctx context.Context, uri string) (uint64, int, error) {
	base := stripFragment(uri)
	if base == "" {
		return 0, 0, &contract.ValidationError{Errors: []contract.FieldError{{Loc: []any{"source_uri"}, InputValue: uri,
			ErrorType: contract.ErrTypeMissing, Message: "empty source uri", ExpectedDomain: "non-empty URI"}}}
	}
	var bases []string
	for _, f := range redact.URIMatchForms(uri) {
		if b := stripFragment(f); b != "" && (len(bases) == 0 || bases[0] != b) {
			bases = append(bases, b)
		}
	}
	return c.deleteWhere(ctx, func(d *tier.Document) bool {
		if d.SourceURI == "" {
			return false
		}
		s := stripFragment(d.SourceURI)
		for _, b := range bases {
			if s == b {
				return true
			}
		}
		return false
	})
}

func stripFragment(u string) string {
	if i := strings.IndexByte(u, '#'); i >= 0 {
		return u[:i]
	}
	return u
}

// Get returns the newest version of id, or ErrNotFound. Timestamp is the
// commit time of that version; VersionHash its stored hash.
func (c *Collection) Get(ctx context.Context, id string) (contract.Document, error) {
	if err := c.check(ctx); err != nil {
		return contract.Document{}, err
	}
	sn := c.store.Snapshot()
	defer sn.Close()
	d, _, ok := sn.Get(id)
	if !ok {
		return contract.Document{}, fmt.Errorf("%w: document %q", ErrNotFound, id)
	}
	meta, err := catalog.DecodeMeta(d.Metadata)
	if err != nil {
		return contract.Document{}, fmt.Errorf("engine: document %q: %w", id, err)
	}
	return fromTier(d, meta)
}
