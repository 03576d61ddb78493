package tier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/vfs"
	"github.com/stratasearch/strata/vfs/errorfs"
)

// coldDocs returns n documents doc-0000.. with seeded vectors (every 9th
// without one) and metadata.
func coldDocs(n int, seed uint64, dim int) []Document {
	rng := rand.New(rand.NewPCG(seed, 3))
	var out []Document
	for i := 0; i < n; i++ {
		var vec []float32
		if i%9 != 4 {
			vec = make([]float32, dim)
			for j := range vec {
				vec[j] = float32(rng.NormFloat64())
			}
		}
		d := Document{ID: fmt.Sprintf("doc-%04d", i), Content: fmt.Sprintf("content %d: the quick brown fox %d", i, rng.IntN(1000)),
			SourceURI: fmt.Sprintf("file:///src/f%d.go#L1-L9", i%7), Vector: vec, Namespace: fmt.Sprintf("t%d/", i%3),
			Trust: Trust(1 + i%3), UpdatedUnixNano: int64(1_700_000_000_000_000_000 + i)}
		if i%2 == 0 {
			d.Metadata = map[string]string{"lang": []string{"go", "rust"}[i%4/2], "n": fmt.Sprint(i)}
		}
		if i%5 == 0 {
			d.ACL = []string{"alice", "bob"}
		}
		d.VersionHash[0], d.VersionHash[31] = byte(i), byte(i>>8)
		out = append(out, d)
	}
	return out
}

func applyDocs(t testing.TB, s *Store, docs []Document) {
	t.Helper()
	for i := 0; i < len(docs); i += 50 {
		var b Batch
		for _, d := range docs[i:min(i+50, len(docs))] {
			b.Upsert(d)
		}
		if _, err := s.Apply(&b); err != nil {
			t.Fatal(err)
		}
	}
}

func sameDoc(a, b *Document) string {
	switch {
	case a.ID != b.ID || a.Content != b.Content || a.SourceURI != b.SourceURI || a.Namespace != b.Namespace || a.Trust != b.Trust:
		return "id/content/uri/namespace/trust"
	case !sameVec(a.Vector, b.Vector):
		return "vector"
	case fmt.Sprint(a.Metadata) != fmt.Sprint(b.Metadata) || len(a.Metadata) != len(b.Metadata):
		return "metadata"
	case !slices.Equal(a.ACL, b.ACL):
		return "acl"
	case a.VersionHash != b.VersionHash || a.UpdatedUnixNano != b.UpdatedUnixNano:
		return "hash/timestamp"
	}
	return ""
}

// checkDocs asserts that the snapshot holds exactly want (by id, every
// field).
func checkDocs(t *testing.T, label string, sn *Snapshot, want map[string]Document) {
	t.Helper()
	live := sn.LiveIDs()
	sort.Strings(live)
	var ids []string
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if !slices.Equal(live, ids) {
		t.Fatalf("%s: %d live ids, want %d", label, len(live), len(ids))
	}
	for id, d := range want {
		got, _, ok := sn.Get(id)
		if !ok {
			t.Fatalf("%s: %s missing", label, id)
		}
		if diff := sameDoc(got, &d); diff != "" {
			t.Fatalf("%s: %s differs in %s", label, id, diff)
		}
	}
}

// bruteForce is the reference: the k nearest live model documents (L2).
func bruteForce(want map[string]Document, q []float32, k int, filter func(*Document) bool) []string {
	type c struct {
		id string
		d  float32
	}
	var cs []c
	for id, d := range want {
		if d.Vector == nil || (filter != nil && !filter(&d)) {
			continue
		}
		cs = append(cs, c{id, asm.L2Sq(q, d.Vector)})
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].d < cs[j].d || cs[i].d == cs[j].d && cs[i].id < cs[j].id })
	var out []string
	for _, x := range cs[:min(k, len(cs))] {
		out = append(out, x.id)
	}
	return out
}

