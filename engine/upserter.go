package engine

import (
	"context"
	"fmt"
	"slices"
	"unsafe"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/redact"
	"github.com/stratasearch/strata/engine/tier"
)

// Upserter builds one Upsert batch a document at a time, so that a writer
// decoding a large request need not hold every decoded document at once:
// Add validates a document and, while the batch is still acceptable,
// encodes it straight into the batch's WAL payload (tier.EncodedBatch),
// after which the caller may drop it. Commit then checks what Upsert
// checks with the whole batch in view (every validation problem, the
// namespaces, MaxBatchBytes, IfMatch and the ids under As) and applies
// the batch as one WAL record and one epoch, all or nothing, exactly as
// Upsert(ctx, docs, opts...) of the same documents would, with the same
// errors. A collection that embeds (a recorded embedding model) keeps the
// added documents and hands them to Upsert, since they are embedded in
// one call. An Upserter is used once and is not safe for concurrent use.
type Upserter struct {
	c     *Collection
	opts  []WriteOption
	wo    writeOpts
	v     *contract.BatchValidator
	extra []contract.FieldError // the collection's own checks (docChecks)
	nsErr *NamespaceError
	size  int64 // batchBytes of the documents so far
	conv  error // the first conversion error (toTier)
	e     *tier.EncodedBatch
	keep  []contract.Document // when the collection embeds
	embed bool
	ops   []tier.Op // the batch as applied, after Commit
}

// NewUpserter returns an empty Upserter with Upsert's options.
func (c *Collection) NewUpserter(opts ...WriteOption) *Upserter {
	u := &Upserter{c: c, opts: opts, v: contract.NewBatchValidator(c.o.Dim, c.validateOpts()), size: 1 + uvarintMax}
	for _, o := range opts {
		o(&u.wo)
	}
	u.embed = c.o.Embedding != nil || c.Embedder() != nil
	if !u.embed {
		u.e = tier.NewEncodedBatch()
	}
	return u
}

// Len returns the number of documents added.
func (u *Upserter) Len() int { return u.v.Len() }

// Grow makes room for n more documents in what Add keeps of each (the
// ids), when the caller knows about how many will come.
func (u *Upserter) Grow(n int) { u.v.Grow(n) }

// Index returns the index of the first document added with id.
func (u *Upserter) Index(id string) (int, bool) { return u.v.Index(id) }

// DocumentErrors returns the problems contract.ValidateDocuments finds in
// the documents added so far (without the collection's own checks, which
// Commit adds).
func (u *Upserter) DocumentErrors() []contract.FieldError { return u.v.Errors() }

// failed reports whether Commit will refuse the batch whatever follows.
func (u *Upserter) failed() bool {
	return len(u.v.Errors()) > 0 || len(u.extra) > 0 || u.nsErr != nil || u.conv != nil || u.size > MaxBatchBytes
}

// Add adds d as documents[Len()]. The Upserter keeps nothing of d but its
// id (in a collection that embeds, d with a copy of its vector), so d may
// be dropped, and d.Vector's array reused, when Add returns
// (contract.EachDocumentReusing); d is not modified.
func (u *Upserter) Add(d *contract.Document) {
	i := u.v.Len()
	u.v.Add(d)
	u.extra = u.c.docChecks(u.extra, i, d)
	if u.embed {
		k := *d
		k.Vector = slices.Clone(d.Vector)
		u.keep = append(u.keep, k)
		return
	}
	if p := u.wo.principal; p != nil && u.nsErr == nil && !p.AllowsNamespace(d.Namespace) {
		u.nsErr = &NamespaceError{Index: i, Namespace: d.Namespace, Allowed: p.Namespaces}
	}
	// Redaction at ingest, before anything derives from the text.
	rd := &redact.Documents(u.c.o.Redact, unsafe.Slice(d, 1), VersionHash)[0]
	u.size += docBytes(rd, 0)
	if u.failed() {
		u.e = nil // refused at Commit: nothing more is encoded
		return
	}
	td, err := toTier(rd, u.wo.verifiable && rd.SourceURI != "")
	if err != nil {
		u.conv, u.e = fmt.Errorf("engine: document %d: %w", i, err), nil
		return
	}
	u.e.Upsert(&td)
}

