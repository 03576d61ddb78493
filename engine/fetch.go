package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine/catalog"
	"github.com/stratasearch/strata/engine/contract"
)

// Fetch returns the envelopes of the documents ids (in that order, each
// once) at the collection's newest epoch, as a search would return them
// as hits with score 0: only documents that q's scope (namespace and
// source_uri prefixes) admits and q.Principal may read — an id outside
// them is absent from the result, exactly like an unknown id, so no
// caller can probe for documents it cannot read — and verified against
// their sources when q.Verify or q.Freshness asks (a stale one goes to
// Dropped). The rest of q is not read. Graph expansion (ingest/codegraph)
// returns the chunks it chose through Fetch. Errors: ErrClosed, the
// context's, a document's undecodable metadata.
func (c *Collection) Fetch(ctx context.Context, q contract.Query, ids []string) (contract.Result, error) {
	if err := c.check(ctx); err != nil {
		return contract.Result{}, err
	}
	sn := c.store.Snapshot()
	defer sn.Close()
	seen := make(map[string]bool, len(ids))
	hits := make([]contract.Envelope, 0, len(ids))
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		d, _, ok := sn.Get(id)
		if !ok || !strings.HasPrefix(d.Namespace, q.Scope.Namespace) || !strings.HasPrefix(d.SourceURI, q.Scope.URIPrefix) ||
			(q.Principal != nil && !q.Principal.CanRead(d.Namespace, d.ACL)) {
			continue
		}
		meta, err := catalog.DecodeMeta(d.Metadata)
		if err != nil {
			return contract.Result{}, fmt.Errorf("engine: document %q: %w", id, err)
		}
		text, err := d.Text()
		if err != nil {
			return contract.Result{}, fmt.Errorf("engine: document %q: %w", id, err)
		}
		hash, err := d.Hash()
		if err != nil {
			return contract.Result{}, fmt.Errorf("engine: document %q: %w", id, err)
		}
		hits = append(hits, contract.Envelope{
			DocID:       d.ID,
			Content:     text,
			SourceURI:   d.SourceURI,
			VersionHash: hexHash(hash),
			Timestamp:   time.Unix(0, d.UpdatedUnixNano).UTC(),
			Trust:       trustFromTier(d.Trust),
			Namespace:   d.Namespace,
			Metadata:    meta,
		})
	}
	hits, dropped := c.verifyHits(&q, hits)
	return contract.Result{Hits: hits, Dropped: dropped, Epoch: sn.Epoch()}, nil
}
