package engine

import (
	"github.com/stratasearch/strata/engine/tier"
)

// LinkStoreState hard-links the collection store's segment and archive
// files into dir and returns the manifest state they make up
// (tier.Store.LinkState): the consistent, immutable snapshot of what is
// flushed that engine/remote uploads and publishes.
func (c *Collection) LinkStoreState(dir string) (tier.ManifestState, error) {
	if c.closed.Load() {
		return tier.ManifestState{}, ErrClosed
	}
	return c.store.LinkState(dir)
}

// Dir returns the DB's directory.
func (db *DB) Dir() string { return db.dir }
