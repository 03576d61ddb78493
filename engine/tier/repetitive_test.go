package tier

import (
	"context"
	"fmt"
	"testing"

	"github.com/stratasearch/strata/vfs"
)

// A doc store of near-identical rows compresses far beyond 64× (zstd's
// long matches): the segment must still flush, reopen and serve. Opening
// such a segment once failed its size-plausibility check.
func TestFlushHighlyCompressibleDocStore(t *testing.T) {
	o := testOptions(vfs.NewCrashableMem())
	s := mustOpen(t, o)
	const n = 20000
	for i := 0; i < n; i += 1000 {
		b := &Batch{}
		for j := i; j < i+1000; j++ {
			b.Upsert(Document{ID: fmt.Sprintf("d%06d", j), Content: "alice text", Namespace: "t/", Trust: TrustDerived})
		}
		if _, err := s.Apply(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, o)
	defer s.Close()
	sn := s.Snapshot()
	defer sn.Close()
	for _, id := range []string{"d000000", "d012345", fmt.Sprintf("d%06d", n-1)} {
		d, _, ok := sn.Get(id)
		if !ok || d.Content != "alice text" {
			t.Fatalf("Get(%s) = %v, %v after reopen", id, d, ok)
		}
	}
}
