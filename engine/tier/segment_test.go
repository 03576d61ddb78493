package tier

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/vfs"
	"github.com/stratasearch/strata/vfs/errorfs"
)

var bg = context.Background()

// refSearch is the obviously-correct reference: brute force over the
// model's documents with vectors that pass filter.
func refSearch(m model, metric Metric, q []float32, k int, filter func(*Document) bool) []string {
	type c struct {
		id string
		d  float64
	}
	var cs []c
	for id, d := range m {
		if d.Vector == nil || (filter != nil && !filter(&d)) {
			continue
		}
		cs = append(cs, c{id, refDist(metric, q, d.Vector)})
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].d < cs[j].d || cs[i].d == cs[j].d && cs[i].id < cs[j].id })
	var ids []string
	for i := 0; i < len(cs) && i < k; i++ {
		ids = append(ids, cs[i].id)
	}
	return ids
}

func hitIDs(h []Hit) []string {
	var ids []string
	for _, x := range h {
		ids = append(ids, x.Doc.ID)
	}
	return ids
}

// checkSearch compares a snapshot's search (sorted ids; the universe is
// small so every segment search takes HNSW's exact allow-list path) with
// the reference, with and without a filter.
func checkSearch(sn *Snapshot, m model, metric Metric, rng *rand.Rand) string {
	q := make([]float32, testDim)
	for i := range q {
		q[i] = float32(rng.NormFloat64())
	}
	even := func(d *Document) bool { return d.ID[len(d.ID)-1]%2 == 0 }
	for _, f := range []func(*Document) bool{nil, even} {
		k := 1 + rng.IntN(8)
		hits, err := sn.SearchVector(q, k, f)
		if err != nil {
			return err.Error()
		}
		got, want := hitIDs(hits), refSearch(m, metric, q, k, f)
		// Equal distances may order differently: compare as sets
		// unless lengths differ.
		sort.Strings(got)
		sort.Strings(want)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Sprintf("search k=%d filter=%v: got %v, want %v", k, f != nil, got, want)
		}
	}
	return ""
}

// TestFlushCompactCrossTierModel applies a seeded workload with flushes
// and compactions interleaved, checking Get/LiveIDs/search against the
// model at every epoch, a snapshot pinned across flushes and compactions,
// and the state after reopen.
func TestFlushCompactCrossTierModel(t *testing.T) {
	for _, metric := range []Metric{L2, IP, Cosine} {
		t.Run(metric.String(), func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			o := testOptions(fs)
			o.Metric = metric
			o.ManifestCheckpointEdits = 3
			o.CompactMaxSegments = 4
			s := mustOpen(t, o)
			const seed = 77
			rng := rand.New(rand.NewPCG(seed, 1))
			m := model{}
			var pinned *Snapshot
			var pinnedModel model
			n := uint64(300)
			if testing.Short() {
				n = 120
			}
			for i := uint64(1); i <= n; i++ {
				b := genBatch(seed, i)
				if _, err := s.Apply(b); err != nil {
					t.Fatal(err)
				}
				m.apply(b)
				if i%9 == 0 {
					if err := s.Flush(bg); err != nil {
						t.Fatal(err)
					}
				}
				if i%25 == 0 {
					if err := s.Compact(bg); err != nil {
						t.Fatal(err)
					}
				}
				if i == 40 {
					pinned = s.Snapshot()
					pinnedModel = modelAt(seed, 40)
				}
				sn := s.Snapshot()
				if d := checkAgainst(sn, m); d != "" {
					t.Fatalf("epoch %d: %s", i, d)
				}
				if d := checkSearch(sn, m, metric, rng); d != "" {
					t.Fatalf("epoch %d: %s", i, d)
				}
				sn.Close()
				if pinned != nil && i%10 == 0 {
					if d := checkAgainst(pinned, pinnedModel); d != "" {
						t.Fatalf("pinned snapshot at epoch 40, now %d: %s", i, d)
					}
				}
			}
			pinned.Close()
			if s.flushes.Load() == 0 || s.compactions.Load() == 0 || len(s.WarmSegments()) == 0 {
				t.Fatalf("flushes %d compactions %d segments %d", s.flushes.Load(), s.compactions.Load(), len(s.WarmSegments()))
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = mustOpen(t, o)
			defer s.Close()
			sn := s.Snapshot()
			defer sn.Close()
			if d := checkAgainst(sn, m); d != "" {
				t.Fatalf("after reopen: %s", d)
			}
			if d := checkSearch(sn, m, metric, rng); d != "" {
				t.Fatalf("after reopen: %s", d)
			}
			// Only manifest-listed segment files remain.
			names, _ := fs.List("/db")
			var files []string
			for _, nm := range names {
				if isSegFile(nm) {
					files = append(files, nm)
				}
			}
			if len(files) != len(s.WarmSegments()) {
				t.Fatalf("segment files %v, manifest lists %d", files, len(s.WarmSegments()))
			}
		})
	}
}

