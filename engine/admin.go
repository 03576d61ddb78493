package engine

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/stratasearch/strata/engine/catalog"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier"
)

// Flush turns the collection's hot MemTable into an immutable warm segment
// and makes every acknowledged write durable in it (tier.Store.Flush):
// temp file → fsync → rename → fsync dir → one manifest edit. Writes wait
// for the flush; searches continue. Nothing to flush is not an error.
// It then builds the vector indexes that background flushes deferred
// (their segments are searched exactly until then; tier package doc,
// "Deferred vector indexes") on every core: when it returns, every warm
// segment that existed when it started has the collection's
// SegmentIndex (an "ivfpq" segment of fewer than IVFMinRows vectors is
// scanned exactly by design; a background flush during the call may add
// a flat segment, built once writes pause).
// Errors: ErrClosed, the context's error, or the store's I/O error (after
// which the store may be read-only; see DB.Err).
func (c *Collection) Flush(ctx context.Context) error {
	if err := c.check(ctx); err != nil {
		return err
	}
	if err := c.store.Flush(ctx); err != nil {
		return fmt.Errorf("engine: collection %q: flush: %w", c.name, err)
	}
	return nil
}

// Compact rewrites warm segments whose dead fraction ρ_dead exceeds the
// tier's threshold (θ_compact = 0.2), or all of them when too many small
// segments accumulate, without their dead rows, then likewise rewrites
// the cold archives past the threshold (tier.Store.Compact, which runs
// tier.Store.CompactArchives).
// Queries and writes continue meanwhile. Errors as Flush.
func (c *Collection) Compact(ctx context.Context) error {
	if err := c.check(ctx); err != nil {
		return err
	}
	if err := c.store.Compact(ctx); err != nil {
		return fmt.Errorf("engine: collection %q: compact: %w", c.name, err)
	}
	return nil
}

// CollectionStats is a point-in-time summary of a collection, for
// monitoring (/metrics) and listing.
type CollectionStats struct {
	Name string `json:"name"`
	// Epoch is the newest visible epoch.
	Epoch uint64 `json:"epoch"`
	// LiveDocs is the number of documents visible at Epoch, across tiers.
	LiveDocs int `json:"live_docs"`
	// WarmSegments and WarmRows count the warm segments and their rows
	// (live and dead); WarmBytes is their total file size in bytes.
	WarmSegments int    `json:"warm_segments"`
	WarmRows     uint64 `json:"warm_rows"`
	WarmBytes    uint64 `json:"warm_bytes"`
	// DurableEpoch: every epoch ≤ it is durable in warm segments; later
	// ones are in the WAL.
	DurableEpoch uint64 `json:"durable_epoch"`
	// Flushes and Compactions count the store's flushes and compactions
	// since it was opened.
	Flushes     int64 `json:"flushes"`
	Compactions int64 `json:"compactions"`
	// Backpressure counts writes the store slowed down or blocked
	// because flushes or compaction fell behind (tier.Options
	// SlowdownSegments / StopSegments).
	Backpressure tier.BackpressureStats `json:"backpressure"`
	// Err is the sticky I/O failure that made the store read-only, or "".
	Err string `json:"error,omitempty"`
}

// Stats returns the collection's statistics. It costs O(live documents)
// (LiveDocs is counted at a pinned snapshot).
func (c *Collection) Stats() CollectionStats {
	st := CollectionStats{Name: c.name}
	sn := c.store.Snapshot()
	st.Epoch = sn.Epoch()
	st.LiveDocs = len(sn.LiveIDs())
	sn.Close()
	ms := c.store.Manifest().State()
	st.DurableEpoch = ms.DurableEpoch
	st.WarmSegments = len(ms.Segments)
	for _, sg := range ms.Segments {
		st.WarmRows += sg.Rows
		st.WarmBytes += sg.SizeBytes
	}
	st.Flushes = c.store.Flushes()
	st.Compactions = c.store.Compactions()
	st.Backpressure = c.store.Backpressure()
	if err := c.store.Err(); err != nil {
		st.Err = err.Error()
	}
	return st
}

// MaxListLimit caps List's page size.
const MaxListLimit = 10000

// List returns up to limit ids of live documents greater than after, in
// ascending byte order, read at one pinned epoch: pass the last id of a
// page as after to get the next one (keyset pagination; an id written
// between pages appears if it sorts after the cursor). limit must be in
// 1..MaxListLimit. It is ListDocuments for the trusted caller, ids only.
// Errors: ErrClosed, the context's error, or a limit out of range.
func (c *Collection) List(ctx context.Context, after string, limit int) ([]string, error) {
	docs, err := c.ListDocuments(ctx, nil, after, limit)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	return ids, nil
}

// ListedDocument is one document of a listing page: what identifies its
// version (GET the document for content, vector and metadata).
type ListedDocument struct {
	ID          string
	Namespace   string
	SourceURI   string
	VersionHash string // 64 lowercase hex digits
	Timestamp   time.Time
	Trust       contract.Trust
}

