package tier

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/stratasearch/strata/vfs"
)

// encodedOf builds b as an EncodedBatch stamped with stamp.
func encodedOf(b *Batch, stamp int64) *EncodedBatch {
	e := NewEncodedBatch()
	e.stamp = stamp
	for i := range b.Ops {
		if b.Ops[i].Kind == OpDelete {
			e.Delete(b.Ops[i].Doc.ID)
		} else {
			e.Upsert(&b.Ops[i].Doc)
		}
	}
	return e
}

// mixedBatch is a batch of n upserts whose sizes vary from a few bytes to
// tens of KiB (content, vectors, metadata), so that an EncodedBatch spans
// several chunks, with some deletes and timestamps left to the stamp.
func mixedBatch(seed uint64, n int) *Batch {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := &Batch{}
	for i := range n {
		id := fmt.Sprintf("doc-%03d", rng.IntN(n))
		if rng.IntN(8) == 0 {
			b.Delete(id)
			continue
		}
		d := Document{ID: id, Content: strings.Repeat("word ", rng.IntN(1<<uint(rng.IntN(14)))+1), Trust: TrustAuthoritative}
		if rng.IntN(2) == 0 {
			d.Vector = make([]float32, testDim)
			for k := range d.Vector {
				d.Vector[k] = float32(rng.NormFloat64())
			}
		}
		if nm := rng.IntN(4); nm > 0 {
			d.Metadata = map[string]string{}
			for k := range nm {
				d.Metadata[fmt.Sprint("k", k)] = fmt.Sprint(rng.IntN(1000))
			}
		}
		if rng.IntN(3) == 0 {
			d.UpdatedUnixNano = int64(i + 1)
		}
		d.VersionHash[0] = byte(i)
		b.Upsert(d)
	}
	return b
}

// TestEncodedBatchMatchesEncodeBatch: an EncodedBatch's pieces,
// concatenated, are byte for byte encodeBatch of the same ops and stamp,
// and decodeBatchPieces gives what decodeBatchSlab gives from the whole
// payload.
func TestEncodedBatchMatchesEncodeBatch(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		n := 1 + int(seed*37)%400
		b := mixedBatch(seed, n)
		const stamp = 123456789
		e := encodedOf(b, stamp)
		want := encodeBatch(b, stamp)
		pieces := e.pieces()
		if got := bytes.Join(pieces, nil); !bytes.Equal(got, want) {
			t.Fatalf("seed %d: pieces (%d) differ from encodeBatch: %d vs %d bytes", seed, len(pieces), len(got), len(want))
		}
		if e.Len() != len(b.Ops) || e.Bytes()+len(pieces[0]) != len(want) {
			t.Fatalf("seed %d: Len %d Bytes %d, want %d ops %d bytes", seed, e.Len(), e.Bytes(), len(b.Ops), len(want)-len(pieces[0]))
		}
		ref, err := decodeBatchSlab(want, e.floats)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeBatchPieces(pieces, e.floats, false)
		if err != nil {
			t.Fatalf("seed %d (%d pieces): %v", seed, len(pieces), err)
		}
		if fmt.Sprint(got.Ops) != fmt.Sprint(ref.Ops) || (got.slab == nil) != (ref.slab == nil) {
			t.Fatalf("seed %d: decoded pieces differ from the decoded payload", seed)
		}
		// A payload cut anywhere (an op split between pieces, or bytes
		// missing) is refused, never decoded short.
		whole := bytes.Join(pieces, nil)
		for _, cut := range []int{1, len(pieces[0]), len(whole) / 2, len(whole) - 1} {
			if cut <= 0 || cut >= len(whole) {
				continue
			}
			if _, err := decodeBatchPieces([][]byte{whole[:cut]}, 0, false); err == nil {
				t.Fatalf("seed %d: payload cut at %d decoded", seed, cut)
			}
		}
	}
}