// TestColdRoundTrip: flush → archive → cold search (exact rerank: equal
// to brute force) and Get → deletes and upserts hide cold rows (also
// after a flush and a reopen) → promote → warm search and Get, every
// field identical.
func TestColdRoundTrip(t *testing.T) {
	for _, metric := range []Metric{L2, Cosine} {
		t.Run(metric.String(), func(t *testing.T) {
			mem := vfs.NewCrashableMem()
			o := testOptions(mem)
			o.Dim = 12 // padded to 16 by the codec
			o.Metric = metric
			s, err := Open(o)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if s != nil {
					s.Close()
				}
			}()
			docs := coldDocs(400, 7, o.Dim)
			want := map[string]Document{}
			for _, d := range docs {
				want[d.ID] = d
			}
			applyDocs(t, s, docs[:200])
			if err := s.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			applyDocs(t, s, docs[200:])
			if err := s.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			// A row dead before archiving is not archived.
			var b Batch
			b.Delete("doc-0001")
			s.Apply(&b)
			delete(want, "doc-0001")
			aid, err := s.Archive(context.Background(), ArchiveOptions{Oldest: 2, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.WarmSegments()) != 0 || len(s.Archives()) != 1 || s.Archives()[0].Rows != 399 {
				t.Fatalf("after archive: segments %v archives %v", s.WarmSegments(), s.Archives())
			}
			sn := s.Snapshot()
			checkDocs(t, "archived", sn, want)
			if h, _ := sn.SearchVector(docs[3].Vector, 5, nil); len(h) != 0 {
				t.Fatalf("hot+warm search found %d archived docs", len(h))
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for qi := 0; qi < 20; qi++ {
				q := make([]float32, o.Dim)
				for j := range q {
					q[j] = float32(rng.NormFloat64())
				}
				var filter func(*Document) bool
				if qi%2 == 1 {
					filter = func(d *Document) bool { return d.Metadata["lang"] == "go" }
				}
				got, err := sn.SearchCold(q, 10, 100, filter) // k·kFactor ≥ n: exact
				if err != nil {
					t.Fatal(err)
				}
				if metric == L2 {
					if ref := bruteForce(want, q, 10, filter); !slices.Equal(hitIDs(got), ref) {
						t.Fatalf("query %d: cold %v, brute force %v", qi, hitIDs(got), ref)
					}
				} else if len(got) != 10 {
					t.Fatalf("query %d: %d cold hits", qi, len(got))
				}
				for _, h := range got {
					if filter != nil && !filter(h.Doc) {
						t.Fatalf("filtered doc %s returned", h.Doc.ID)
					}
				}
			}
			sn.Close()
			// Deletes and upserts after the archive hide the cold rows.
			var del Batch
			for _, id := range []string{"doc-0003", "doc-0010", "doc-0250"} {
				del.Delete(id)
				delete(want, id)
			}
			upd := want["doc-0020"]
			upd.Content = "rewritten after archive"
			del.Upsert(upd)
			want["doc-0020"] = upd
			if _, err := s.Apply(&del); err != nil {
				t.Fatal(err)
			}
			check := func(label string) {
				sn := s.Snapshot()
				defer sn.Close()
				checkDocs(t, label, sn, want)
				for _, id := range []string{"doc-0003", "doc-0010", "doc-0250"} {
					h, err := sn.SearchCold(docs[idNum(id)].Vector, 400, 4, nil)
					if err != nil {
						t.Fatal(err)
					}
					if slices.Contains(hitIDs(h), id) {
						t.Fatalf("%s: deleted %s found by cold search", label, id)
					}
				}
				h, _ := sn.SearchCold(docs[20].Vector, 400, 4, nil)
				if slices.Contains(hitIDs(h), "doc-0020") {
					t.Fatalf("%s: replaced cold version of doc-0020 found", label)
				}
			}
			check("after deletes")
			if err := s.Flush(context.Background()); err != nil { // persists the cold tombstones
				t.Fatal(err)
			}
			check("after flush")
			s.Close()
			if s, err = Open(o); err != nil {
				t.Fatal(err)
			}
			check("after reopen")
			var prog []int
			if _, err := s.Promote(context.Background(), aid, func(d, n int) { prog = append(prog, d) }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(prog, []int{1, 2, 3, 4}) || len(s.Archives()) != 0 {
				t.Fatalf("progress %v, archives %v", prog, s.Archives())
			}
			check("after promote")
			sn = s.Snapshot()
			if h, _ := sn.SearchVector(docs[30].Vector, 1, nil); len(h) != 1 || h[0].Doc.ID != "doc-0030" {
				t.Fatalf("warm search after promote: %v", hitIDs(h))
			}
			sn.Close()
			names, _ := mem.List(o.Dir)
			for _, n := range names {
				if isColdFile(n) {
					t.Fatalf("archive file %s left after promote", n)
				}
			}
			s.Close()
			if s, err = Open(o); err != nil {
				t.Fatal(err)
			}
			check("promoted, reopened")
		})
	}
}

func idNum(id string) int {
	var n int
	fmt.Sscanf(strings.TrimPrefix(id, "doc-"), "%d", &n)
	return n
}

// TestColdOmitVectors: without the vector column, cold search ranks by
// the codes' reconstructions and Promote restores them (lossy, documented).
func TestColdOmitVectors(t *testing.T) {
	o := testOptions(vfs.NewCrashableMem())
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	docs := coldDocs(300, 9, o.Dim)
	applyDocs(t, s, docs)
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Archive(context.Background(), ArchiveOptions{OmitVectors: true}); err != nil {
		t.Fatal(err)
	}
	sn := s.Snapshot()
	defer sn.Close()
	d, _, ok := sn.Get("doc-0005")
	if !ok || len(d.Vector) != o.Dim || d.Content != docs[5].Content {
		t.Fatalf("Get: %v %+v", ok, d)
	}
	// Recall@10 of the reconstructions against exact brute force.
	want := map[string]Document{}
	for _, d := range docs {
		want[d.ID] = d
	}
	rng := rand.New(rand.NewPCG(5, 5))
	found, total := 0, 0
	for qi := 0; qi < 20; qi++ {
		q := make([]float32, o.Dim)
		for j := range q {
			q[j] = float32(rng.NormFloat64())
		}
		h, err := sn.SearchCold(q, 10, 4, nil)
		if err != nil {
			t.Fatal(err)
		}
		ref := bruteForce(want, q, 10, nil)
		for _, id := range ref {
			total++
			if slices.Contains(hitIDs(h), id) {
				found++
			}
		}
	}
	if r := float64(found) / float64(total); r < 0.7 {
		t.Fatalf("recall@10 from codes alone %.3f < 0.7", r)
	} else {
		t.Logf("recall@10 from 18-byte codes alone (dim %d): %.3f", o.Dim, r)
	}
}

// archiveBytes returns a valid archive file's bytes (fuzz seed).
func archiveBytes(t testing.TB, n int, omit bool) []byte {
	docs := coldDocs(n, 11, testDim)
	rows := make([]segRow, len(docs))
	for i := range docs {
		rows[i] = segRow{doc: &docs[i], birth: uint64(i + 1)}
	}
	var buf bytes.Buffer
	if err := buildArchive(&buf, rows, testDim, L2, ArchiveOptions{OmitVectors: omit}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzOpenArchive: any bytes give an archive or an ErrCorrupt error
// naming the file, never a panic.
func FuzzOpenArchive(f *testing.F) {
	good := archiveBytes(f, 20, false)
	f.Add(good)
	f.Add(archiveBytes(f, 3, true))
	f.Add(good[:len(good)/2])
	f.Add([]byte("PAR1"))
	for _, off := range []int{4, 100, len(good) / 2, len(good) - 20, len(good) - 9} {
		b := bytes.Clone(good)
		b[off] ^= 0x5a
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := openArchive(data, "/fuzz/cold.parquet", testDim, L2)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "/fuzz/cold.parquet") {
				t.Fatalf("error %v: not ErrCorrupt with the path", err)
			}
			return
		}
		if uint64(len(a.docs)) != a.meta.Rows {
			t.Fatalf("%d docs, %d rows", len(a.docs), a.meta.Rows)
		}
	})
}

// TestOpenArchiveMutations is a deterministic mutation campaign over a
// valid archive (byte flips, 0xff runs, large 32-bit values, insertions,
// deletions, footer damage): every result is a decoded archive or an
// ErrCorrupt error naming the file; no panic, no runaway allocation
// (checkParquetFooter guards parquet-go's Thrift decoder).
func TestOpenArchiveMutations(t *testing.T) {
	good := archiveBytes(t, 20, false)
	rng := rand.New(rand.NewPCG(1, 1))
	n := 3000
	if testing.Short() {
		n = 300
	}
	rejected := 0
	for i := 0; i < n; i++ {
		b := bytes.Clone(good)
		for j := 0; j < 1+rng.IntN(3); j++ {
			switch rng.IntN(7) {
			case 4:
				p := rng.IntN(len(b))
				b = append(b[:p], b[min(len(b), p+1+rng.IntN(8)):]...)
			case 5:
				p := rng.IntN(len(b))
				ins := make([]byte, 1+rng.IntN(8))
				for k := range ins {
					ins[k] = byte(rng.IntN(256))
				}
				b = append(b[:p], append(ins, b[p:]...)...)
			case 6:
				p := rng.IntN(len(b) - 4)
				v := []uint32{0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 0x10000, 65535, 256}[rng.IntN(8)]
				b[p], b[p+1], b[p+2], b[p+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
			case 0:
				b[rng.IntN(len(b))] = byte(rng.IntN(256))
			case 1:
				p := rng.IntN(len(b) - 8)
				for k := 0; k < 8; k++ {
					b[p+k] = 0xff
				}
			case 2:
				p := rng.IntN(len(b) - 4)
				b[p], b[p+1], b[p+2], b[p+3] = 0xff, 0xff, 0xff, 0x7f
			case 3:
				p := len(b) - 8 - rng.IntN(min(len(b)-8, 3000))
				b[p] = byte(rng.IntN(256))
			}
		}
		a, err := openArchive(b, "/m/cold.parquet", testDim, L2)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "/m/cold.parquet") {
				t.Fatalf("mutation %d: error %v is not ErrCorrupt with the path", i, err)
			}
			rejected++
			continue
		}
		if uint64(len(a.docs)) != a.meta.Rows {
			t.Fatalf("mutation %d: %d docs, %d rows", i, len(a.docs), a.meta.Rows)
		}
	}
	t.Logf("%d of %d mutated archives rejected as corrupt, the rest decoded", rejected, n)
	if rejected < n/2 {
		t.Fatalf("only %d of %d mutations rejected", rejected, n)
	}
}

