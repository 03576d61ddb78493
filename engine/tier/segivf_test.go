package tier

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/stratasearch/strata/internal/testenv"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/datasets"
	"github.com/stratasearch/strata/engine/ivfpq"
	"github.com/stratasearch/strata/engine/tier/wal"
	basepkg "github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/internal/inspect"
	"github.com/stratasearch/strata/vfs"
)

// loadVaswaniUSE returns the Vaswani USE-512 document and query vectors,
// skipping the test when the dataset directory is absent (failing under
// CI=true).
func loadVaswaniUSE(t testing.TB) (base, queries datasets.Matrix[float32]) {
	t.Helper()
	testenv.SkipIfEmulated(t, "reads a real dataset")
	dir, err := datasets.Dir()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	base, err = datasets.ReadFvecs(filepath.Join(dir, "vaswani", "use512-docs.fvecs"))
	if err != nil {
		t.Fatal(err)
	}
	queries, err = datasets.ReadFvecs(filepath.Join(dir, "vaswani", "use512-queries.fvecs"))
	if err != nil {
		t.Fatal(err)
	}
	return base, queries
}

func vecID(i int) string { return fmt.Sprintf("v%05d", i) }

// ivfTestData is the Vaswani USE-512 data, or under -short (which CI also
// runs with -race, -tags noasm and under qemu, where training on 11k×512
// takes minutes) a seeded synthetic stand-in: 3000 vectors of d = 32
// around 60 Gaussian cluster centres (unit-variance centres, noise σ 0.35),
// 30 queries drawn the same way — two segments above IVFMinRows.
func ivfTestData(t testing.TB) (base, queries datasets.Matrix[float32]) {
	t.Helper()
	if !testing.Short() {
		return loadVaswaniUSE(t)
	}
	const n, nq, d, nc = 3000, 30, 32, 60
	rng := rand.New(rand.NewPCG(11, 12))
	centres := make([]float32, nc*d)
	for i := range centres {
		centres[i] = float32(rng.NormFloat64())
	}
	gen := func(rows int) datasets.Matrix[float32] {
		m := datasets.Matrix[float32]{N: rows, D: d, Data: make([]float32, rows*d)}
		for i := 0; i < rows; i++ {
			c := rng.IntN(nc)
			for j := 0; j < d; j++ {
				m.Data[i*d+j] = centres[c*d+j] + float32(0.35*rng.NormFloat64())
			}
		}
		return m
	}
	return gen(n), gen(nq)
}

// loadVaswaniStore writes the Vaswani vectors into a store (batches of
// 500) flushing after each of nseg equal parts, and returns the model.
func loadVaswaniStore(t testing.TB, s *Store, base datasets.Matrix[float32], nseg int) (model, time.Duration) {
	t.Helper()
	m := model{}
	var flushTime time.Duration
	per := (base.N + nseg - 1) / nseg
	b := &Batch{}
	for i := 0; i < base.N; i++ {
		b.Upsert(Document{ID: vecID(i), Content: fmt.Sprintf("doc %d", i), Vector: base.Row(i),
			Metadata: map[string]string{"mod10": fmt.Sprint(i % 10)}, UpdatedUnixNano: 1})
		last := i == base.N-1 || (i+1)%per == 0
		if b.Len() == 500 || last {
			if _, err := s.Apply(b); err != nil {
				t.Fatal(err)
			}
			m.apply(b)
			b = &Batch{}
		}
		if last {
			t0 := time.Now()
			if err := s.Flush(bg); err != nil {
				t.Fatal(err)
			}
			flushTime += time.Since(t0)
		}
	}
	return m, flushTime
}

// exactRecall is recall@k of hits against the brute-force reference
// over the model (ties broken by id in the reference; distances are
// compared, so a tie swapped in counts as found).
func exactRecall(m model, metric Metric, q []float32, hits []Hit, k int, filter func(*Document) bool) (found, total int) {
	want := refSearch(m, metric, q, k, filter)
	if len(want) == 0 {
		return 0, 0
	}
	kth := refDist(metric, q, m[want[len(want)-1]].Vector)
	set := map[string]bool{}
	for _, id := range want {
		set[id] = true
	}
	for _, h := range hits {
		if set[h.Doc.ID] || refDist(metric, q, m[h.Doc.ID].Vector) <= kth+1e-6 {
			found++
		}
	}
	return min(found, len(want)), len(want)
}

// checkHits verifies every hit is the live version (Get at the same
// snapshot gives the same epoch), passes filter, and carries the exact
// distance.
func checkHits(sn *Snapshot, metric Metric, q []float32, hits []Hit, filter func(*Document) bool) string {
	seen := map[string]bool{}
	for _, h := range hits {
		if seen[h.Doc.ID] {
			return fmt.Sprintf("id %s twice", h.Doc.ID)
		}
		seen[h.Doc.ID] = true
		_, e, ok := sn.Get(h.Doc.ID)
		if !ok || e != h.Epoch {
			return fmt.Sprintf("hit %s epoch %d, live version epoch %d (present %v)", h.Doc.ID, h.Epoch, e, ok)
		}
		if filter != nil && !filter(h.Doc) {
			return fmt.Sprintf("hit %s fails the filter", h.Doc.ID)
		}
		if want := refDist(metric, q, h.Doc.Vector); math.Abs(float64(h.Distance)-want) > 1e-4 {
			return fmt.Sprintf("hit %s distance %v, exact %v", h.Doc.ID, h.Distance, want)
		}
	}
	return ""
}

func ivfOptions(dir string, dim int) Options {
	return Options{FS: vfs.Default, Dir: dir, Dim: dim, Metric: Cosine, Logger: quietLog, Sync: wal.SyncNone,
		BuildThreads: 2, SegmentIndex: SegmentIndexIVFPQ}
}

