package tier

import (
	"reflect"
	"sync"
	"testing"

	"github.com/stratasearch/strata/vfs"
)

// batchRecLex is a LexicalBatchIndexer recording what it receives, and
// how many AddBatch calls.
type batchRecLex struct {
	recLex
	mu      sync.Mutex
	batches int
}

func (r *batchRecLex) AddBatch(vers []uint32, docs []*Document) {
	r.mu.Lock()
	r.batches++
	r.mu.Unlock()
	for i, d := range docs {
		r.recLex.Add(vers[i], d)
	}
}

// TestLexicalBatchIndexer: a batch-capable lexical index receives, in
// one AddBatch per applied batch with upserts, exactly the versions and
// documents a plain one receives through Add, in the same order, for a
// workload of upserts, re-upserts and deletes (fixed seed); WAL replay
// after reopening takes the same path.
func TestLexicalBatchIndexer(t *testing.T) {
	run := func(batch bool) (vers []uint32, ids []string, calls, upsertBatches int) {
		fs := vfs.NewCrashableMem()
		o := testOptions(fs)
		var plains []*recLex
		var bats []*batchRecLex
		o.NewLexical = func() LexicalIndexer {
			if batch {
				bats = append(bats, &batchRecLex{})
				return bats[len(bats)-1]
			}
			plains = append(plains, &recLex{})
			return plains[len(plains)-1]
		}
		s := mustOpen(t, o)
		for i := uint64(1); i <= 60; i++ {
			b := genBatch(42, i)
			for _, op := range b.Ops {
				if op.Kind == OpUpsert {
					upsertBatches++
					break
				}
			}
			if _, err := s.Apply(b); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = mustOpen(t, o) // replay into a fresh indexer
		defer s.Close()
		for _, r := range plains {
			vers, ids = append(vers, r.vers...), append(ids, r.ids...)
		}
		for _, r := range bats {
			vers, ids, calls = append(vers, r.vers...), append(ids, r.ids...), calls+r.batches
		}
		return vers, ids, calls, upsertBatches
	}
	pv, pids, _, _ := run(false)
	bv, bids, calls, want := run(true)
	if len(pv) == 0 || !reflect.DeepEqual(pv, bv) || !reflect.DeepEqual(pids, bids) {
		t.Fatalf("AddBatch got versions %v ids %v, Add got %v %v", bv, bids, pv, pids)
	}
	if calls != 2*want { // applied, then replayed
		t.Fatalf("%d AddBatch calls for %d batches with upserts (applied and replayed)", calls, want)
	}
}
