package tier

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/vfs"
)

func mustOpen(t *testing.T, o Options) *Store {
	t.Helper()
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStoreBasicAndRecovery(t *testing.T) {
	m := vfs.NewCrashableMem()
	o := testOptions(m)
	s := mustOpen(t, o)
	const seed = 3
	for i := uint64(1); i <= 50; i++ {
		e, err := s.Apply(genBatch(seed, i))
		if err != nil {
			t.Fatal(err)
		}
		if e != i {
			t.Fatalf("epoch %d, want %d", e, i)
		}
		// Read-your-writes.
		sn := s.Snapshot()
		if d := checkAgainst(sn, modelAt(seed, i)); d != "" {
			t.Fatalf("after batch %d: %s", i, d)
		}
		sn.Close()
	}
	// An old snapshot keeps seeing its epoch.
	old := s.Snapshot()
	for i := uint64(51); i <= 60; i++ {
		if _, err := s.Apply(genBatch(seed, i)); err != nil {
			t.Fatal(err)
		}
	}
	if d := checkAgainst(old, modelAt(seed, 50)); d != "" {
		t.Fatalf("pinned snapshot drifted: %s", d)
	}
	if s.OldestPinnedEpoch() != 50 {
		t.Fatalf("oldest pin %d", s.OldestPinnedEpoch())
	}
	old.Close()
	if s.OldestPinnedEpoch() != 60 {
		t.Fatalf("oldest pin after close %d", s.OldestPinnedEpoch())
	}
	if _, err := Open(o); err == nil {
		t.Fatal("second Open of a locked store succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopen on the crash image: everything was acked with fsync.
	s2 := mustOpen(t, testOptions(m.CrashClone()))
	if s2.Epoch() != 60 {
		t.Fatalf("recovered epoch %d", s2.Epoch())
	}
	sn := s2.Snapshot()
	if d := checkAgainst(sn, modelAt(seed, 60)); d != "" {
		t.Fatal(d)
	}
	// History is replayed too: version epochs are the original ones.
	if _, e, ok := sn.Get("doc-00"); ok && e > 60 {
		t.Fatalf("epoch %d", e)
	}
	s2.Close()
}

func TestApplyValidation(t *testing.T) {
	s := mustOpen(t, testOptions(vfs.NewCrashableMem()))
	defer s.Close()
	if _, err := s.Apply(&Batch{}); err == nil {
		t.Fatal("empty batch accepted")
	}
	b := &Batch{}
	b.Upsert(Document{ID: "", Vector: make([]float32, 3)})
	_, err := s.Apply(b)
	if err == nil || !strings.Contains(err.Error(), "empty id") || !strings.Contains(err.Error(), "dimensions") {
		t.Fatalf("validation error %v should list both problems", err)
	}
	if s.Epoch() != 0 {
		t.Fatal("rejected batch consumed an epoch")
	}
	o := Options{Dim: 0, Metric: 9, SyncInterval: -1}
	o.WALSegmentSizeBytes = 1
	err = o.Validate()
	for _, w := range []string{"Dir", "Dim", "Metric", "SyncInterval", "WALSegmentSizeBytes"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Validate misses %s: %v", w, err)
		}
	}
}

func TestUpsertTombstonesOldVersion(t *testing.T) {
	s := mustOpen(t, testOptions(vfs.NewCrashableMem()))
	defer s.Close()
	vec := func(x float32) []float32 { v := make([]float32, testDim); v[0] = x; return v }
	put := func(id, content string, x float32) uint64 {
		b := &Batch{}
		b.Upsert(Document{ID: id, Content: content, Vector: vec(x)})
		e, err := s.Apply(b)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e1 := put("a", "v1", 0)
	s1 := s.Snapshot()
	put("a", "v2", 100) // moves far away
	s2 := s.Snapshot()
	b := &Batch{}
	b.Delete("a")
	s.Apply(b)
	s3 := s.Snapshot()
	if d, e, ok := s1.Get("a"); !ok || d.Content != "v1" || e != e1 {
		t.Fatal("s1")
	}
	if d, _, ok := s2.Get("a"); !ok || d.Content != "v2" {
		t.Fatal("s2")
	}
	if _, _, ok := s3.Get("a"); ok {
		t.Fatal("deleted doc visible")
	}
	// Search at s2 near the OLD vector must return v2 only (the old
	// version is dead at s2), never v1.
	hits, _ := s2.SearchVector(vec(0), 5, nil)
	if len(hits) != 1 || hits[0].Doc.Content != "v2" {
		t.Fatalf("hits %+v", hits)
	}
	hits, _ = s3.SearchVector(vec(0), 5, nil)
	if len(hits) != 0 {
		t.Fatalf("deleted doc returned: %+v", hits)
	}
	// Upsert + delete + upsert of the same id inside one batch: last wins.
	b = &Batch{}
	b.Upsert(Document{ID: "z", Content: "1"})
	b.Delete("z")
	b.Upsert(Document{ID: "z", Content: "3"})
	s.Apply(b)
	if d, _, ok := s.Snapshot().Get("z"); !ok || d.Content != "3" {
		t.Fatal("in-batch order")
	}
}

// TestSearchMatchesReference checks brute-force MemTable search against a
// float64 reference over the live set, for all metrics, with filters, while
// many ids have dead versions (stale rows must not take top-k slots).
func TestSearchMatchesReference(t *testing.T) {
	for _, metric := range []Metric{L2, IP, Cosine} {
		o := testOptions(vfs.NewCrashableMem())
		o.Metric = metric
		o.Sync = wal.SyncNone
		s := mustOpen(t, o)
		rng := rand.New(rand.NewPCG(9, uint64(metric)))
		ref := map[string][]float32{}
		for i := 0; i < 1500; i++ {
			b := &Batch{}
			id := fmt.Sprintf("id%d", rng.IntN(400))
			if rng.IntN(6) == 0 {
				b.Delete(id)
				delete(ref, id)
			} else {
				v := make([]float32, testDim)
				for k := range v {
					v[k] = float32(rng.NormFloat64())
				}
				b.Upsert(Document{ID: id, Content: id, Vector: v})
				ref[id] = v
			}
			if _, err := s.Apply(b); err != nil {
				t.Fatal(err)
			}
		}
		sn := s.Snapshot()
		for qi := 0; qi < 20; qi++ {
			q := make([]float32, testDim)
			for k := range q {
				q[k] = float32(rng.NormFloat64())
			}
			even := func(d *Document) bool { return len(d.ID)%2 == 0 }
			for _, filt := range []func(*Document) bool{nil, even} {
				type sc struct {
					id string
					d  float64
				}
				var all []sc
				for id, v := range ref {
					if filt != nil && !filt(&Document{ID: id}) {
						continue
					}
					all = append(all, sc{id, refDist(metric, q, v)})
				}
				sort.Slice(all, func(i, j int) bool { return all[i].d < all[j].d })
				k := 10
				hits, err := sn.SearchVector(q, k, filt)
				if err != nil {
					t.Fatal(err)
				}
				if len(hits) != min(k, len(all)) {
					t.Fatalf("%v: %d hits, want %d", metric, len(hits), min(k, len(all)))
				}
				for i, h := range hits {
					if math.Abs(float64(h.Distance)-all[i].d) > 1e-4*(1+math.Abs(all[i].d)) {
						t.Fatalf("%v: hit %d distance %v, reference %v (%s vs %s)", metric, i, h.Distance, all[i].d, h.Doc.ID, all[i].id)
					}
				}
			}
		}
		if _, err := sn.SearchVector(make([]float32, 3), 1, nil); err == nil {
			t.Fatal("wrong query dim accepted")
		}
		s.Close()
	}
}

func refDist(m Metric, q, v []float32) float64 {
	var dot, l2, nq, nv float64
	for i := range q {
		a, b := float64(q[i]), float64(v[i])
		dot += a * b
		l2 += (a - b) * (a - b)
		nq += a * a
		nv += b * b
	}
	switch m {
	case L2:
		return l2
	case IP:
		return -dot
	}
	return 1 - dot/math.Sqrt(nq*nv)
}

func TestBatchRoundTrip(t *testing.T) {
	for i := uint64(1); i < 50; i++ {
		b := genBatch(1, i)
		got, err := decodeBatch(encodeBatch(b, 77))
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Ops) != len(b.Ops) {
			t.Fatal("op count")
		}
		for j := range b.Ops {
			w, g := b.Ops[j].Doc, got.Ops[j].Doc
			if g.ID != w.ID || got.Ops[j].Kind != b.Ops[j].Kind {
				t.Fatal("id/kind")
			}
			if b.Ops[j].Kind == OpUpsert && (g.Content != w.Content || !sameVec(g.Vector, w.Vector) || g.Metadata["batch"] != w.Metadata["batch"] || g.Trust != w.Trust || g.UpdatedUnixNano != w.UpdatedUnixNano) {
				t.Fatalf("doc mismatch %+v vs %+v", g, w)
			}
		}
	}
	// Timestamp 0 is stamped.
	b := &Batch{}
	b.Upsert(Document{ID: "x"})
	got, _ := decodeBatch(encodeBatch(b, 1234))
	if got.Ops[0].Doc.UpdatedUnixNano != 1234 {
		t.Fatal("stamp")
	}
}

func FuzzDecodeBatch(f *testing.F) {
	for i := uint64(1); i < 5; i++ {
		f.Add(encodeBatch(genBatch(2, i), 5))
	}
	f.Add([]byte{1, 200, 200, 200, 200, 1})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, p []byte) {
		b, err := decodeBatch(p)
		if err != nil {
			if !errors.Is(err, errBatch) {
				t.Fatalf("unexpected error kind %v", err)
			}
			return
		}
		// A decoded batch re-encodes to something that decodes the same.
		b2, err := decodeBatch(encodeBatch(b, 5))
		if err != nil || len(b2.Ops) != len(b.Ops) {
			t.Fatalf("re-decode: %v", err)
		}
	})
}