// TestCrashWithFlushAndCompaction: the randomised crash test with flushes
// and compactions interleaved, so crashes land inside segment writes,
// manifest edits, WAL recycling and file deletion. 200 seeded iterations,
// 40 under -short, 20 under -race -short.
func TestCrashWithFlushAndCompaction(t *testing.T) {
	iters := 200
	if testing.Short() {
		iters = 40
		if raceEnabled {
			iters = 20
		}
	}
	maint := func(s *Store, i uint64) error {
		if i%4 == 0 {
			if err := s.Flush(bg); err != nil {
				return err
			}
		}
		if i%11 == 0 {
			return s.Compact(bg)
		}
		return nil
	}
	st, err := runCrashTestMaint(iters, func(o *Options) {
		o.CompactMaxSegments = 2
		o.SegmentEfConstruction = 16
	}, maint, 6)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d iterations, unsynced data dropped in %d rounds", st.iters, st.dropped)
	if st.dropped < st.iters/4 {
		t.Fatalf("unsynced data dropped in only %d of %d rounds: the test may pass vacuously", st.dropped, 2*st.iters)
	}
}

// TestFlushFaultInjection fails the segment file's create, write, sync,
// rename or directory sync: Flush reports the error, nothing acknowledged
// is lost, the store keeps working, and a reopen is clean.
func TestFlushFaultInjection(t *testing.T) {
	kinds := []errorfs.OpKind{errorfs.OpCreate, errorfs.OpWrite, errorfs.OpSync, errorfs.OpRename, errorfs.OpSyncDir}
	for _, compact := range []bool{false, true} {
		for _, kind := range kinds {
			name := "flush/" + kind.String()
			if compact {
				name = "compact/" + kind.String()
			}
			t.Run(name, func(t *testing.T) { testMaintFault(t, kind, compact) })
		}
	}
}