// TestApplyEncodedReplay: batches applied with ApplyEncoded (several
// chunks, one WAL record each) are what the model says, before and after
// reopening (replay), and equal to the same batches applied with Apply.
func TestApplyEncodedReplay(t *testing.T) {
	fsA, fsB := vfs.NewCrashableMem(), vfs.NewCrashableMem()
	a, b := mustOpen(t, testOptions(fsA)), mustOpen(t, testOptions(fsB))
	m := model{}
	for i := uint64(1); i <= 6; i++ {
		bt := mixedBatch(i, 300)
		if _, err := a.ApplyEncoded(encodedOf(bt, int64(i))); err != nil {
			t.Fatal(err)
		}
		for j := range bt.Ops {
			if bt.Ops[j].Doc.UpdatedUnixNano == 0 {
				bt.Ops[j].Doc.UpdatedUnixNano = int64(i)
			}
		}
		if _, err := b.Apply(bt); err != nil {
			t.Fatal(err)
		}
		m.apply(bt)
	}
	same := func(when string, a, b *Store) {
		sa, sb := a.Snapshot(), b.Snapshot()
		defer sa.Close()
		defer sb.Close()
		if sa.Epoch() != sb.Epoch() || len(sa.LiveIDs()) != len(m) {
			t.Fatalf("%s: epochs %d %d, live %d, model %d", when, sa.Epoch(), sb.Epoch(), len(sa.LiveIDs()), len(m))
		}
		for id, want := range m {
			da, _, okA := sa.Get(id)
			db, _, okB := sb.Get(id)
			if !okA || !okB || da.Content != want.Content || !sameVec(da.Vector, want.Vector) ||
				fmt.Sprint(da.Metadata) != fmt.Sprint(want.Metadata) || da.VersionHash != want.VersionHash ||
				da.UpdatedUnixNano != want.UpdatedUnixNano || fmt.Sprint(da) != fmt.Sprint(db) {
				t.Fatalf("%s: %s differs", when, id)
			}
		}
	}
	same("applied", a, b)
	for _, s := range []*Store{a, b} {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	a, b = mustOpen(t, testOptions(fsA)), mustOpen(t, testOptions(fsB))
	defer a.Close()
	defer b.Close()
	same("reopened", a, b)
	if _, err := a.ApplyEncoded(NewEncodedBatch()); err == nil {
		t.Fatal("an empty encoded batch was applied")
	}
}

// TestApplyEncodedSharesPayload: the versions ApplyEncoded stores read
// their strings from the batch's payload chunks instead of copies only for
// a large, well-filled batch without vectors (sharePayload); with vectors,
// or for a small batch, they are copies. Either way they equal what was
// upserted.
func TestApplyEncodedSharesPayload(t *testing.T) {
	s := mustOpen(t, testOptions(vfs.NewCrashableMem()))
	defer s.Close()
	for _, tc := range []struct {
		name           string
		n              int
		vectors, share bool
	}{{"large", 200, false, true}, {"vectors", 200, true, false}, {"small", 2, false, false}} {
		bt := mixedBatch(1, tc.n)
		nvec := 0
		for i := range bt.Ops {
			if !tc.vectors {
				bt.Ops[i].Doc.Vector = nil
			}
			if bt.Ops[i].Doc.Vector != nil {
				nvec++
			}
			if tc.name == "small" {
				bt.Ops[i].Doc.Content = "a short document"
			}
		}
		if tc.vectors && nvec == 0 {
			t.Fatal("the batch has no vectors")
		}
		e := encodedOf(bt, 1)
		if tc.name == "large" && e.Bytes() < sharePayloadMinBytes {
			t.Fatalf("the large batch is %d bytes", e.Bytes())
		}
		if _, err := s.ApplyEncoded(e); err != nil {
			t.Fatal(err)
		}
		inChunks := func(str string) bool {
			p := uintptr(unsafe.Pointer(unsafe.StringData(str)))
			for _, c := range e.chunks {
				lo := uintptr(unsafe.Pointer(unsafe.SliceData(c)))
				if p >= lo && p+uintptr(len(str)) <= lo+uintptr(len(c)) {
					return true
				}
			}
			return false
		}
		ops := e.Applied()
		if len(ops) != len(bt.Ops) {
			t.Fatalf("%s: %d ops applied, %d upserted", tc.name, len(ops), len(bt.Ops))
		}
		for i, op := range ops {
			if op.Doc.ID != bt.Ops[i].Doc.ID || op.Doc.Content != bt.Ops[i].Doc.Content {
				t.Fatalf("%s op %d: applied %q differs from upserted %q", tc.name, i, op.Doc.ID, bt.Ops[i].Doc.ID)
			}
			if shared := inChunks(op.Doc.ID); shared != tc.share {
				t.Fatalf("%s op %d (%s): id shares the payload: %v", tc.name, i, op.Doc.ID, shared)
			}
			if op.Doc.Content != "" && inChunks(op.Doc.Content) != tc.share {
				t.Fatalf("%s op %d (%s): content shares the payload: %v", tc.name, i, op.Doc.ID, !tc.share)
			}
		}
	}
}

// TestApplyEncodedSmallBatchesMemory: many one-document batches keep
// about what their documents need, not their payload chunks (a shared
// 4 KiB chunk per 100-byte document was 7x the heap).
func TestApplyEncodedSmallBatchesMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation sizes")
	}
	o := testOptions(vfs.NewCrashableMem())
	o.MemTableSizeBytes = 0 // no automatic flush
	s := mustOpen(t, o)
	defer s.Close()
	const n = 5000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		e := NewEncodedBatch()
		e.Upsert(&Document{ID: fmt.Sprintf("doc-%06d", i), Content: strings.Repeat("x", 100), Trust: TrustAuthoritative})
		if _, err := s.ApplyEncoded(e); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
	t.Logf("%.0f heap bytes per one-document batch", per)
	if per > 2000 {
		t.Fatalf("%.0f heap bytes kept per 110-byte document, want under 2000", per)
	}
}
