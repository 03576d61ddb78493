package server

import (
	"hash/maphash"
	"sync"
)

// idStripes serialises the server's tenancy-checked writes per document id:
// an upsert or delete under API keys reads each id's stored document (who
// may write it), then writes; holding the ids' stripes across both closes
// the check-then-act race between two such requests (a delete could
// otherwise remove a document that a concurrent upsert just replaced with
// one the deleter may not read). Upserts additionally pin versions with
// engine.IfMatch, which also covers writers outside the server. Deletes
// have no engine-level pin (engine.Collection.Delete takes no
// precondition): a writer outside the server (an index job, an embedding
// program) is not serialised with them.
type idStripes struct {
	seed maphash.Seed
	mu   [256]sync.Mutex
}

func newIDStripes() *idStripes { return &idStripes{seed: maphash.MakeSeed()} }

// lock takes the stripes of ids of collection coll, in ascending order (no
// deadlock between batches), and returns the function that releases them.
// With on false it takes nothing.
func (l *idStripes) lock(coll string, ids []string, on bool) func() {
	if !on || len(ids) == 0 {
		return func() {}
	}
	var set [256]bool
	for _, id := range ids {
		var h maphash.Hash
		h.SetSeed(l.seed)
		h.WriteString(coll)
		h.WriteByte(0)
		h.WriteString(id)
		set[h.Sum64()%uint64(len(l.mu))] = true
	}
	var held []int // ascending
	for i, ok := range set {
		if ok {
			held = append(held, i)
		}
	}
	for _, i := range held {
		l.mu[i].Lock()
	}
	return func() {
		for j := len(held) - 1; j >= 0; j-- {
			l.mu[held[j]].Unlock()
		}
	}
}