// TestIVFSegmentsVaswani: the ~11k Vaswani USE-512 vectors through a
// store with SegmentIndex "ivfpq" at the default IVF parameters (mmap'd
// segments under vfs.Default), flushed into two segments: recall@10 vs
// brute force ≥ 0.90 with exact (refined) distances; deletes hidden at
// once; an upsert never returns the old version; filters applied inside
// the scan keep the full top-k; reopening with default options (HNSW)
// still reads the IVF-PQ segments, and a new HNSW segment makes a mixed
// store that searches correctly. Under -short the data is ivfTestData's
// synthetic stand-in.
func TestIVFSegmentsVaswani(t *testing.T) {
	base, queries := ivfTestData(t)
	nq := queries.N
	dir := t.TempDir()
	o := ivfOptions(dir, base.D)
	s := mustOpen(t, o)
	m, flushTime := loadVaswaniStore(t, s, base, 2)
	segs := s.WarmSegments()
	if len(segs) != 2 {
		t.Fatalf("%d segments, want 2", len(segs))
	}
	sn := s.Snapshot()
	for _, sg := range sn.v.segs {
		if sg.indexKind != SegmentIndexIVFPQ || sg.ivf == nil {
			t.Fatalf("segment %s: index %q", sg.path, sg.indexKind)
		}
	}
	st := sn.StorageStats()[1]
	t.Logf("flushed %d vectors (d=%d) into %d ivfpq segments in %v; warm %.1f bytes/vector in files, %.1f in the ivfpq sections (float32: %d)",
		base.N, base.D, len(segs), flushTime.Round(time.Millisecond), st.BytesPerVector(), st.IndexBytesPerVector(), 4*base.D)
	if st.VectorIndex != string(SegmentIndexIVFPQ) || st.IndexBytesPerVector() >= float64(2*base.D) { // < half of float32
		t.Fatalf("warm stats %+v", st)
	}
	sn.Close()

	const k = 10
	// recall checks every query for the first two measurements, then
	// (after deletes, reopen, mixed store) the first 30, to bound the
	// brute-force reference's cost.
	recall := func(label string, filter func(*Document) bool) float64 {
		t.Helper()
		sn := s.Snapshot()
		defer sn.Close()
		found, total := 0, 0
		n := nq
		if label != "all" && label != "10% filter" {
			n = min(nq, 30)
		}
		for qi := 0; qi < n; qi++ {
			q := queries.Row(qi)
			hits, err := sn.SearchVector(q, k, filter)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != k {
				t.Fatalf("%s: query %d: %d hits, want %d", label, qi, len(hits), k)
			}
			if d := checkHits(sn, Cosine, q, hits, filter); d != "" {
				t.Fatalf("%s: query %d: %s", label, qi, d)
			}
			f, n := exactRecall(m, Cosine, q, hits, k, filter)
			found, total = found+f, total+n
		}
		return float64(found) / float64(total)
	}
	r0 := recall("all", nil)
	mod3 := func(d *Document) bool { return d.Metadata["mod10"] == "3" }
	rf := recall("10% filter", mod3)
	t.Logf("recall@10 at defaults over %d queries: %.3f; with a 10%% filter %.3f", nq, r0, rf)
	if r0 < 0.90 || rf < 0.90 {
		t.Fatalf("recall@10 %.3f (filtered %.3f), want ≥ 0.90", r0, rf)
	}

	// A filter leaving 7 rows: all of them, exactly.
	few := map[string]bool{}
	for i := 0; i < 7; i++ {
		few[vecID(i*(base.N/7))] = true
	}
	fewF := func(d *Document) bool { return few[d.ID] }
	sn = s.Snapshot()
	h, err := sn.SearchVector(queries.Row(0), k, fewF)
	if err != nil || len(h) != 7 {
		t.Fatalf("7-row filter: %d hits, err %v", len(h), err)
	}
	if d := checkHits(sn, Cosine, queries.Row(0), h, fewF); d != "" {
		t.Fatal(d)
	}
	sn.Close()

	// Deletes are hidden immediately: delete every query's top 3.
	del := &Batch{}
	deleted := map[string]bool{}
	sn = s.Snapshot()
	for qi := 0; qi < nq; qi++ {
		hits, _ := sn.SearchVector(queries.Row(qi), 3, nil)
		for _, x := range hits {
			if !deleted[x.Doc.ID] {
				deleted[x.Doc.ID] = true
				del.Delete(x.Doc.ID)
			}
		}
	}
	sn.Close()
	if _, err := s.Apply(del); err != nil {
		t.Fatal(err)
	}
	m.apply(del)
	sn = s.Snapshot()
	for qi := 0; qi < nq; qi++ {
		hits, err := sn.SearchVector(queries.Row(qi), k, nil)
		if err != nil || len(hits) != k {
			t.Fatalf("after delete: query %d: %d hits, err %v", qi, len(hits), err)
		}
		for _, x := range hits {
			if deleted[x.Doc.ID] {
				t.Fatalf("after delete: query %d returned deleted %s", qi, x.Doc.ID)
			}
		}
	}
	sn.Close()
	if r := recall("after deletes", nil); r < 0.90 {
		t.Fatalf("recall@10 after deletes %.3f", r)
	}

	// Upserts: move some warm documents onto a query's direction; the
	// search must return the new version (MemTable) and never the old
	// warm row, for the upserted ids and all others.
	up := &Batch{}
	moved := map[string]int{}
	for qi := 0; qi < 5; qi++ {
		id := vecID(100 + qi*(base.N/6))
		moved[id] = qi
		up.Upsert(Document{ID: id, Content: "moved", Vector: queries.Row(qi), UpdatedUnixNano: 2})
	}
	e, err := s.Apply(up)
	if err != nil {
		t.Fatal(err)
	}
	m.apply(up)
	sn = s.Snapshot()
	for id, qi := range moved {
		hits, err := sn.SearchVector(queries.Row(qi), k, nil)
		if err != nil {
			t.Fatal(err)
		}
		if hits[0].Doc.ID != id || hits[0].Epoch != e || hits[0].Doc.Content != "moved" {
			t.Fatalf("query %d: top hit %s epoch %d, want the new version of %s at %d", qi, hits[0].Doc.ID, hits[0].Epoch, id, e)
		}
		if d := checkHits(sn, Cosine, queries.Row(qi), hits, nil); d != "" {
			t.Fatalf("after upsert: %s", d)
		}
	}
	sn.Close()

	// Reopen with default options: the segments still open as IVF-PQ;
	// a new flush builds an HNSW segment; the mixed store searches.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	o2 := Options{FS: vfs.Default, Dir: dir, Dim: base.D, Metric: Cosine, Logger: quietLog, Sync: wal.SyncNone, BuildThreads: 2}
	s = mustOpen(t, o2)
	defer s.Close()
	if r := recall("reopened", nil); r < 0.90 {
		t.Fatalf("recall@10 after reopen %.3f", r)
	}
	if err := s.Flush(bg); err != nil { // the upserts, from the WAL: an HNSW segment
		t.Fatal(err)
	}
	sn = s.Snapshot()
	if st := sn.StorageStats()[1]; st.VectorIndex != "hnsw+ivfpq" {
		t.Fatalf("mixed store stats: %+v", st)
	}
	sn.Close()
	if r := recall("mixed", nil); r < 0.90 {
		t.Fatalf("recall@10 in the mixed store %.3f", r)
	}
	sn = s.Snapshot()
	for id, qi := range moved {
		hits, _ := sn.SearchVector(queries.Row(qi), 1, nil)
		if len(hits) != 1 || hits[0].Doc.ID != id || hits[0].Epoch != e {
			t.Fatalf("mixed store: query %d: %+v, want %s at %d", qi, hits, id, e)
		}
	}
	sn.Close()
}