// TestCrashWithArchiveAndPromote: the randomised crash test (seeded
// workload, crash at a random file-system operation on the crashable FS
// keeping torn unsynced tails at random, reopen, compare with the model)
// with flushes, archives and promotes interleaved, so crashes land inside
// Parquet writes, renames, manifest edits and archive-file deletion. Every
// acknowledged write must be present exactly once at its latest version,
// including deletes of archived ids (cold tombstones) — nothing lost or
// duplicated. 60 seeded iterations, 6 under -short, 3 under -race -short.
func TestCrashWithArchiveAndPromote(t *testing.T) {
	iters := 60
	if testing.Short() {
		iters = 6
		if raceEnabled {
			iters = 3
		}
	}
	archived, promoted := 0, 0
	maint := func(s *Store, i uint64) error {
		if i%3 == 0 {
			if err := s.Flush(bg); err != nil {
				return err
			}
		}
		if i%5 == 0 && len(s.WarmSegments()) > 0 {
			// A cheap codec (crash safety, not code quality, is tested).
			if _, err := s.Archive(bg, ArchiveOptions{Oldest: 2, Seed: i, Nlist: 1, KMeansIters: 1}); err != nil {
				return err
			}
			archived++
		}
		if as := s.Archives(); i%13 == 0 && len(as) > 0 {
			if _, err := s.Promote(bg, as[0].ID, nil); err != nil {
				return err
			}
			promoted++
		}
		return nil
	}
	st, err := runCrashTestMaint(iters, nil, maint, 12)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d iterations, %d archives, %d promotes, unsynced data dropped in %d rounds", st.iters, archived, promoted, st.dropped)
	if st.dropped < st.iters/4 || archived == 0 || promoted == 0 {
		t.Fatalf("vacuous: dropped in %d rounds, %d archives, %d promotes", st.dropped, archived, promoted)
	}
}

