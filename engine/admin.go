package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/stratasearch/strata/engine/tier"
)

// Flush turns the collection's hot MemTable into an immutable warm segment
// and makes every acknowledged write durable in it (tier.Store.Flush):
// temp file → fsync → rename → fsync dir → one manifest edit. Writes wait
// for the flush; searches continue. Nothing to flush is not an error.
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
// 1..MaxListLimit. A page costs O(live documents · log) today: the store
// keeps no sorted id index. Errors: ErrClosed, the context's error, or a
// limit out of range.
func (c *Collection) List(ctx context.Context, after string, limit int) ([]string, error) {
	if err := c.check(ctx); err != nil {
		return nil, err
	}
	if limit < 1 || limit > MaxListLimit {
		return nil, fmt.Errorf("engine: list limit %d out of range 1..%d", limit, MaxListLimit)
	}
	sn := c.store.Snapshot()
	ids := sn.LiveIDs()
	sn.Close()
	sort.Strings(ids)
	ids = slices.Compact(ids)
	i := sort.SearchStrings(ids, after)
	if i < len(ids) && ids[i] == after {
		i++
	}
	ids = ids[i:]
	if len(ids) > limit {
		ids = ids[:limit]
	}
	return slices.Clone(ids), nil
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