// topK returns the exact-refined hits of every query as id → distance.
func ivfResults(t *testing.T, sn *Snapshot, queries datasets.Matrix[float32], nq, k int) []map[string]float32 {
	t.Helper()
	out := make([]map[string]float32, nq)
	for qi := 0; qi < nq; qi++ {
		hits, err := sn.SearchVector(queries.Row(qi), k, nil)
		if err != nil {
			t.Fatal(err)
		}
		out[qi] = map[string]float32{}
		for _, h := range hits {
			out[qi][h.Doc.ID] = h.Distance
		}
	}
	return out
}

// TestIVFCompactionUnderQueries: compaction of IVF-PQ segments (a
// quarter of the first segment deleted, so it is rewritten and its
// IVF-PQ index re-trained on the survivors) while goroutines query.
// Re-training changes the PQ codes, so approximate results may change:
// the test asserts every concurrent result has k live hits with exact
// distances, hits present before and after carry identical exact
// distances, and recall@10 stays within 0.01 (the measured change is
// logged). The dead rows are gone from the new segment. Vaswani USE-512,
// or ivfTestData's synthetic stand-in under -short.
func TestIVFCompactionUnderQueries(t *testing.T) {
	base, queries := ivfTestData(t)
	nq := queries.N
	o := ivfOptions(t.TempDir(), base.D)
	s := mustOpen(t, o)
	defer s.Close()
	m, _ := loadVaswaniStore(t, s, base, 2)
	del := &Batch{}
	for i := 0; i < base.N/2; i += 4 {
		del.Delete(vecID(i))
	}
	if _, err := s.Apply(del); err != nil {
		t.Fatal(err)
	}
	m.apply(del)
	const k = 10
	recallOf := func(res []map[string]float32) float64 {
		found, total := 0, 0
		for qi, r := range res {
			var hits []Hit
			for id, d := range r {
				doc := m[id]
				hits = append(hits, Hit{Doc: &doc, Distance: d})
			}
			f, n := exactRecall(m, Cosine, queries.Row(qi), hits, k, nil)
			found, total = found+f, total+n
		}
		return float64(found) / float64(total)
	}
	sn := s.Snapshot()
	before := ivfResults(t, sn, queries, nq, k)
	sn.Close()

	var stop atomic.Bool
	var wg sync.WaitGroup
	var queriesRun atomic.Int64
	errs := make(chan string, 4)
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := g; !stop.Load(); i++ {
				qi := i % nq
				sn := s.Snapshot()
				hits, err := sn.SearchVector(queries.Row(qi), k, nil)
				d := ""
				if err != nil {
					d = err.Error()
				} else if len(hits) != k {
					d = fmt.Sprintf("%d hits", len(hits))
				} else {
					d = checkHits(sn, Cosine, queries.Row(qi), hits, nil)
				}
				sn.Close()
				if d != "" {
					errs <- fmt.Sprintf("concurrent query %d: %s", qi, d)
					return
				}
				queriesRun.Add(1)
			}
		}(g)
	}
	t0 := time.Now()
	err := s.Compact(bg)
	took := time.Since(t0)
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if err != nil {
		t.Fatal(err)
	}
	if s.Compactions() != 1 {
		t.Fatalf("%d compactions", s.Compactions())
	}
	sn = s.Snapshot()
	defer sn.Close()
	after := ivfResults(t, sn, queries, nq, k)
	for _, sg := range sn.v.segs {
		if sg.indexKind != SegmentIndexIVFPQ {
			t.Fatalf("segment %s index %q after compaction", sg.path, sg.indexKind)
		}
		for _, d := range sg.docs {
			if _, ok := m[d.ID]; !ok {
				t.Fatalf("deleted %s still in segment %s", d.ID, sg.path)
			}
		}
	}
	same, common := 0, 0
	for qi := range before {
		for id, d := range before[qi] {
			if d2, ok := after[qi][id]; ok {
				common++
				if d2 != d {
					t.Fatalf("query %d: %s distance %v before, %v after compaction", qi, id, d, d2)
				}
			}
		}
		if fmt.Sprint(hitKeys(before[qi])) == fmt.Sprint(hitKeys(after[qi])) {
			same++
		}
	}
	rb, ra := recallOf(before), recallOf(after)
	t.Logf("compaction of %d ivfpq segments took %v under %d concurrent queries; identical top-%d for %d/%d queries, %d common hits with equal exact distances; recall@10 %.4f before, %.4f after",
		2, took.Round(time.Millisecond), queriesRun.Load(), k, same, nq, common, rb, ra)
	if math.Abs(ra-rb) > 0.01 {
		t.Fatalf("recall@10 changed from %.4f to %.4f", rb, ra)
	}
}

func hitKeys(m map[string]float32) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// tinyIVF makes the small test workloads (≤ 24 ids, testDim) build real
// IVF-PQ sections: 4-bit codes, 2 lists, IVFMinRows 16 (segments with
// fewer vectors get the flat section, so both kinds occur). With every
// list probed and a refine factor beyond the segment size, every
// candidate is rescored exactly, so results must equal the brute-force
// reference exactly (the tests then check the plumbing: allow bitmaps,
// epochs, id mapping, compaction re-encoding).
func tinyIVF(o *Options) {
	o.SegmentIndex = SegmentIndexIVFPQ
	o.IVFNbits = 4
	o.IVFNlist = 2
	o.IVFNprobe = 2
	o.IVFKFactor = 64
	o.IVFMinRows = 16
}

// TestCrashWithFlushAndCompactionIVF is TestCrashWithFlushAndCompaction
// with IVF-PQ warm segments: crashes land inside IVF-PQ segment builds,
// writes, manifest edits and compactions; recovery matches the model.
func TestCrashWithFlushAndCompactionIVF(t *testing.T) {
	iters := 100
	if testing.Short() {
		iters = 25
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
		tinyIVF(o)
	}, maint, 6)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d iterations, unsynced data dropped in %d rounds", st.iters, st.dropped)
	if st.dropped < st.iters/4 {
		t.Fatalf("unsynced data dropped in only %d of %d rounds: the test may pass vacuously", st.dropped, 2*st.iters)
	}
}