// ListDocuments returns up to limit live documents that principal p may
// read (contract.Principal.CanRead; nil p: every document), with ids
// greater than after, in ascending byte order of id, read at one pinned
// epoch (keyset pagination as in List). limit must be in
// 1..MaxListLimit.
//
// Scope and ACL are a pre-filter: every warm segment, cold archive and
// MemTable keeps an ordered id listing per namespace and ACL entry
// (catalog.Listing), and a page merges, from the cursor on, only the
// classes p may read; each nominated id is then checked against its
// version visible at the epoch. A page costs O(c · log n + (limit + d) ·
// log c) for c readable classes over the row sets, n ids and d ids
// nominated but not returned (a version the epoch no longer shows or p
// may not read: ids overwritten or deleted since the row set was written,
// bounded by compaction), whatever the collection holds for other
// principals. Errors: ErrClosed, the context's error, or a limit out of
// range.
func (c *Collection) ListDocuments(ctx context.Context, p *contract.Principal, after string, limit int) ([]ListedDocument, error) {
	if err := c.check(ctx); err != nil {
		return nil, err
	}
	if limit < 1 || limit > MaxListLimit {
		return nil, fmt.Errorf("engine: list limit %d out of range 1..%d", limit, MaxListLimit)
	}
	sn := c.store.Snapshot()
	defer sn.Close()
	out, _, err := c.listPage(ctx, sn, p, after, limit)
	return out, err
}

// listPage is ListDocuments at sn; examined counts the listing entries
// the merge read.
func (c *Collection) listPage(ctx context.Context, sn *tier.Snapshot, p *contract.Principal, after string, limit int) ([]ListedDocument, int, error) {
	lists := c.lists.Get(sn.WarmSegments(), sn.ColdArchives())
	for i, lx := range sn.HotLexical() {
		h, ok := lx.(*hotIndex)
		if !ok {
			return nil, 0, fmt.Errorf("engine: MemTable %d has no id listing", i)
		}
		lists = append(lists, h.list)
	}
	var cursors []*catalog.Cursor
	for _, l := range lists {
		cursors = append(cursors, l.Classes(p, after)...)
	}
	out := []ListedDocument{}
	var err error
	n := 0
	examined := catalog.Merge(cursors, func(id string) bool {
		if n++; n%256 == 0 {
			if err = ctx.Err(); err != nil {
				return false
			}
		}
		d, _, ok := sn.Get(id)
		if !ok || (p != nil && !p.CanRead(d.Namespace, d.ACL)) {
			return true
		}
		var hash [32]byte
		if hash, err = d.Hash(); err != nil {
			err = fmt.Errorf("engine: document %q: %w", d.ID, err)
			return false
		}
		out = append(out, ListedDocument{ID: d.ID, Namespace: d.Namespace, SourceURI: d.SourceURI,
			VersionHash: hex.EncodeToString(hash[:]), Timestamp: time.Unix(0, d.UpdatedUnixNano).UTC(),
			Trust: trustFromTier(d.Trust)})
		return len(out) < limit
	})
	if err != nil {
		return nil, examined, err
	}
	return out, examined, nil
}

// Err returns the first collection store's sticky I/O failure (the store
// turned read-only after an fsync or manifest error; see engine/tier), or
// nil when every collection is writable. For health checks.
func (db *DB) Err() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return ErrClosed
	}
	var errs []error
	for _, name := range sortedKeys(db.cols) {
		if err := db.cols[name].store.Err(); err != nil {
			errs = append(errs, fmt.Errorf("engine: collection %q: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// Prewarm builds what the first search of the collection's current warm
// segments would otherwise build: the lexical catalog (each warm row's
// decoded metadata, its field indexes, the segments' BM25 sections
// opened). A server calls it after opening the store so that its first
// queries do not wait for that (on a store of the Go source tree, about
// half a second). Later flushes and compactions add only their own
// segments' rows. Errors: ErrClosed, the context's error, a corrupt BM25
// section or metadata (as a search would report them).
func (c *Collection) Prewarm(ctx context.Context) error {
	if err := c.check(ctx); err != nil {
		return err
	}
	sn := c.store.Snapshot()
	defer sn.Close()
	_, err := c.warm.Get(sn)
	return err
}

// Prewarm runs Collection.Prewarm on every open collection, in name
// order, and returns the errors joined (each naming its collection). It
// stops at the context's end.
func (db *DB) Prewarm(ctx context.Context) error {
	var errs []error
	for _, name := range db.Collections() {
		if err := ctx.Err(); err != nil {
			return errors.Join(append(errs, err)...)
		}
		c, err := db.Collection(name)
		if err != nil {
			continue // dropped meanwhile
		}
		if err := c.Prewarm(ctx); err != nil {
			errs = append(errs, fmt.Errorf("engine: collection %q: prewarm: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
