package catalog

import (
	"fmt"
	"sync"

	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/engine/tier"
)

// Cold is the engine's view of one cold archive: its BM25 segment (built
// in memory from the archived contents on the first cold query and cached
// while the archive lives) and per-row infos. Read-only once returned.
type Cold struct {
	Seg   *bm25.Segment
	Rows  []Row
	ByDoc map[*tier.Document]uint32 // row
}

// ColdCache keeps the catalogs of one collection's cold archives. Safe for
// concurrent use.
type ColdCache struct {
	an *text.Analyzer

	mu   sync.Mutex
	cats map[uint64]*Cold // by archive id
}

// NewColdCache returns an empty cache for a collection with analyzer an.
func NewColdCache(an *text.Analyzer) *ColdCache {
	return &ColdCache{an: an, cats: map[uint64]*Cold{}}
}

// Get returns the catalogs of a snapshot's archives (same order as arch,
// tier.Snapshot.ColdArchives), building missing ones; catalogs of
// archives no longer in arch are dropped from the cache.
func (cc *ColdCache) Get(arch []tier.ColdArchive) ([]*Cold, error) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	out := make([]*Cold, len(arch))
	live := map[uint64]bool{}
	for i, a := range arch {
		live[a.ID] = true
		cat := cc.cats[a.ID]
		if cat == nil || (len(a.Docs) > 0 && len(cat.Rows) > 0 && cat.Rows[0].Doc != a.Docs[0]) {
			b, err := Segments{cc.an}.BuildLexical(a.Docs)
			if err != nil {
				return nil, fmt.Errorf("engine: cold archive %s: %w", a.Path, err)
			}
			seg, err := bm25.OpenWith(b, a.Path, bm25.OpenOptions{ExtIDs: ExtIDs(a.Docs)})
			if err != nil {
				return nil, fmt.Errorf("engine: cold archive %s: lexical index: %w", a.Path, err)
			}
			cat = &Cold{Seg: seg, ByDoc: make(map[*tier.Document]uint32, len(a.Docs))}
			for r, d := range a.Docs {
				meta, err := DecodeMeta(d.Metadata)
				if err != nil {
					return nil, fmt.Errorf("engine: cold archive %s row %d (id %q): %w", a.Path, r, d.ID, err)
				}
				cat.Rows = append(cat.Rows, Row{Doc: d, Meta: meta})
				cat.ByDoc[d] = uint32(r)
			}
			cc.cats[a.ID] = cat
		}
		out[i] = cat
	}
	for id := range cc.cats {
		if !live[id] {
			delete(cc.cats, id)
		}
	}
	return out, nil
}
