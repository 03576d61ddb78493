package tier

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stratasearch/strata/vfs"
)

// growBatch is batch i of a growing workload: 20 new ids, plus an upsert
// of an older id and (every third batch) a delete of one.
func growBatch(rng *rand.Rand, i int) *Batch {
	b := &Batch{}
	for j := 0; j < 20; j++ {
		id := fmt.Sprintf("g%06d", i*20+j)
		b.Upsert(Document{ID: id, Content: fmt.Sprintf("%s body %d", id, rng.IntN(1000)), Namespace: "t/",
			ACL: []string{"alice"}, Metadata: map[string]string{"batch": fmt.Sprint(i)}, UpdatedUnixNano: int64(i + 1)})
	}
	if i > 0 {
		old := fmt.Sprintf("g%06d", rng.IntN(i*20))
		if i%3 == 0 {
			b.Delete(old)
		} else {
			b.Upsert(Document{ID: old, Content: "rewritten " + old, Namespace: "t/", ACL: []string{"alice"},
				Metadata: map[string]string{"batch": fmt.Sprint(i)}, UpdatedUnixNano: int64(i + 1)})
		}
	}
	return b
}

// TestIncrementalCompaction: flushes every four batches and background
// merges under a growing workload. Every merge takes at most CompactFanIn segments, the
// rows merges rewrite stay within the size-tiered bound (each row about
// log_F(N / flush) times), the segment count stays bounded, and the store
// matches the model throughout and after a reopen.
func TestIncrementalCompaction(t *testing.T) {
	batches := 1500
	if testing.Short() {
		batches = 600
	}
	o := testOptions(vfs.NewCrashableMem())
	o.AutoCompact = true
	o.CompactMaxSegments = 3
	o.CompactFanIn = 4
	o.StopSegments = -1 // no backpressure: merges must keep up on their own
	s := mustOpen(t, o)
	rng := rand.New(rand.NewPCG(31, 4))
	m := model{}
	rows, maxSegs := 0, 0
	for i := 0; i < batches; i++ {
		b := growBatch(rng, i)
		if _, err := s.Apply(b); err != nil {
			t.Fatal(err)
		}
		m.apply(b)
		rows += len(b.Ops)
		if i%4 == 3 {
			if err := s.Flush(bg); err != nil {
				t.Fatal(err)
			}
			s.kickCompact() // as a background flush does
		}
		maxSegs = max(maxSegs, len(s.WarmSegments()))
		if i%100 == 99 {
			sn := s.Snapshot()
			if d := checkAgainst(sn, m); d != "" {
				t.Fatalf("batch %d: %s", i, d)
			}
			sn.Close()
		}
	}
	flushes, merges := s.flushes.Load(), s.compactions.Load()
	merged, fan := s.mergedRows.Load(), s.maxMergeInputs.Load()
	t.Logf("%d rows written, %d flushes, %d merges rewrote %d rows (%.2f per row), max fan-in %d, max %d segments, %d now",
		rows, flushes, merges, merged, float64(merged)/float64(rows), fan, maxSegs, len(s.WarmSegments()))
	if flushes < int64(batches/4) || merges < 5 {
		t.Fatalf("%d flushes, %d merges: the workload did not exercise compaction", flushes, merges)
	}
	if fan > int64(o.CompactFanIn) {
		t.Fatalf("a merge took %d segments, CompactFanIn %d", fan, o.CompactFanIn)
	}
	// Size-tiered: a row is rewritten once per tier it climbs; allow
	// log_F(flushes) + 3: the floor tier, a partial top, and the merges
	// that bring the count back under CompactMaxSegments when flushes
	// outrun the two background lanes (a loaded machine, -race: 4.5–5.8
	// rewrites per row measured, against log_4(150) = 3.6).
	if bound := (math.Log(float64(flushes))/math.Log(float64(o.CompactFanIn)) + 3) * float64(rows); float64(merged) > bound {
		t.Fatalf("merges rewrote %d rows, size-tiered bound %.0f", merged, bound)
	}
	if maxSegs > 40 {
		t.Fatalf("segment count reached %d", maxSegs)
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
}

// TestCompactFanInExplicit: Store.Compact reaches CompactMaxSegments in
// merges of at most CompactFanIn segments each.
func TestCompactFanInExplicit(t *testing.T) {
	o := testOptions(vfs.NewCrashableMem())
	o.CompactMaxSegments = 1
	o.CompactFanIn = 2
	s := mustOpen(t, o)
	defer s.Close()
	rng := rand.New(rand.NewPCG(3, 3))
	m := model{}
	for i := 0; i < 5; i++ {
		b := growBatch(rng, i)
		if _, err := s.Apply(b); err != nil {
			t.Fatal(err)
		}
		m.apply(b)
		if err := s.Flush(bg); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Compact(bg); err != nil {
		t.Fatal(err)
	}
	if n, c, fan := len(s.WarmSegments()), s.Compactions(), s.maxMergeInputs.Load(); n != 1 || c != 4 || fan != 2 {
		t.Fatalf("%d segments after %d merges of at most %d: want 1 after 4 merges of 2", n, c, fan)
	}
	sn := s.Snapshot()
	defer sn.Close()
	if d := checkAgainst(sn, m); d != "" {
		t.Fatal(d)
	}
}

// TestCompactDeadFractionSingle: a segment whose dead fraction exceeds
// θ_compact is rewritten alone; the other segments keep their files.
func TestCompactDeadFractionSingle(t *testing.T) {
	o := testOptions(vfs.NewCrashableMem())
	s := mustOpen(t, o)
	defer s.Close()
	rng := rand.New(rand.NewPCG(5, 5))
	m := model{}
	for i := 0; i < 3; i++ {
		b := growBatch(rng, i*1000) // ids of batch i do not overlap
		b.Ops = b.Ops[:20]
		if _, err := s.Apply(b); err != nil {
			t.Fatal(err)
		}
		m.apply(b)
		if err := s.Flush(bg); err != nil {
			t.Fatal(err)
		}
	}
	before := s.WarmSegments()
	del := &Batch{}
	for j := 0; j < 8; j++ { // 8 of segment 2's 20 rows: ρ_dead 0.4 > 0.2
		del.Delete(fmt.Sprintf("g%06d", 1000*20+j))
	}
	if _, err := s.Apply(del); err != nil {
		t.Fatal(err)
	}
	m.apply(del)
	if err := s.Compact(bg); err != nil {
		t.Fatal(err)
	}
	after := s.WarmSegments()
	if s.Compactions() != 1 || len(after) != 3 || after[0] != before[0] || after[1] != before[2] || after[2].Rows != 12 {
		t.Fatalf("segments %+v → %+v after %d compactions: want only the second rewritten, with 12 rows", before, after, s.Compactions())
	}
	sn := s.Snapshot()
	defer sn.Close()
	if d := checkAgainst(sn, m); d != "" {
		t.Fatal(d)
	}
}