// testMaintFault: see TestFlushFaultInjection; with compact the fault
// hits Compact's segment write instead of Flush's.
func testMaintFault(t *testing.T, kind errorfs.OpKind, compact bool) {
	{
		{
			mem := vfs.NewCrashableMem()
			var armed sync.Mutex
			on := false
			inj := errorfs.InjectorFunc{Name: "seg-" + kind.String(), Fn: func(op errorfs.Op) error {
				armed.Lock()
				defer armed.Unlock()
				if !on || op.Kind != kind {
					return nil
				}
				if kind == errorfs.OpSyncDir || strings.Contains(op.Path, "seg-") {
					on = false
					return errorfs.ErrInjected
				}
				return nil
			}}
			o := testOptions(errorfs.Wrap(mem, inj))
			o.CompactMaxSegments = 1
			s := mustOpen(t, o)
			const seed = 9
			m := model{}
			for i := uint64(1); i <= 30; i++ {
				b := genBatch(seed, i)
				if _, err := s.Apply(b); err != nil {
					t.Fatal(err)
				}
				m.apply(b)
				if i == 10 {
					if err := s.Flush(bg); err != nil {
						t.Fatal(err)
					}
				}
			}
			if compact {
				if err := s.Flush(bg); err != nil {
					t.Fatal(err)
				}
			}
			armed.Lock()
			on = true
			armed.Unlock()
			var err error
			if compact {
				err = s.Compact(bg)
			} else {
				err = s.Flush(bg)
			}
			if !errors.Is(err, errorfs.ErrInjected) {
				t.Fatalf("error %v, want the injected error", err)
			}
			sn := s.Snapshot()
			if d := checkAgainst(sn, m); d != "" {
				t.Fatalf("after failed flush: %s", d)
			}
			sn.Close()
			b := genBatch(seed, 31)
			if _, err := s.Apply(b); err != nil {
				t.Fatalf("store not writable after a failed flush: %v", err)
			}
			m.apply(b)
			if err := s.Flush(bg); err != nil {
				t.Fatalf("retry flush: %v", err)
			}
			if err := s.Compact(bg); err != nil {
				t.Fatalf("retry compact: %v", err)
			}
			if compact && len(s.WarmSegments()) != 1 {
				t.Fatalf("%d segments after retried compaction, want 1", len(s.WarmSegments()))
			}
			s.Close()
			o.FS = mem.CrashClone()
			s = mustOpen(t, o)
			defer s.Close()
			sn = s.Snapshot()
			defer sn.Close()
			if d := checkAgainst(sn, m); d != "" {
				t.Fatalf("after reopen: %s", d)
			}
		}
	}
}

// TestCompactionUnderQueries: queries run while Compact rewrites the
// segments; every result equals the one computed before compaction, and
// afterwards the dead rows are gone from disk and the old files deleted.
func TestCompactionUnderQueries(t *testing.T) {
	fs := vfs.NewCrashableMem()
	o := testOptions(fs)
	o.CompactMaxSegments = 1 // merge everything
	s := mustOpen(t, o)
	defer s.Close()
	const seed = 5
	for i := uint64(1); i <= 120; i++ {
		if _, err := s.Apply(genBatch(seed, i)); err != nil {
			t.Fatal(err)
		}
		if i%20 == 0 {
			if err := s.Flush(bg); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := s.WarmSegments()
	rng := rand.New(rand.NewPCG(1, 2))
	const nq = 40
	qs := make([][]float32, nq)
	want := make([]string, nq)
	sn := s.Snapshot()
	for i := range qs {
		qs[i] = make([]float32, testDim)
		for j := range qs[i] {
			qs[i][j] = float32(rng.NormFloat64())
		}
		h, err := sn.SearchVector(qs[i], 5, nil)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = fmt.Sprint(hitIDs(h))
	}
	sn.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	queries := 0
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				sn := s.Snapshot()
				h, err := sn.SearchVector(qs[i%nq], 5, nil)
				sn.Close()
				mu.Lock()
				queries++
				if err != nil || fmt.Sprint(hitIDs(h)) != want[i%nq] {
					bad = append(bad, fmt.Sprintf("q%d: %v %v want %v", i%nq, err, hitIDs(h), want[i%nq]))
				}
				mu.Unlock()
			}
		}()
	}
	if err := s.Compact(bg); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	if len(bad) > 0 {
		t.Fatalf("%d of %d queries during compaction differed, first: %s", len(bad), queries, bad[0])
	}
	after := s.WarmSegments()
	if len(after) != 1 || len(before) < 2 {
		t.Fatalf("segments before %d after %d, want several → 1", len(before), len(after))
	}
	sn = s.Snapshot()
	live := len(sn.LiveIDs()) - len(s.cur.mem.liveRows(sn.Epoch()))
	for i := range qs {
		h, _ := sn.SearchVector(qs[i], 5, nil)
		if fmt.Sprint(hitIDs(h)) != want[i] {
			t.Fatalf("after compaction q%d: %v want %v", i, hitIDs(h), want[i])
		}
	}
	sn.Close()
	if int(after[0].Rows) != live {
		t.Fatalf("compacted segment has %d rows, %d live: dead rows kept", after[0].Rows, live)
	}
	for _, b := range before {
		if _, err := fs.Stat(filepath.Join("/db", b.File)); err == nil {
			t.Fatalf("old segment %s not deleted", b.File)
		}
	}
	t.Logf("%d queries during compaction; %d segments → 1 with %d rows", queries, len(before), after[0].Rows)
}