// TestIVFCrossTierModel: a seeded workload with flushes and compactions
// into IVF-PQ (and flat) segments, for each metric: Get, LiveIDs and
// search (with and without a filter) equal the reference at every epoch,
// across reopen.
func TestIVFCrossTierModel(t *testing.T) {
	for _, metric := range []Metric{L2, IP, Cosine} {
		t.Run(metric.String(), func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			o := testOptions(fs)
			o.Metric = metric
			o.CompactMaxSegments = 3
			tinyIVF(&o)
			s := mustOpen(t, o)
			const seed = 78
			rng := rand.New(rand.NewPCG(seed, 2))
			m := model{}
			n := uint64(300)
			if testing.Short() {
				n = 120
			}
			kinds := map[SegmentIndexType]int{}
			for i := uint64(1); i <= n; i++ {
				b := genBatch(seed, i)
				if _, err := s.Apply(b); err != nil {
					t.Fatal(err)
				}
				m.apply(b)
				if i%30 == 0 {
					if err := s.Flush(bg); err != nil {
						t.Fatal(err)
					}
				}
				if i%70 == 0 {
					if err := s.Compact(bg); err != nil {
						t.Fatal(err)
					}
				}
				sn := s.Snapshot()
				for _, sg := range sn.v.segs {
					kinds[sg.indexKind]++
				}
				if d := checkAgainst(sn, m); d != "" {
					t.Fatalf("epoch %d: %s", i, d)
				}
				if d := checkSearch(sn, m, metric, rng); d != "" {
					t.Fatalf("epoch %d: %s", i, d)
				}
				sn.Close()
			}
			if kinds[SegmentIndexIVFPQ] == 0 {
				t.Fatalf("no ivfpq segment was built: %v", kinds)
			}
			t.Logf("segment kinds seen (segment × epoch): %v", kinds)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			// Default SegmentIndex (HNSW): the IVF-PQ segments still
			// open as such. The search parameters are options, not
			// stored, so keep the exact-forcing ones.
			o2 := testOptions(fs)
			o2.Metric = metric
			o2.IVFNprobe, o2.IVFKFactor = o.IVFNprobe, o.IVFKFactor
			s = mustOpen(t, o2)
			defer s.Close()
			sn := s.Snapshot()
			defer sn.Close()
			if d := checkAgainst(sn, m); d != "" {
				t.Fatalf("after reopen: %s", d)
			}
			if d := checkSearch(sn, m, metric, rng); d != "" {
				t.Fatalf("after reopen: %s", d)
			}
		})
	}
}

// ivfSegRows returns n rows with testDim vectors (every 7th without).
func ivfSegRows(n int) []segRow {
	rng := rand.New(rand.NewPCG(5, uint64(n)))
	rows := make([]segRow, n)
	for i := range rows {
		var v []float32
		if i%7 != 3 {
			v = make([]float32, testDim)
			for j := range v {
				v[j] = float32(rng.NormFloat64())
			}
		}
		rows[i] = segRow{doc: &Document{ID: fmt.Sprintf("doc-%02d", i), Content: fmt.Sprint("row ", i), Vector: v,
			Metadata: map[string]string{"batch": fmt.Sprint(i % 3)}}, birth: uint64(1 + i/10)}
	}
	return rows
}

// ivfSegBytes builds an "ivfpq" segment of n rows with the tinyIVF
// parameters (n ≥ 19 gives an ivfpq section, fewer a flat one).
func ivfSegBytes(tb testing.TB, n int) []byte {
	tb.Helper()
	data, err := buildSegment(ivfSegRows(n), segBuildOptions{dim: testDim, metric: L2, threads: 1, index: SegmentIndexIVFPQ,
		ivf: ivfBuildParams{nlist: 2, nbits: 4, minRows: 16}})
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

func segSection(tb testing.TB, data []byte, kind uint32) (off, ln int) {
	tb.Helper()
	n := len(data)
	foot := data[n-segFooterSize:]
	tableOff := binary.LittleEndian.Uint64(foot)
	nsec := int(binary.LittleEndian.Uint32(foot[8:]))
	for i := 0; i < nsec; i++ {
		e := data[int(tableOff)+i*segTableEntry:]
		if binary.LittleEndian.Uint32(e) == kind {
			return int(binary.LittleEndian.Uint64(e[8:])), int(binary.LittleEndian.Uint64(e[16:]))
		}
	}
	tb.Fatalf("no section %d", kind)
	return 0, 0
}

// TestIVFSegmentCorruption: damage in the ivfpq section is ErrCorrupt
// naming the file and an offset inside that section — caught by the
// section CRC, or (CRCs repaired) by engine/ivfpq's own validation,
// whose offset is translated into file coordinates; a wrong flat count
// and a version-1 file with an ivfpq section are rejected too.
func TestIVFSegmentCorruption(t *testing.T) {
	good := ivfSegBytes(t, 40)
	sg, err := openSegment(good, "good.sst", testDim, L2)
	if err != nil {
		t.Fatal(err)
	}
	if sg.indexKind != SegmentIndexIVFPQ {
		t.Fatalf("index %q", sg.indexKind)
	}
	hits, err := sg.search(context.Background(), make([]float32, testDim), 5, 0, 1<<62, nil)
	if err != nil || len(hits) != 5 {
		t.Fatalf("search: %d hits, %v", len(hits), err)
	}
	sg.free()
	off, ln := segSection(t, good, secIVFPQ)
	check := func(label string, data []byte, lo, hi int) {
		t.Helper()
		_, err := openSegment(data, "/db/seg-000009.sst", testDim, L2)
		var ce *wal.CorruptError
		if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || !strings.Contains(err.Error(), "/db/seg-000009.sst") {
			t.Fatalf("%s: error %v, want ErrCorrupt naming the file", label, err)
		}
		if ce.Offset < int64(lo) || ce.Offset >= int64(hi) {
			t.Fatalf("%s: offset %d outside [%d,%d): %v", label, ce.Offset, lo, hi, err)
		}
	}
	// File CRC repaired, section CRC not: the section's CRC check.
	for _, at := range []int{0, 17, ln / 2, ln - 1} {
		bad := slices.Clone(good)
		bad[off+at] ^= 0x10
		n := len(bad)
		binary.LittleEndian.PutUint32(bad[n-16:], crc32.Checksum(bad[:n-16], crcTable))
		check(fmt.Sprintf("flip at section byte %d", at), bad, off, off+1)
	}
	// CRCs repaired: ivfpq's validation (header dim, nlist, the footer).
	for _, at := range []int{8, 16, 24, ln - 4} {
		bad := slices.Clone(good)
		bad[off+at] ^= 0x01
		check(fmt.Sprintf("repaired flip at section byte %d", at), fixCRCs(bad), off, off+ln)
	}
	// The segment-file CRC covers it all: the real store reports it.
	fs := vfs.NewCrashableMem()
	o := testOptions(fs)
	tinyIVF(&o)
	s := mustOpen(t, o)
	b := &Batch{}
	for _, r := range ivfSegRows(40) {
		b.Upsert(*r.doc)
	}
	if _, err := s.Apply(b); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(bg); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join("/db", s.WarmSegments()[0].File)
	s.Close()
	orig := fileData(t, fs, file)
	soff, sln := segSection(t, orig, secIVFPQ)
	bad := slices.Clone(orig)
	bad[soff+sln/2] ^= 0x40
	rewriteFile(t, fs, file, bad)
	if _, err := Open(o); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "offset") {
		t.Fatalf("store open: %v", err)
	}
	rewriteFile(t, fs, file, orig)
	s = mustOpen(t, o)
	s.Close()

	// Flat: a wrong count.
	flat := ivfSegBytes(t, 12)
	foff, _ := segSection(t, flat, secFlat)
	bad = slices.Clone(flat)
	bad[foff]++
	check("flat count", fixCRCs(bad), foff, foff+1)
	// Version 1 with an ivfpq section.
	bad = slices.Clone(good)
	binary.LittleEndian.PutUint32(bad[8:], segVersionHNSW)
	check("version 1", fixCRCs(bad), 8, 9)
}