// TestStorageAmplification logs bytes per vector and α_storage per tier
// (issue 7's storage figures) for 4,000 archived, 2,000 warm and 1,000 hot
// documents of dimension 128 (fewer with -short), and checks (full run)
// that a codes-only archive is well under a third of warm per vector.
func TestStorageAmplification(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 150
	}
	for _, omit := range []bool{false, true} {
		o := testOptions(vfs.NewCrashableMem())
		o.Dim = 128
		s, err := Open(o)
		if err != nil {
			t.Fatal(err)
		}
		docs := coldDocs(3*n, 21, o.Dim)
		applyDocs(t, s, docs[:2*n])
		if err := s.Flush(bg); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Archive(bg, ArchiveOptions{Oldest: 1, OmitVectors: omit}); err != nil {
			t.Fatal(err)
		}
		applyDocs(t, s, docs[2*n:])
		if err := s.Flush(bg); err != nil {
			t.Fatal(err)
		}
		applyDocs(t, s, docs[:n/2]) // a hot tier too (new versions)
		sn := s.Snapshot()
		st := sn.StorageStats()
		sn.Close()
		for _, ts := range st {
			t.Logf("vectors omitted from cold=%v: %-4s rows %5d vectors %5d bytes %9d  bytes/vector %8.1f  α_storage %6.2f",
				omit, ts.Tier, ts.Rows, ts.Vectors, ts.Bytes, ts.BytesPerVector(), ts.Alpha())
		}
		// The codec (PQ codebooks 16·256·(d/16) floats + coarse centroids)
		// is amortised only over enough vectors: checked in the full run.
		if omit && !testing.Short() && !(st[2].BytesPerVector() < st[1].BytesPerVector()/3) {
			t.Fatalf("cold %.1f bytes/vector not well below warm %.1f", st[2].BytesPerVector(), st[1].BytesPerVector())
		}
		s.Close()
	}
}