// TestSegmentCorruption flips bytes of a segment file: reopen fails with
// an error matching ErrCorrupt that names the file and an offset.
func TestSegmentCorruption(t *testing.T) {
	fs := vfs.NewCrashableMem()
	o := testOptions(fs)
	s := mustOpen(t, o)
	for i := uint64(1); i <= 30; i++ {
		if _, err := s.Apply(genBatch(3, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(bg); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join("/db", s.WarmSegments()[0].File)
	s.Close()
	orig := fileData(t, fs, file)
	for _, off := range []int{0, 9, 20, 70, len(orig) / 2, len(orig) - 40, len(orig) - 20, len(orig) - 1} {
		bad := append([]byte(nil), orig...)
		bad[off] ^= 0x40
		rewriteFile(t, fs, file, bad)
		_, err := Open(o)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "offset") {
			t.Fatalf("flip at %d: error %v, want ErrCorrupt naming %s and an offset", off, err, file)
		}
	}
	rewriteFile(t, fs, file, orig[:len(orig)-10])
	if _, err := Open(o); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated: %v", err)
	}
	rewriteFile(t, fs, file, orig)
	s = mustOpen(t, o)
	s.Close()
}

// FuzzOpenSegment: arbitrary bytes never panic the segment reader; they
// either open or fail with ErrCorrupt.
func FuzzOpenSegment(f *testing.F) {
	var rows []segRow
	for i := 0; i < 5; i++ {
		b := genBatch(1, uint64(i+1))
		for _, op := range b.Ops {
			if op.Kind == OpUpsert {
				d := op.Doc
				rows = append(rows, segRow{doc: &d, birth: uint64(i + 1)})
			}
		}
	}
	good, err := buildSegment(rows, segBuildOptions{dim: testDim, metric: L2, m: 4, efConstruction: 8, threads: 1})
	if err != nil {
		f.Fatal(err)
	}
	noVec, _ := buildSegment([]segRow{{doc: &Document{ID: "x", Content: "y"}, birth: 1}}, segBuildOptions{dim: testDim, metric: L2, m: 4, efConstruction: 8, threads: 1})
	withLex, err := buildSegment(rows, segBuildOptions{dim: testDim, metric: L2, m: 4, efConstruction: 8, threads: 1, lexical: &fakeLexSegs{}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(noVec)
	f.Add(withLex)
	f.Add(good[:len(good)/2])
	f.Add([]byte(segMagic))
	ivf := ivfSegBytes(f, 40) // segivf_test.go
	f.Add(ivf)
	f.Add(ivf[:len(ivf)-100])
	f.Add(ivfSegBytes(f, 12))
	f.Fuzz(func(t *testing.T, data []byte) {
		sg, err := openSegment(data, "fuzz.sst", testDim, L2)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("non-corruption error %v", err)
			}
			return
		}
		q := make([]float32, testDim)
		sg.search(context.Background(), q, 3, 8, 1<<62, nil)
		sg.free()
	})
}

// TestFlushManifestFault fails the manifest fsync of a flush's edit: the
// flush reports ErrReadOnly, later writes fail, and a reopen recovers
// every acknowledged batch from the WAL (the orphaned segment file is
// removed).
func TestFlushManifestFault(t *testing.T) {
	mem := vfs.NewCrashableMem()
	var on sync.Mutex
	armed := false
	inj := errorfs.InjectorFunc{Name: "manifest-sync", Fn: func(op errorfs.Op) error {
		on.Lock()
		defer on.Unlock()
		if armed && op.Kind == errorfs.OpSync && strings.Contains(op.Path, "MANIFEST") {
			return errorfs.ErrInjected
		}
		return nil
	}}
	o := testOptions(errorfs.Wrap(mem, inj))
	s := mustOpen(t, o)
	m := model{}
	for i := uint64(1); i <= 25; i++ {
		b := genBatch(4, i)
		if _, err := s.Apply(b); err != nil {
			t.Fatal(err)
		}
		m.apply(b)
		if i == 12 {
			if err := s.Flush(bg); err != nil {
				t.Fatal(err)
			}
		}
	}
	on.Lock()
	armed = true
	on.Unlock()
	if err := s.Flush(bg); !errors.Is(err, ErrReadOnly) || !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("flush error %v, want ErrReadOnly wrapping the injected error", err)
	}
	if _, err := s.Apply(genBatch(4, 26)); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("write after manifest failure: %v, want ErrReadOnly", err)
	}
	if s.Err() == nil {
		t.Fatal("Err() nil after manifest failure")
	}
	s.Close()
	o.FS = mem.CrashClone()
	s = mustOpen(t, o)
	defer s.Close()
	sn := s.Snapshot()
	defer sn.Close()
	if d := checkAgainst(sn, m); d != "" {
		t.Fatalf("after reopen: %s", d)
	}
	names, _ := o.FS.List("/db")
	n := 0
	for _, nm := range names {
		if isSegFile(nm) {
			n++
		}
	}
	if n != len(s.WarmSegments()) {
		t.Fatalf("%d segment files, manifest lists %d", n, len(s.WarmSegments()))
	}
}