// TestIVFSegmentRandomMutations: seeded 1–3-byte mutations of valid
// ivfpq and flat segments, CRCs repaired so they reach the parsers
// (segment, ivfpq): every one opens and searches, or fails with
// ErrCorrupt; never a panic.
func TestIVFSegmentRandomMutations(t *testing.T) {
	iters := 6000
	if testing.Short() {
		iters = 1500
	}
	for _, n := range []int{40, 12} {
		good := ivfSegBytes(t, n)
		rng := rand.New(rand.NewPCG(3, uint64(n)))
		opened := 0
		for it := 0; it < iters; it++ {
			data := slices.Clone(good)
			for j := 0; j < 1+rng.IntN(3); j++ {
				data[rng.IntN(len(data))] ^= byte(1 + rng.IntN(255))
			}
			sg, err := openSegment(fixCRCs(data), "mut.sst", testDim, L2, "batch")
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("rows %d iteration %d: non-corruption error %v", n, it, err)
				}
				continue
			}
			opened++
			q := make([]float32, testDim)
			q[it%testDim] = 1
			sg.search(context.Background(), q, 3, 8, 1<<62, nil)
			sg.searchPre(context.Background(), q, 3, 8, 0, nil, func(*Document) bool { return true })
			sg.free()
		}
		t.Logf("%d rows: %d mutations, %d still opened", n, iters, opened)
	}
}

// BenchmarkWarmIndexVaswani compares the warm vector indexes on the
// ~11k Vaswani USE-512 vectors (Cosine, BuildThreads 2, defaults
// otherwise), one segment: the timed part is the flush (segment build +
// write + open); reported metrics are the compaction of that segment
// after deleting a quarter of it (compact-ms), the file bytes per vector
// (warm-B/vec), the vector-index section bytes per vector (index-B/vec;
// float32 is 2048), recall@10 against brute force over the queries, and
// the mean k=10 search latency (search-us).
func BenchmarkWarmIndexVaswani(b *testing.B) {
	base, queries := loadVaswaniUSE(b)
	for _, kind := range []SegmentIndexType{SegmentIndexHNSW, SegmentIndexIVFPQ} {
		b.Run("index="+string(kind), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(4 * base.D * base.N))
			for it := 0; it < b.N; it++ {
				b.StopTimer()
				o := ivfOptions(b.TempDir(), base.D)
				o.SegmentIndex = kind
				s, err := Open(o)
				if err != nil {
					b.Fatal(err)
				}
				m := model{}
				bt := &Batch{}
				for i := 0; i < base.N; i++ {
					bt.Upsert(Document{ID: vecID(i), Vector: base.Row(i), UpdatedUnixNano: 1})
					if bt.Len() == 1000 || i == base.N-1 {
						if _, err := s.Apply(bt); err != nil {
							b.Fatal(err)
						}
						m.apply(bt)
						bt = &Batch{}
					}
				}
				b.StartTimer()
				if err := s.Flush(bg); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				sn := s.Snapshot()
				st := sn.StorageStats()[1]
				found, total := 0, 0
				var searchTime time.Duration
				for qi := 0; qi < queries.N; qi++ {
					t0 := time.Now()
					hits, err := sn.SearchVector(queries.Row(qi), 10, nil)
					searchTime += time.Since(t0)
					if err != nil {
						b.Fatal(err)
					}
					f, n := exactRecall(m, Cosine, queries.Row(qi), hits, 10, nil)
					found, total = found+f, total+n
				}
				sn.Close()
				del := &Batch{}
				for i := 0; i < base.N; i += 4 {
					del.Delete(vecID(i))
				}
				if _, err := s.Apply(del); err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if err := s.Compact(bg); err != nil {
					b.Fatal(err)
				}
				compact := time.Since(t0)
				s.Close()
				b.ReportMetric(float64(compact.Milliseconds()), "compact-ms")
				b.ReportMetric(st.BytesPerVector(), "warm-B/vec")
				b.ReportMetric(st.IndexBytesPerVector(), "index-B/vec")
				b.ReportMetric(float64(found)/float64(total), "recall@10")
				b.ReportMetric(float64(searchTime.Microseconds())/float64(queries.N), "search-us")
				b.StartTimer()
			}
		})
	}
}

