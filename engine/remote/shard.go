package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/vfs/objstore"
)

// ShardMap is the root manifest of a sharded collection set (DESIGN.md
// "Scale-out"): shard i holds the documents whose ShardOf(id, n) is i and
// is an ordinary published database under Prefixes[i]; Epochs is the
// global epoch vector, the manifest version of each shard the root was
// written for.
type ShardMap struct {
	FormatVersion int      `json:"format_version"`
	Version       uint64   `json:"version"`
	Hash          string   `json:"hash"` // "fnv1a64-mod"
	Prefixes      []string `json:"prefixes"`
	Epochs        []uint64 `json:"epochs"`
}

// ShardOf is the shard of document id among n: FNV-1a 64 of the id
// modulo n.
func ShardOf(id string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(id))
	return int(h.Sum64() % uint64(n))
}

// PublishShardMap writes m as root/<version>.json with If-None-Match: *
// (objstore.ErrConflict when that version exists).
func PublishShardMap(ctx context.Context, st *objstore.Store, m ShardMap) error {
	m.FormatVersion, m.Hash = FormatVersion, "fnv1a64-mod"
	if len(m.Epochs) != len(m.Prefixes) || len(m.Prefixes) == 0 {
		return fmt.Errorf("remote: shard map with %d prefixes and %d epochs", len(m.Prefixes), len(m.Epochs))
	}
	b, _ := json.Marshal(&m)
	_, err := st.PutIfAbsent(ctx, fmt.Sprintf("root/%020d.json", m.Version), b)
	return err
}

// MergeTopK merges per-shard hit lists (each sorted best first) into the
// best k: by score, higher first, ties by document id, as one
// collection orders them. Shards are disjoint by id, so no hit repeats.
func MergeTopK(lists [][]contract.Envelope, k int) []contract.Envelope {
	var all []contract.Envelope
	for _, l := range lists {
		all = append(all, l...)
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].Score != all[j].Score {
			return all[i].Score > all[j].Score
		}
		return all[i].DocID < all[j].DocID
	})
	if len(all) > k {
		all = all[:k]
	}
	return all
}