// TestArchivePromoteFaultInjection fails the archive file's (or, for
// promote, the new segment file's) create, write, sync, rename or the
// directory sync: Archive / Promote report the injected error, the store
// is unchanged and writable, a retry succeeds, and a crash + reopen is
// clean with every acknowledged write present.
func TestArchivePromoteFaultInjection(t *testing.T) {
	kinds := []errorfs.OpKind{errorfs.OpCreate, errorfs.OpWrite, errorfs.OpSync, errorfs.OpRename, errorfs.OpSyncDir}
	for _, promote := range []bool{false, true} {
		for _, kind := range kinds {
			name := "archive/" + kind.String()
			if promote {
				name = "promote/" + kind.String()
			}
			t.Run(name, func(t *testing.T) {
				mem := vfs.NewCrashableMem()
				var mu sync.Mutex
				on, target := false, "cold-"
				if promote {
					target = "seg-"
				}
				inj := errorfs.InjectorFunc{Name: name, Fn: func(op errorfs.Op) error {
					mu.Lock()
					defer mu.Unlock()
					if on && op.Kind == kind && (kind == errorfs.OpSyncDir || strings.Contains(op.Path, target)) {
						on = false
						return errorfs.ErrInjected
					}
					return nil
				}}
				o := testOptions(errorfs.Wrap(mem, inj))
				s, err := Open(o)
				if err != nil {
					t.Fatal(err)
				}
				const seed = 19
				m := model{}
				for i := uint64(1); i <= 40; i++ {
					b := genBatch(seed, i)
					if _, err := s.Apply(b); err != nil {
						t.Fatal(err)
					}
					m.apply(b)
					if i%20 == 0 {
						if err := s.Flush(bg); err != nil {
							t.Fatal(err)
						}
					}
				}
				var aid uint64
				if promote {
					if aid, err = s.Archive(bg, ArchiveOptions{KMeansIters: 1}); err != nil {
						t.Fatal(err)
					}
				}
				mu.Lock()
				on = true
				mu.Unlock()
				if promote {
					_, err = s.Promote(bg, aid, nil)
				} else {
					_, err = s.Archive(bg, ArchiveOptions{KMeansIters: 1})
				}
				if !errors.Is(err, errorfs.ErrInjected) {
					t.Fatalf("error %v, want the injected error", err)
				}
				sn := s.Snapshot()
				if d := checkAgainst(sn, m); d != "" {
					t.Fatalf("after the failure: %s", d)
				}
				sn.Close()
				b := genBatch(seed, 41)
				if _, err := s.Apply(b); err != nil {
					t.Fatalf("store not writable: %v", err)
				}
				m.apply(b)
				if promote {
					_, err = s.Promote(bg, aid, nil)
				} else {
					_, err = s.Archive(bg, ArchiveOptions{KMeansIters: 1})
				}
				if err != nil {
					t.Fatalf("retry: %v", err)
				}
				if err := s.Flush(bg); err != nil {
					t.Fatal(err)
				}
				s.Close()
				o.FS = mem.CrashClone()
				s, err = Open(o)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				sn = s.Snapshot()
				defer sn.Close()
				if d := checkAgainst(sn, m); d != "" {
					t.Fatalf("after reopen: %s", d)
				}
				names, _ := mem.CrashClone().List(o.Dir)
				files := 0
				for _, n := range names {
					if isColdFile(n) {
						files++
					}
				}
				if files != len(s.Archives()) {
					t.Fatalf("archive files %v, manifest lists %d", names, len(s.Archives()))
				}
			})
		}
	}
}