// BenchmarkIVFSegmentSearch: k=10 search of one IVF-PQ warm segment over
// the Vaswani USE-512 vectors (defaults), per query.
func BenchmarkIVFSegmentSearch(b *testing.B) {
	base, queries := loadVaswaniUSE(b)
	o := ivfOptions(b.TempDir(), base.D)
	s, err := Open(o)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	bt := &Batch{}
	for i := 0; i < base.N; i++ {
		bt.Upsert(Document{ID: vecID(i), Vector: base.Row(i), UpdatedUnixNano: 1})
	}
	if _, err := s.Apply(bt); err != nil {
		b.Fatal(err)
	}
	if err := s.Flush(bg); err != nil {
		b.Fatal(err)
	}
	sn := s.Snapshot()
	defer sn.Close()
	b.Run(fmt.Sprintf("n=%d/dim=%d", base.N, base.D), func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := sn.SearchVector(queries.Row(i%queries.N), 10, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestIVFOptionsValidate: every bad SegmentIndex / IVF combination is
// reported (all at once), and the documented defaults are filled in.
func TestIVFOptionsValidate(t *testing.T) {
	o := Options{Dir: "/x", Dim: 512, SegmentIndex: SegmentIndexIVFPQ}
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if o.IVFNbits != 8 || o.IVFKFactor != 4 || o.IVFMinRows != 1024 || o.IVFNlist != 0 || o.IVFNprobe != 0 {
		t.Fatalf("defaults %+v", o)
	}
	if m := ivfDefaultM(512, 8); m != 64 {
		t.Fatalf("default M(512, 8) = %d", m)
	}
	for _, c := range []struct{ dim, nbits, want int }{{512, 4, 128}, {100, 8, 10}, {7, 8, 1}, {30, 8, 3}, {8, 4, 2}} {
		if m := ivfDefaultM(c.dim, c.nbits); m != c.want || c.dim%m != 0 {
			t.Fatalf("default M(%d, %d) = %d, want %d", c.dim, c.nbits, m, c.want)
		}
	}
	for _, c := range []struct{ n, want int }{{1, 1}, {1024, 128}, {11429, 428}, {2_000_000, 4096}, {3, 3}} {
		if nl := ivfDefaultNlist(c.n); nl != c.want {
			t.Fatalf("default nlist(%d) = %d, want %d", c.n, nl, c.want)
		}
	}
	bad := Options{Dir: "/x", Dim: 512, SegmentIndex: "faiss", IVFNbits: 6, IVFM: 7, IVFNlist: -1, IVFNprobe: -2,
		IVFKFactor: -1, IVFMinRows: 10}
	bad.EnsureDefaults()
	err := bad.Validate()
	for _, want := range []string{"SegmentIndex", "IVFNbits", "IVFM 7 does not divide", "IVFNlist", "IVFNprobe", "IVFKFactor"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %s", err, want)
		}
	}
	small := Options{Dir: "/x", Dim: 8, SegmentIndex: SegmentIndexIVFPQ, IVFMinRows: 100, IVFNlist: 200}
	small.EnsureDefaults()
	if err := small.Validate(); err == nil || !strings.Contains(err.Error(), "IVFMinRows 100 must be >= 2^IVFNbits") ||
		!strings.Contains(err.Error(), "IVFNlist 200") {
		t.Fatalf("small: %v", err)
	}
}

// TestInspectIVFSegment: the inspector shows an ivfpq segment's section,
// its engine/ivfpq child in file coordinates, and the flat marker.
func TestInspectIVFSegment(t *testing.T) {
	data := ivfSegBytes(t, 40)
	in, err := Inspect(data)
	if err != nil {
		t.Fatal(err)
	}
	if !in.OK() || in.Version != segVersionCompact || tierField(t, in, "vectorIndex") != string(SegmentIndexIVFPQ) {
		t.Fatalf("problems %v, version %d", in.Problems, in.Version)
	}
	sec := sectionNamed(t, in, "ivfpq")
	if len(in.Children) != 1 {
		t.Fatalf("%d children", len(in.Children))
	}
	c := in.Children[0]
	if c.Format != "STRAIVPQ" || c.Offset != sec.Offset || c.Size != sec.Length || !c.OK() {
		t.Fatalf("child %+v", c)
	}
	for _, s := range c.Sections {
		if s.Offset < sec.Offset || s.Offset+s.Length > sec.Offset+sec.Length {
			t.Fatalf("child section %+v outside %+v", s, sec)
		}
	}
	if n := tierField(t, c, "ntotal"); toU64(n) != 34 { // 40 rows, 6 without a vector
		t.Fatalf("ntotal %v", n)
	}
	// Damage inside the child (CRCs repaired at the segment level):
	// the child reports it at its absolute offset.
	bad := slices.Clone(data)
	bad[sec.Offset+16] ^= 0xff // ivfpq header: dim
	bin, _ := Inspect(fixCRCs(bad))
	if len(bin.Children) == 1 && bin.Children[0].OK() && bin.OK() {
		t.Fatalf("damaged ivfpq header not reported: %v / %v", bin.Problems, bin.Children[0].Problems)
	}
	flat := ivfSegBytes(t, 12)
	fin, _ := Inspect(flat)
	if !fin.OK() || tierField(t, fin, "vectorIndex") != segmentIndexFlat || toU64(tierField(t, fin, "flatVectors")) != 10 {
		t.Fatalf("flat: %v", fin.Problems)
	}
	var sb strings.Builder
	inspect.WriteText(&sb, in)
	if !strings.Contains(sb.String(), "section ivfpq") || !strings.Contains(sb.String(), "STRAIVPQ") {
		t.Fatalf("text:\n%s", sb.String())
	}
}

// TestStalenessAcrossTiersIVF is TestStalenessAcrossTiers with IVF-PQ
// (and flat) warm segments: concurrent writers and readers while
// background flushes and compactions build and re-encode IVF-PQ
// segments; E_stale must be 0.
func TestStalenessAcrossTiersIVF(t *testing.T) {
	rounds := 150
	if testing.Short() {
		rounds = 40
	}
	st := runStaleness(t, func(o *Options) {
		o.MemTableSizeBytes = 16 << 10
		o.AutoCompact = true
		o.CompactMaxSegments = 3
		tinyIVF(o)
	}, rounds)
	t.Logf("%d queries (%d overlapped), %d stale, %d dupes, %d inconsistent; %d flushes, %d compactions",
		st.queries, st.overlapQueries, st.stale, st.dupes, st.inconsistent, st.flushes, st.compactions)
	if st.stale != 0 || st.dupes != 0 || st.inconsistent != 0 {
		t.Fatalf("E_stale = %d (duplicates %d, Get/search disagreements %d), want 0", st.stale, st.dupes, st.inconsistent)
	}
	if st.flushes < 3 || st.compactions < 1 {
		t.Fatalf("only %d flushes and %d compactions ran: the test did not exercise the warm tier", st.flushes, st.compactions)
	}
	if st.overlapQueries < st.queries/2 {
		t.Fatalf("only %d of %d queries overlapped a write to a returned document", st.overlapQueries, st.queries)
	}
}

// TestIVFL2TableMeasure logs, for an L2 warm-segment-sized IVF-PQ index at
// the tier's defaults (nlist 4·√n, M = ivfDefaultM, nprobe nlist/8, refine
// ×4, k = 10), the search time and refined recall@10 of three L2 variants:
// codes by residual with engine/ivfpq's precomputed tables (its default),
// by residual without them (MaxPrecomputedTableBytes −1), and codes of the
// vectors themselves (ResidualOff, what the tier builds). Data: the first
// 10,000 fashion-mnist-784 base vectors (`make datasets`; 500 queries) and
// 10,000 Gaussian d = 64 vectors. It asserts nothing and runs only with
// STRATA_TIER_IVF_MEASURE=1.
func TestIVFL2TableMeasure(t *testing.T) {
	if os.Getenv("STRATA_TIER_IVF_MEASURE") != "1" {
		t.Skip("set STRATA_TIER_IVF_MEASURE=1 to measure the L2 precomputed-table choice")
	}
	const n, nq, k, kf = 10000, 500, 10, 4
	type set struct {
		name     string
		d        int
		base, qs []float32
	}
	var sets []set
	if cache, err := datasets.CacheDir(); err == nil {
		if ann, err := datasets.LoadANN(cache, datasets.FashionMNIST, 100); err == nil {
			d := ann.Base.D
			sets = append(sets, set{"fashion-mnist-784", d, ann.Base.Data[:n*d], ann.Queries.Data[:nq*d]})
		} else {
			t.Logf("fashion-mnist: %v", err)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	g := make([]float32, (n+nq)*64)
	for i := range g {
		g[i] = float32(rng.NormFloat64())
	}
	sets = append(sets, set{"gauss-64", 64, g[:n*64], g[n*64:]})
	for _, s := range sets {
		d := s.d
		gt := make([][]uint32, nq)
		dist := make([]float32, n)
		for qi := range gt {
			asm.L2SqBatch(s.qs[qi*d:(qi+1)*d], s.base, dist)
			ids := make([]uint32, n)
			for i := range ids {
				ids[i] = uint32(i)
			}
			sort.Slice(ids, func(a, b int) bool { return dist[ids[a]] < dist[ids[b]] })
			gt[qi] = ids[:k]
		}
		for _, nbits := range []int{8, 4} {
			nlist, m := ivfDefaultNlist(n), ivfDefaultM(d, nbits)
			for _, v := range []struct {
				name string
				res  ivfpq.Residual
				max  int64
			}{{"residual+tables", ivfpq.ResidualOn, 0}, {"residual-notables", ivfpq.ResidualOn, -1}, {"noresidual", ivfpq.ResidualOff, 0}} {
				ix, err := ivfpq.New(ivfpq.Options{Dim: d, Metric: ivfpq.L2, Nlist: nlist, M: m, Nbits: nbits, Residual: v.res,
					MaxPrecomputedTableBytes: v.max, Threads: 1})
				if err != nil {
					t.Fatal(err)
				}
				t0 := time.Now()
				if err := ix.Train(s.base); err != nil {
					t.Fatal(err)
				}
				if _, err := ix.Add(nil, s.base); err != nil {
					t.Fatal(err)
				}
				build := time.Since(t0)
				if err := ix.SetRefineVectors(s.base); err != nil {
					t.Fatal(err)
				}
				p := ivfpq.SearchParams{Nprobe: max(1, nlist/8), KFactor: kf}
				t1 := time.Now()
				if _, err := ix.Search(s.qs[:d], k, p); err != nil {
					t.Fatal(err)
				}
				first := time.Since(t1)
				found := 0
				t2 := time.Now()
				for qi := 0; qi < nq; qi++ {
					res, err := ix.Search(s.qs[qi*d:(qi+1)*d], k, p)
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range res {
						if slices.Contains(gt[qi], r.ID) {
							found++
						}
					}
				}
				per := time.Since(t2) / nq
				var b strings.Builder
				sec, _ := ix.WriteTo(&b)
				tab := int64(0)
				if v.res == ivfpq.ResidualOn && v.max == 0 {
					tab = 4 * int64(nlist) * int64(m) << nbits
				}
				t.Logf("%s n=%d nlist=%d M=%d nbits=%d nprobe=%d %-18s build %v, first search %v, search %v/q, refined recall@10 %.4f, section %d B, tables %d B",
					s.name, n, nlist, m, nbits, p.Nprobe, v.name, build.Round(time.Millisecond), first.Round(time.Microsecond), per.Round(time.Microsecond),
					float64(found)/float64(nq*k), sec, tab)
			}
		}
	}
}

// TestIVFSectionIDsBeyondVectors: an ivfpq section whose ids are not
// exactly 0..nvec−1 (here the last id is nvec+100, the count still nvec,
// so Len, uniqueness, Dim and Metric all pass) is rejected at open with
// ErrCorrupt naming the path and the offset of the section's nextID, not
// at query time (review finding F9).
func TestIVFSectionIDsBeyondVectors(t *testing.T) {
	good := ivfSegBytes(t, 40)
	off, ln := segSection(t, good, secIVFPQ)
	rows := ivfSegRows(40)
	var vecs []float32
	for _, r := range rows {
		if r.doc.Vector != nil {
			vecs = append(vecs, r.doc.Vector...)
		}
	}
	n := len(vecs) / testDim
	// The same build as buildIVFSection (L2, nlist 2, nbits 4, default M,
	// no residual, seed 0, one thread), but with the last id out of range.
	ix, err := ivfpq.New(ivfpq.Options{Dim: testDim, Metric: ivfpq.L2, Nlist: 2, M: ivfDefaultM(testDim, 4), Nbits: 4,
		Residual: ivfpq.ResidualOff, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Train(vecs); err != nil {
		t.Fatal(err)
	}
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = uint32(i)
	}
	ids[n-1] = uint32(n + 100)
	if _, err := ix.Add(ids, vecs); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := ix.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if b.Len() != ln {
		t.Fatalf("rebuilt section has %d bytes, the segment's %d: cannot splice", b.Len(), ln)
	}
	bad := append([]byte(nil), good...)
	copy(bad[off:], b.Bytes())
	bad = fixCRCs(bad)
	if bytes.Equal(bad, fixCRCs(append([]byte(nil), good...))) {
		t.Fatal("splice changed nothing")
	}
	sg, err := openSegment(bad, "bad.sst", testDim, L2)
	if err == nil {
		defer sg.free()
		n1 := n - 1
		hits, err := sg.search(context.Background(), vecs[n1*testDim:(n1+1)*testDim], 40, 0, 1<<62, nil)
		t.Fatalf("segment with ivfpq id %d beyond its %d vectors opened without error; search: %d hits, err %v", n+100, n, len(hits), err)
	}
	var ce *wal.CorruptError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) {
		t.Fatalf("open: %v, want ErrCorrupt", err)
	}
	if ce.Path != "bad.sst" || ce.Offset != int64(off)+ivfNextIDOff {
		t.Fatalf("open: %v: file %q offset %d, want bad.sst at %d (the section's nextID)", err, ce.Path, ce.Offset, int64(off)+ivfNextIDOff)
	}
	// The intact segment opens.
	sg, err = openSegment(good, "good.sst", testDim, L2)
	if err != nil {
		t.Fatal(err)
	}
	sg.free()
}

// TestIVFFullKDefaults: an "ivfpq" segment at the default build and
// search parameters (nlist 4·√n, nprobe nlist/8, refine ×4, 8-bit) returns
// exactly min(k, |allow|) hits, all inside allow, sorted, with exact
// distances, for allow sets of every size class (the exact-scan cut-off,
// the re-probe path and the plain IVF path) and all three metrics.
func TestIVFFullKDefaults(t *testing.T) {
	const n, d = 1500, 16
	rng := rand.New(rand.NewPCG(11, 12))
	rows := vectorRows(rng, n, d, "")
	for _, metric := range []Metric{L2, IP, Cosine} {
		data, err := buildSegment(rows, segBuildOptions{dim: d, metric: metric, threads: 1, index: SegmentIndexIVFPQ,
			ivf: ivfBuildParams{nbits: 8, minRows: 1024}})
		if err != nil {
			t.Fatal(err)
		}
		sg, err := openSegment(data, "f.sst", d, metric)
		if err != nil {
			t.Fatal(err)
		}
		if sg.indexKind != SegmentIndexIVFPQ {
			t.Fatalf("index kind %q", sg.indexKind)
		}
		for _, size := range []int{0, 1, 3, 9, 40, 200, 700, n} {
			var allow *roaring.Bitmap
			if size < n {
				allow = roaring.New()
				for _, h := range rng.Perm(n)[:size] {
					allow.Add(uint32(h))
				}
			}
			for _, k := range []int{1, 10, 100} {
				q := make([]float32, d)
				for j := range q {
					q[j] = float32(rng.NormFloat64())
				}
				hits, err := sg.searchAllow(context.Background(), q, k, 0, allow)
				if err != nil {
					t.Fatal(err)
				}
				if want := min(k, size); len(hits) != want {
					t.Fatalf("%v allow %d k %d: %d hits, want %d", metric, size, k, len(hits), want)
				}
				for i, h := range hits {
					r := sg.ids[h.Doc.ID][0]
					if allow != nil && !allow.Contains(uint32(sg.hid[r])) {
						t.Fatalf("%v allow %d k %d: hit %s outside allow", metric, size, k, h.Doc.ID)
					}
					if i > 0 && hits[i-1].Distance > h.Distance {
						t.Fatalf("%v allow %d k %d: hits not sorted", metric, size, k)
					}
					var want float64
					x := rows[r].doc.Vector
					qq, xx := q, x
					if metric == Cosine {
						qq, xx = basepkg.UnitVector(nil, q), basepkg.UnitVector(nil, x)
					}
					for j := range qq {
						switch metric {
						case L2:
							want += float64(qq[j]-xx[j]) * float64(qq[j]-xx[j])
						default:
							want -= float64(qq[j]) * float64(xx[j])
						}
					}
					if metric == Cosine {
						want += 1
					}
					if math.Abs(float64(h.Distance)-want) > 1e-4 {
						t.Fatalf("%v allow %d k %d: hit %s distance %v, exact %v", metric, size, k, h.Doc.ID, h.Distance, want)
					}
				}
			}
		}
		sg.free()
	}
}

// TestIVFL2PrecomputedTableMemory (review finding F7): an L2 "ivfpq"
// segment encodes the vectors themselves (not residuals), so engine/ivfpq
// builds no precomputed L2 tables (4·nlist·M·2^nbits bytes, here nlist
// 283, M 8: ~2.3 MB against a 0.2 MB section) on the first search: the
// heap the first search retains stays under 4× the section size that
// TierStats.VectorIndexBytes reports.
func TestIVFL2PrecomputedTableMemory(t *testing.T) {
	testenv.SkipIfEmulated(t, "trains IVF-PQ on 5,000 vectors")
	const n, d = 5000, 64
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([]segRow, n)
	for i := range rows {
		v := make([]float32, d)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		rows[i] = segRow{doc: &Document{ID: fmt.Sprintf("r%05d", i), Vector: v}, birth: 1}
	}
	data, err := buildSegment(rows, segBuildOptions{dim: d, metric: L2, threads: 1, index: SegmentIndexIVFPQ,
		ivf: ivfBuildParams{nbits: 8, minRows: 1024}})
	if err != nil {
		t.Fatal(err)
	}
	heap := func() int64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	// Two identical segments, one searched once: the heap difference
	// after both are freed is what the first search retained.
	sgs := make([]*warmSegment, 2)
	for i := range sgs {
		if sgs[i], err = openSegment(data, "f.sst", d, L2); err != nil {
			t.Fatal(err)
		}
	}
	if r := sgs[0].ivf.Options().Residual; r != ivfpq.ResidualOff {
		t.Errorf("L2 ivfpq section Residual %v, want ResidualOff (%v)", r, ivfpq.ResidualOff)
	}
	h0 := heap()
	if _, err := sgs[0].searchAllow(context.Background(), rows[0].doc.Vector, 10, 0, nil); err != nil {
		t.Fatal(err)
	}
	h1 := heap()
	sgs[0].free()
	sgs[0] = nil
	h2 := heap()
	retained := h1 - h0
	t.Logf("heap after open %d, after first search %d (+%d), after freeing the searched segment %d (-%d); section %d B",
		h0, h1, retained, h2, h1-h2, sgs[1].idxBytes)
	if retained > 4*sgs[1].idxBytes {
		o := sgs[1].ivf.Options()
		t.Errorf("first search of an L2 ivfpq segment retained %d heap bytes (nlist %d, M %d), %.1f× the %d-byte index section Stats reports",
			retained, o.Nlist, o.M, float64(retained)/float64(sgs[1].idxBytes), sgs[1].idxBytes)
	}
	sgs[1].free()
	runtime.KeepAlive(rows)
	runtime.KeepAlive(data)
}