// TestWarmSearchRecall: with enough rows that the HNSW graph (not the
// exact allow-list path) answers, recall@10 of the cross-tier search
// against brute force stays high, with and without deletions (which force
// an Allow bitmap) and with a filter.
func TestWarmSearchRecall(t *testing.T) {
	n := 6000
	if testing.Short() {
		n = 2500
	}
	const d = 24
	o := testOptions(vfs.NewCrashableMem())
	o.Dim = d
	o.Sync = wal.SyncNone
	o.BuildThreads = 2
	s := mustOpen(t, o)
	defer s.Close()
	rng := rand.New(rand.NewPCG(3, 3))
	m := model{}
	b := &Batch{}
	for i := 0; i < n; i++ {
		v := make([]float32, d)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		b.Upsert(Document{ID: fmt.Sprintf("r%05d", i), Vector: v, UpdatedUnixNano: 1})
		if b.Len() == 500 || i == n-1 {
			if _, err := s.Apply(b); err != nil {
				t.Fatal(err)
			}
			m.apply(b)
			b = &Batch{}
		}
	}
	if err := s.Flush(bg); err != nil {
		t.Fatal(err)
	}
	recall := func(filter func(*Document) bool) float64 {
		sn := s.Snapshot()
		defer sn.Close()
		hit, total := 0, 0
		for qi := 0; qi < 50; qi++ {
			q := make([]float32, d)
			for j := range q {
				q[j] = float32(rng.NormFloat64())
			}
			h, err := sn.SearchVector(q, 10, filter)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{}
			for _, id := range refSearch(m, L2, q, 10, filter) {
				want[id] = true
			}
			for _, x := range h {
				if want[x.Doc.ID] {
					hit++
				}
			}
			total += len(want)
		}
		return float64(hit) / float64(total)
	}
	r0 := recall(nil)
	// Delete a third (tombstones in the segment) and re-check.
	del := &Batch{}
	for i := 0; i < n; i += 3 {
		del.Delete(fmt.Sprintf("r%05d", i))
	}
	if _, err := s.Apply(del); err != nil {
		t.Fatal(err)
	}
	m.apply(del)
	r1 := recall(nil)
	r2 := recall(func(d *Document) bool { return d.ID[len(d.ID)-1]%2 == 0 })
	t.Logf("recall@10: all live %.3f, after deleting 1/3 %.3f, with a 50%% filter %.3f", r0, r1, r2)
	if r0 < 0.9 || r1 < 0.9 || r2 < 0.9 {
		t.Fatalf("recall@10 %.3f / %.3f / %.3f below 0.9", r0, r1, r2)
	}
}