// TestArchiveManifestAndCorruptFile: archive edits round-trip through
// the manifest encoding (version 3), and a damaged archive file is
// refused at Open with ErrCorrupt naming it (the manifest's CRC32C is
// checked before parsing).
func TestArchiveManifestAndCorruptFile(t *testing.T) {
	e := Edit{DurableEpoch: 9, NextSegmentID: 5, AddArchives: []ArchiveMeta{{ID: 4, File: "cold-000004.parquet", MinEpoch: 1,
		MaxEpoch: 8, Rows: 7, SizeBytes: 1234, CRC32C: 0xdeadbeef}}, RemoveArchives: []uint64{2},
		Tombstones: []Tombstone{{Segment: 4, Row: 6, Death: 9}}}
	got, err := decodeEdit(encodeEdit(e))
	if err != nil || fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", e) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	mem := vfs.NewCrashableMem()
	o := testOptions(mem)
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	applyDocs(t, s, coldDocs(100, 1, o.Dim))
	if err := s.Flush(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Archive(bg, ArchiveOptions{}); err != nil {
		t.Fatal(err)
	}
	var del Batch
	del.Delete("doc-0042")
	s.Apply(&del)
	s.Flush(bg)
	file := filepath.Join(o.Dir, s.Archives()[0].File)
	s.Close()
	s, err = Open(o) // clean reopen: the tombstone names the archive
	if err != nil {
		t.Fatal(err)
	}
	sn := s.Snapshot()
	if _, _, ok := sn.Get("doc-0042"); ok {
		t.Fatal("deleted cold row visible after reopen")
	}
	sn.Close()
	s.Close()
	f, _ := mem.OpenReadWrite(file)
	data, _ := io.ReadAll(f)
	f.Close()
	data[len(data)/2] ^= 1
	w, _ := mem.Create(file)
	w.Write(data)
	w.Sync()
	w.Close()
	if _, err := Open(o); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), file) {
		t.Fatalf("open with a damaged archive: %v", err)
	}
}