// Commit applies the batch, as Upsert does, and returns its epoch. opts
// are applied before it checks anything; those Add reads (As,
// VerifiableSources) must be given to NewUpserter instead.
func (u *Upserter) Commit(ctx context.Context, opts ...WriteOption) (uint64, error) {
	c := u.c
	if err := c.check(ctx); err != nil {
		return 0, err
	}
	for _, o := range opts {
		o(&u.wo)
	}
	if u.embed {
		epoch, ops, err := c.upsertDocs(ctx, u.keep, u.wo)
		u.keep, u.ops = nil, ops
		return epoch, err
	}
	if fes := u.v.Errors(); len(fes) > 0 || len(u.extra) > 0 {
		return 0, &contract.ValidationError{Errors: append(slices.Clip(fes), u.extra...)}
	}
	if u.nsErr != nil {
		return 0, u.nsErr
	}
	if u.size > MaxBatchBytes {
		return 0, tooLarge(u.v.Len(), u.size)
	}
	if u.conv != nil {
		return 0, u.conv
	}
	if u.v.Len() == 0 {
		return 0, fmt.Errorf("engine: empty batch")
	}
	p := u.wo.principal
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.closed.Load() {
		return 0, ErrClosed
	}
	if len(u.wo.ifMatch) > 0 || p != nil {
		sn := c.store.Snapshot()
		defer sn.Close()
		if err := checkIfMatchIndexed(sn, p, u.v.Index, u.wo.ifMatch); err != nil {
			return 0, err
		}
		if p != nil {
			first := &IDUnavailableError{Index: -1}
			u.v.IDs(func(id string, i int) {
				if first.Index >= 0 && i > first.Index {
					return
				}
				if _, hidden := visibleVersion(sn, p, id); hidden {
					first.Index, first.ID = i, id
				}
			})
			if first.Index >= 0 {
				return 0, first
			}
		}
	}
	epoch, err := c.store.ApplyEncoded(u.e)
	if err == nil {
		u.ops = u.e.Applied()
	}
	u.e = nil
	return epoch, err
}

// VersionHashes calls f with the id and stored version hash of each
// document, in batch order, after Commit succeeded (none before). The
// hashes are the stored versions' own (not copies): read them only
// during the call.
func (u *Upserter) VersionHashes(f func(id string, hash *[32]byte)) {
	for i := range u.ops {
		f(u.ops[i].Doc.ID, &u.ops[i].Doc.VersionHash)
	}
}

// checkIfMatchIndexed is checkIfMatch with the batch's ids given by the
// index of each id's first document.
func checkIfMatchIndexed(sn *tier.Snapshot, p *contract.Principal, index func(string) (int, bool), expected map[string]string) error {
	if len(expected) == 0 {
		return nil
	}
	type at struct {
		i  int
		id string
	}
	var in []at
	var out []string
	for id := range expected {
		if i, ok := index(id); ok {
			in = append(in, at{i, id})
		} else {
			out = append(out, id)
		}
	}
	slices.SortFunc(in, func(a, b at) int { return a.i - b.i })
	slices.Sort(out)
	for _, e := range in {
		if got, _ := visibleVersion(sn, p, e.id); got != expected[e.id] {
			return &ConflictError{Index: e.i, ID: e.id, Expected: expected[e.id], Current: got}
		}
	}
	for _, id := range out {
		if got, _ := visibleVersion(sn, p, id); got != expected[id] {
			return &ConflictError{Index: -1, ID: id, Expected: expected[id], Current: got}
		}
	}
	return nil
}
