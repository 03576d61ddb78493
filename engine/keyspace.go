package engine

import (
	"sync"

	"github.com/stratasearch/strata/engine/catalog"
)

// keySpaceCache keeps the last query key space (plan.infos) a
// collection built: the warm catalog's rows followed by each hot
// MemTable's version infos. A search at an unchanged segment set and
// MemTable length reuses it instead of copying every warm row again.
// Hot infos only grow by appends (hotIndex.Add), so a prefix of a given
// backing array and length never changes; the key is the catalog, and per
// MemTable the address of its first info and its length. Safe for
// concurrent use; the slice it returns is shared and read-only.
type keySpaceCache struct {
	mu    sync.Mutex
	warm  *catalog.Warm
	hot   []hotKey
	infos []verInfo
}

type hotKey struct {
	first *verInfo
	n     int
}

func hotKeyOf(in []verInfo) hotKey {
	if len(in) == 0 {
		return hotKey{}
	}
	return hotKey{&in[0], len(in)}
}

// get returns wc.Rows followed by each of hot, in order (capacity =
// length, so an append copies).
func (kc *keySpaceCache) get(wc *catalog.Warm, hot [][]verInfo) []verInfo {
	rows := wc.Rows[:len(wc.Rows):len(wc.Rows)]
	n, nonEmpty := len(rows), 0
	if n > 0 {
		nonEmpty++
	}
	for _, h := range hot {
		n += len(h)
		if len(h) > 0 {
			nonEmpty++
		}
	}
	if nonEmpty <= 1 {
		// One non-empty part (or none): it is the key space, no copy.
		if len(rows) > 0 {
			return rows
		}
		for _, h := range hot {
			if len(h) > 0 {
				return h[:len(h):len(h)]
			}
		}
		return rows
	}
	kc.mu.Lock()
	defer kc.mu.Unlock()
	if kc.warm == wc && len(kc.hot) == len(hot) {
		same := true
		for i, h := range hot {
			if kc.hot[i] != hotKeyOf(h) {
				same = false
				break
			}
		}
		if same {
			return kc.infos
		}
	}
	infos := make([]verInfo, 0, n)
	infos = append(infos, rows...)
	keys := make([]hotKey, len(hot))
	for i, h := range hot {
		infos = append(infos, h...)
		keys[i] = hotKeyOf(h)
	}
	kc.warm, kc.hot, kc.infos = wc, keys, infos
	return infos
}