// TestCrashDuringArchiveAndPromote crashes (CrashClone of the crashable
// FS, unsynced tails kept or torn at random) at every k-th file-system
// operation of one Archive — and of one Promote — call, k drawn over the
// whole call, then reopens the crash image: it must open cleanly and hold
// exactly the acknowledged state (no document lost, duplicated or
// resurrected), with the archive (or promoted segment) either fully there
// or not at all; a later delete of an archived id, a flush and a reopen
// stay consistent. Both outcomes (before and after the manifest edit)
// must occur.
func TestCrashDuringArchiveAndPromote(t *testing.T) {
	iters := 24
	if testing.Short() {
		iters = 8
	}
	for _, promote := range []bool{false, true} {
		name := "archive"
		if promote {
			name = "promote"
		}
		t.Run(name, func(t *testing.T) {
			const seed = 23
			setup := func(inj errorfs.Injector, mem *vfs.MemFS) (*Store, model, uint64) {
				o := testOptions(errorfs.Wrap(mem, inj))
				s, err := Open(o)
				if err != nil {
					t.Fatal(err)
				}
				m := model{}
				for i := uint64(1); i <= 60; i++ {
					b := genBatch(seed, i)
					if _, err := s.Apply(b); err != nil {
						t.Fatal(err)
					}
					m.apply(b)
					if i%20 == 0 {
						if err := s.Flush(bg); err != nil {
							t.Fatal(err)
						}
					}
				}
				var aid uint64
				if promote {
					if aid, err = s.Archive(bg, ArchiveOptions{Oldest: 2, KMeansIters: 1}); err != nil {
						t.Fatal(err)
					}
				}
				return s, m, aid
			}
			run := func(s *Store, aid uint64) {
				var err error
				if promote {
					_, err = s.Promote(bg, aid, nil)
				} else {
					_, err = s.Archive(bg, ArchiveOptions{Oldest: 2, KMeansIters: 1})
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			// Count the operations of one call.
			var armed atomic.Bool
			var ops atomic.Int64
			count := errorfs.InjectorFunc{Name: "count", Fn: func(errorfs.Op) error {
				if armed.Load() {
					ops.Add(1)
				}
				return nil
			}}
			s, _, aid := setup(count, vfs.NewCrashableMem())
			armed.Store(true)
			run(s, aid)
			s.Close()
			total := ops.Load()
			rng := rand.New(rand.NewPCG(seed, 7))
			outcomes := map[bool]int{}
			for it := 0; it < iters; it++ {
				crashAt := int64(rng.IntN(int(total) + 1))
				mem := vfs.NewCrashableMem()
				var image *vfs.MemFS
				var n atomic.Int64
				var on atomic.Bool
				inj := errorfs.InjectorFunc{Name: "crash", Fn: func(errorfs.Op) error {
					if on.Load() && n.Add(1)-1 == crashAt && image == nil {
						image = mem.CrashCloneWith(vfs.CrashOptions{Rand: rng})
					}
					return nil
				}}
				s, m, aid := setup(inj, mem)
				on.Store(true)
				run(s, aid)
				s.Close()
				if image == nil {
					image = mem.CrashClone()
				}
				o := testOptions(image)
				r, err := Open(o)
				if err != nil {
					t.Fatalf("crash at op %d of %d: reopen: %v", crashAt, total, err)
				}
				sn := r.Snapshot()
				if d := checkAgainst(sn, m); d != "" {
					t.Fatalf("crash at op %d of %d: %s", crashAt, total, d)
				}
				sn.Close()
				done := len(r.Archives()) == 1
				if promote {
					done = len(r.Archives()) == 0
				}
				outcomes[done]++
				// Later writes reach the archived rows, durably.
				var del Batch
				for id := range m {
					del.Delete(id)
					delete(m, id)
					break
				}
				if _, err := r.Apply(&del); err != nil {
					t.Fatal(err)
				}
				if err := r.Flush(bg); err != nil {
					t.Fatal(err)
				}
				r.Close()
				if r, err = Open(o); err != nil {
					t.Fatal(err)
				}
				sn = r.Snapshot()
				if d := checkAgainst(sn, m); d != "" {
					t.Fatalf("crash at op %d: after delete+flush+reopen: %s", crashAt, d)
				}
				sn.Close()
				r.Close()
			}
			t.Logf("%d crash points over %d operations: %d before the manifest edit, %d after", iters, total, outcomes[false], outcomes[true])
			if outcomes[false] == 0 || outcomes[true] == 0 {
				t.Fatalf("outcomes %v: both sides of the manifest edit must be hit", outcomes)
			}
		})
	}
}