// TestSearchVectorWhere: metadata conditions on indexed keys (roaring
// bitmaps in warm segments) and non-indexed keys (per-document checks)
// give the reference's results across MemTable and segments, through
// deletes, flushes and compactions, and for a pinned older snapshot.
func TestSearchVectorWhere(t *testing.T) {
	o := testOptions(vfs.NewCrashableMem())
	o.IndexedMetadata = []string{"color"}
	o.CompactMaxSegments = 2
	s := mustOpen(t, o)
	defer s.Close()
	rng := rand.New(rand.NewPCG(8, 8))
	colors := []string{"red", "green", "blue"}
	shapes := []string{"square", "circle"}
	m := model{}
	var old *Snapshot
	var oldModel model
	for i := 1; i <= 60; i++ {
		b := &Batch{}
		for j := 0; j < 5; j++ {
			id := fmt.Sprintf("w%03d", rng.IntN(120))
			if rng.IntN(6) == 0 {
				b.Delete(id)
				continue
			}
			v := make([]float32, testDim)
			for k := range v {
				v[k] = float32(rng.NormFloat64())
			}
			b.Upsert(Document{ID: id, Vector: v, UpdatedUnixNano: 1,
				Metadata: map[string]string{"color": colors[rng.IntN(3)], "shape": shapes[rng.IntN(2)]}})
		}
		if _, err := s.Apply(b); err != nil {
			t.Fatal(err)
		}
		m.apply(b)
		if i%8 == 0 {
			if err := s.Flush(bg); err != nil {
				t.Fatal(err)
			}
		}
		if i%20 == 0 {
			if err := s.Compact(bg); err != nil {
				t.Fatal(err)
			}
		}
		if i == 30 {
			old = s.Snapshot()
			oldModel = model{}
			for k, v := range m {
				oldModel[k] = v
			}
		}
		check := func(sn *Snapshot, m model) {
			q := make([]float32, testDim)
			for k := range q {
				q[k] = float32(rng.NormFloat64())
			}
			for _, where := range []map[string]string{
				{"color": colors[i%3]},
				{"color": colors[i%3], "shape": shapes[i%2]},
				{"shape": shapes[i%2]},
				{"color": "purple"},
			} {
				h, err := sn.SearchVectorWhere(q, 6, where, nil)
				if err != nil {
					t.Fatal(err)
				}
				f := func(d *Document) bool {
					for k, v := range where {
						if d.Metadata[k] != v {
							return false
						}
					}
					return true
				}
				got, want := hitIDs(h), refSearch(m, L2, q, 6, f)
				sort.Strings(got)
				sort.Strings(want)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("batch %d epoch %d where %v: got %v want %v", i, sn.Epoch(), where, got, want)
				}
			}
		}
		sn := s.Snapshot()
		check(sn, m)
		sn.Close()
		if old != nil {
			check(old, oldModel)
		}
	}
	old.Close()
	if len(s.WarmSegments()) == 0 || s.compactions.Load() == 0 {
		t.Fatal("no warm segments / compactions")
	}
}

// fixCRCs rewrites the section and footer CRCs of a (mutated) segment so
// the fuzzer reaches the structural checks behind them.
func fixCRCs(data []byte) []byte {
	b := append([]byte(nil), data...)
	n := len(b)
	if n < segHeaderSize+segFooterSize {
		return b
	}
	foot := b[n-segFooterSize:]
	tableOff := binary.LittleEndian.Uint64(foot)
	nsec := uint64(binary.LittleEndian.Uint32(foot[8:]))
	if tableOff <= uint64(n-segFooterSize) && nsec < 64 && tableOff+nsec*segTableEntry <= uint64(n-segFooterSize) {
		for i := uint64(0); i < nsec; i++ {
			e := b[tableOff+i*segTableEntry:]
			off, ln := binary.LittleEndian.Uint64(e[8:]), binary.LittleEndian.Uint64(e[16:])
			if off <= tableOff && ln <= tableOff-off {
				binary.LittleEndian.PutUint32(e[24:], crc32.Checksum(b[off:off+ln], crcTable))
			}
		}
		if textVersion(binary.LittleEndian.Uint32(b[8:])) {
			binary.LittleEndian.PutUint32(foot[12:], crc32.Checksum(b[tableOff:tableOff+nsec*segTableEntry], crcTable))
		}
	}
	binary.LittleEndian.PutUint32(foot[16:], crc32.Checksum(b[:n-16], crcTable))
	return b
}

// FuzzOpenSegmentStructure: like FuzzOpenSegment, with CRCs repaired
// after mutation, so hostile section tables, meta, doc store and HNSW
// bytes reach the parsers: never a panic, only ErrCorrupt.
func FuzzOpenSegmentStructure(f *testing.F) {
	var rows []segRow
	for i := 0; i < 4; i++ {
		for _, op := range genBatch(2, uint64(i+1)).Ops {
			if op.Kind == OpUpsert {
				d := op.Doc
				rows = append(rows, segRow{doc: &d, birth: uint64(i + 1)})
			}
		}
	}
	good, err := buildSegment(rows, segBuildOptions{dim: testDim, metric: L2, m: 4, efConstruction: 8, threads: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	for _, at := range []int{20, 100, 300, len(good) / 2, len(good) - 40} {
		bad := append([]byte(nil), good...)
		bad[at] ^= 0x5a
		f.Add(bad)
	}
	// IVF-PQ and flat segments (segivf_test.go), intact and damaged in
	// the ivfpq section.
	ivf := ivfSegBytes(f, 40)
	f.Add(ivf)
	f.Add(ivfSegBytes(f, 12))
	if off, ln := segSection(f, ivf, secIVFPQ); ln > 64 {
		for _, at := range []int{8, 20, 40, ln / 2, ln - 20} {
			bad := append([]byte(nil), ivf...)
			bad[off+at] ^= 0x5a
			f.Add(bad)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sg, err := openSegment(fixCRCs(data), "fuzz.sst", testDim, L2, "batch")
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("non-corruption error %v", err)
			}
			return
		}
		q := make([]float32, testDim)
		sg.search(context.Background(), q, 3, 8, 1<<62, nil)
		sg.searchPre(context.Background(), q, 3, 8, 0, nil, func(*Document) bool { return true })
		sg.free()
	})
}

// TestSegmentRandomMutations: deterministic companion of the fuzz
// targets — thousands of seeded 1–3-byte mutations of a valid segment,
// with CRCs repaired so they reach the parsers: every one opens (and
// searches) or fails with ErrCorrupt, never panics.
func TestSegmentRandomMutations(t *testing.T) {
	iters := 20000
	if testing.Short() {
		iters = 3000
	}
	var rows []segRow
	for i := 0; i < 4; i++ {
		for _, op := range genBatch(2, uint64(i+1)).Ops {
			if op.Kind == OpUpsert {
				d := op.Doc
				rows = append(rows, segRow{doc: &d, birth: uint64(i + 1)})
			}
		}
	}
	good, err := buildSegment(rows, segBuildOptions{dim: testDim, metric: L2, m: 4, efConstruction: 8, threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	opened := 0
	for it := 0; it < iters; it++ {
		data := append([]byte(nil), good...)
		for j := 0; j < 1+rng.IntN(3); j++ {
			data[rng.IntN(len(data))] ^= byte(1 + rng.IntN(255))
		}
		sg, err := openSegment(fixCRCs(data), "mut.sst", testDim, L2, "batch")
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("iteration %d: non-corruption error %v", it, err)
			}
			continue
		}
		opened++
		q := make([]float32, testDim)
		sg.search(context.Background(), q, 3, 8, 1<<62, nil)
		sg.free()
	}
	t.Logf("%d mutations, %d still opened (e.g. changed content bytes)", iters, opened)
}
