package wal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratasearch/strata/vfs"
	"github.com/stratasearch/strata/vfs/errorfs"
)

func payloadFor(seq uint64) []byte {
	n := int(seq*7919) % 300
	return bytes.Repeat([]byte{byte(seq)}, n+1)
}

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *logBuf) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func testOpts(fs vfs.FS) (Options, *logBuf) {
	lb := &logBuf{}
	return Options{FS: fs, Dir: "/db/wal", Logger: slog.New(slog.NewTextHandler(lb, nil))}, lb
}

func collect(t *testing.T, o Options, after uint64) (*WAL, []uint64, error) {
	t.Helper()
	var seqs []uint64
	w, err := Open(o, after, func(seq uint64, p []byte) error {
		if !bytes.Equal(p, payloadFor(seq)) {
			return fmt.Errorf("payload mismatch at seq %d", seq)
		}
		seqs = append(seqs, seq)
		return nil
	})
	return w, seqs, err
}

func appendN(t *testing.T, w *WAL, n int) uint64 {
	t.Helper()
	var last uint64
	for i := 0; i < n; i++ {
		seq := w.LastSeq() + 1
		got, err := w.Append(payloadFor(seq))
		if err != nil {
			t.Fatal(err)
		}
		if got != seq {
			t.Fatalf("seq %d, want %d", got, seq)
		}
		last = got
	}
	return last
}

func checkSeqs(t *testing.T, got []uint64, from, to uint64) {
	t.Helper()
	if uint64(len(got)) != to-from+1 && !(to < from && len(got) == 0) {
		t.Fatalf("replayed %d records, want %d..%d (%v)", len(got), from, to, got)
	}
	for i, s := range got {
		if s != from+uint64(i) {
			t.Fatalf("replay[%d] = %d, want %d", i, s, from+uint64(i))
		}
	}
}

func TestRoundTripAndRotation(t *testing.T) {
	m := vfs.NewCrashableMem()
	o, _ := testOpts(m)
	o.SegmentSizeBytes = 1000
	w, seqs, err := collect(t, o, 0)
	if err != nil || len(seqs) != 0 {
		t.Fatal(err, seqs)
	}
	appendN(t, w, 100)
	if n := len(w.Segments()); n < 10 {
		t.Fatalf("only %d segments with 1000-byte segments", n)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Synced at every ack: the crash clone has everything.
	w, seqs, err = collect(t, o, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkSeqs(t, seqs, 1, 100)
	appendN(t, w, 5)
	segsBefore := w.Segments()
	if err := w.TruncateBefore(50); err != nil {
		t.Fatal(err)
	}
	segsAfter := w.Segments()
	if len(segsAfter) >= len(segsBefore) {
		t.Fatalf("TruncateBefore removed nothing: %v", segsAfter)
	}
	first, _ := parseSegName(segsAfter[0])
	if first > 50 {
		t.Fatalf("removed a segment holding seq >= 50: oldest now starts at %d", first)
	}
	if len(segsAfter) > 1 {
		second, _ := parseSegName(segsAfter[1])
		if second <= 50 {
			t.Fatalf("kept a removable segment: %v", segsAfter)
		}
	}
	names, _ := m.List("/db/wal")
	if len(names) != len(segsAfter) {
		t.Fatalf("files %v vs segments %v", names, segsAfter)
	}
	w.Close()
	_, seqs, err = collect(t, o, 49)
	if err != nil {
		t.Fatal(err)
	}
	checkSeqs(t, seqs, 50, 105)
	// Asking for records that were deleted is an error, not silent loss.
	if _, _, err := collect(t, o, 10); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("replay from a deleted range: %v", err)
	}
}

func lastSegment(t *testing.T, m *vfs.MemFS) string {
	names, err := m.List("/db/wal")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	return "/db/wal/" + names[len(names)-1]
}

func fileBytes(t *testing.T, fs vfs.FS, name string) []byte {
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	return b
}

func rewrite(t *testing.T, fs vfs.FS, name string, data []byte) {
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(data)
	f.Sync()
	f.Close()
}

// writeOneSegment writes n records into a single segment and returns its
// path and the record offsets.
func writeOneSegment(t *testing.T, m *vfs.MemFS, n int) (string, []int) {
	o, _ := testOpts(m)
	w, _, err := collect(t, o, 0)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, w, n)
	w.Close()
	name := lastSegment(t, m)
	var offs []int
	for _, sp := range recordSpans(t, fileBytes(t, m, name), 1) {
		offs = append(offs, sp[0])
	}
	if len(offs) != n {
		t.Fatalf("segment holds %d records, want %d", len(offs), n)
	}
	return name, offs
}

// recordSpans returns the [offset, end) of every write record of a
// segment (sync marks between them excluded).
func recordSpans(t *testing.T, data []byte, firstSeq uint64) [][2]int {
	t.Helper()
	var out [][2]int
	if _, err := Scan(data, "x", firstSeq, func(r Record) error {
		out = append(out, [2]int{int(r.Offset), int(r.Offset) + HeaderSize + len(r.Payload)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTornTailTruncated(t *testing.T) {
	for cut := 1; cut < 40; cut += 3 {
		m := vfs.NewCrashableMem()
		name, offs := writeOneSegment(t, m, 5)
		data := fileBytes(t, m, name)
		// Cut inside the last record.
		keep := offs[4] + cut
		if keep >= recordSpans(t, data, 1)[4][1] {
			continue
		}
		rewrite(t, m, name, data[:keep])
		o, lb := testOpts(m)
		w, seqs, err := collect(t, o, 0)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		checkSeqs(t, seqs, 1, 4)
		if !strings.Contains(lb.String(), "torn tail") {
			t.Fatalf("no warning logged: %q", lb.String())
		}
		if got := len(fileBytes(t, m, name)); got != offs[4] {
			t.Fatalf("file truncated to %d, want %d", got, offs[4])
		}
		// New records continue right after.
		if seq, err := w.Append(payloadFor(5)); err != nil || seq != 5 {
			t.Fatalf("append after recovery: %d %v", seq, err)
		}
		w.Close()
		_, seqs, err = collect(t, o, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkSeqs(t, seqs, 1, 5)
	}
}

func TestZeroFilledTailIsTorn(t *testing.T) {
	m := vfs.NewCrashableMem()
	name, _ := writeOneSegment(t, m, 5)
	data := fileBytes(t, m, name)
	rewrite(t, m, name, append(data, make([]byte, 4096)...))
	o, lb := testOpts(m)
	_, seqs, err := collect(t, o, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkSeqs(t, seqs, 1, 5)
	if !strings.Contains(lb.String(), "zero record type") {
		t.Fatalf("log: %q", lb.String())
	}
}

func TestMidFileCorruptionIsHardError(t *testing.T) {
	for _, what := range []string{"payload", "crc", "length", "type", "zeroed"} {
		m := vfs.NewCrashableMem()
		name, offs := writeOneSegment(t, m, 6)
		data := fileBytes(t, m, name)
		at := offs[2]
		switch what {
		case "payload":
			data[at+HeaderSize] ^= 0x40
		case "crc":
			data[at] ^= 1
		case "length":
			data[at+4] ^= 0x10
		case "type":
			data[at+8] = 0
		case "zeroed":
			for i := at; i < offs[3]; i++ {
				data[i] = 0
			}
		}
		rewrite(t, m, name, data)
		o, _ := testOpts(m)
		_, _, err := collect(t, o, 0)
		var ce *CorruptError
		if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) {
			t.Fatalf("%s: err = %v, want ErrCorrupt", what, err)
		}
		if ce.Path != name || ce.Offset != int64(at) {
			t.Fatalf("%s: corruption reported at %s:%d, want %s:%d", what, ce.Path, ce.Offset, name, at)
		}
		if !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), fmt.Sprint(at)) {
			t.Fatalf("%s: message lacks file/offset: %v", what, err)
		}
	}
}

func TestFsyncErrorIsSticky(t *testing.T) {
	for _, kind := range []errorfs.OpKind{errorfs.OpSync, errorfs.OpWrite} {
		m := vfs.NewCrashableMem()
		inj := errorfs.OnIndex(10, kind)
		o, _ := testOpts(errorfs.Wrap(m, inj))
		w, _, err := collect(t, o, 0)
		if err != nil {
			t.Fatal(err)
		}
		var acked []uint64
		var firstErr error
		for i := 0; i < 30; i++ {
			seq, err := w.Append(payloadFor(w.LastSeq() + 1))
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				if !errors.Is(err, ErrFailed) || !errors.Is(err, errorfs.ErrInjected) {
					t.Fatalf("%v: append error %v does not wrap ErrFailed and the cause", kind, err)
				}
				continue
			}
			if firstErr != nil {
				t.Fatalf("%v: append succeeded after a failure (retry-and-assume-success)", kind)
			}
			acked = append(acked, seq)
		}
		if firstErr == nil || !inj.Fired() {
			t.Fatalf("%v: injected error never surfaced", kind)
		}
		if w.Err() == nil || w.Sync() == nil {
			t.Fatalf("%v: Err/Sync do not report the sticky failure", kind)
		}
		if err := w.Close(); err == nil {
			t.Fatalf("%v: Close hid the failure", kind)
		}
		// Crash and reopen on the raw FS: every acknowledged record is there.
		c := m.CrashClone()
		oc, _ := testOpts(c)
		w2, seqs, err := collect(t, oc, 0)
		if err != nil {
			t.Fatalf("%v: reopen: %v", kind, err)
		}
		if len(seqs) < len(acked) {
			t.Fatalf("%v: acked %d records, recovered %d", kind, len(acked), len(seqs))
		}
		checkSeqs(t, seqs[:len(acked)], 1, uint64(len(acked)))
		if _, err := w2.Append(payloadFor(w2.LastSeq() + 1)); err != nil {
			t.Fatalf("%v: append after reopen: %v", kind, err)
		}
		w2.Close()
	}
}

func TestRotationFailureIsSticky(t *testing.T) {
	m := vfs.NewCrashableMem()
	o, _ := testOpts(errorfs.Wrap(m, errorfs.OnIndex(2, errorfs.OpCreate)))
	o.SegmentSizeBytes = 200
	w, _, err := collect(t, o, 0)
	if err != nil {
		t.Fatal(err)
	}
	var failed bool
	for i := 0; i < 50; i++ {
		if _, err := w.Append(payloadFor(w.LastSeq() + 1)); err != nil {
			failed = true
			break
		}
	}
	if !failed {
		t.Fatal("segment creation failure not reported")
	}
	if _, err := w.Append([]byte("x")); !errors.Is(err, ErrFailed) {
		t.Fatalf("after failure: %v", err)
	}
	w.Close()
}

func TestGroupCommit(t *testing.T) {
	m := vfs.NewCrashableMem()
	var syncs, writes int64
	var mu sync.Mutex
	inj := errorfs.InjectorFunc{Name: "slow-sync", Fn: func(op errorfs.Op) error {
		mu.Lock()
		switch op.Kind {
		case errorfs.OpSync:
			syncs++
		case errorfs.OpWrite:
			writes++
		}
		mu.Unlock()
		if op.Kind == errorfs.OpSync {
			time.Sleep(200 * time.Microsecond)
		}
		return nil
	}}
	o, _ := testOpts(errorfs.Wrap(m, inj))
	w, _, err := collect(t, o, 0)
	if err != nil {
		t.Fatal(err)
	}
	const writers, per = 8, 50
	var wg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if _, err := w.Append([]byte("group")); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	s, wr := syncs, writes
	mu.Unlock()
	// Each group commit is one write of its records, one fsync and one
	// write of the sync mark after it.
	if s >= writers*per/2 || wr > 2*s+2 {
		t.Fatalf("%d appends took %d writes and %d fsyncs: no group commit", writers*per, wr, s)
	}
	t.Logf("%d appends: %d writes, %d fsyncs", writers*per, wr, s)
	w.Close()
	c := m.CrashClone()
	oc, _ := testOpts(c)
	n := 0
	if _, err := Open(oc, 0, func(uint64, []byte) error { n++; return nil }); err != nil || n != writers*per {
		t.Fatalf("recovered %d records, err %v", n, err)
	}
}

func TestIntervalAndNonePolicies(t *testing.T) {
	for _, pol := range []SyncPolicy{SyncInterval, SyncNone} {
		m := vfs.NewCrashableMem()
		o, _ := testOpts(m)
		o.Sync = pol
		o.SyncInterval = time.Millisecond
		w, _, err := collect(t, o, 0)
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, w, 20)
		if pol == SyncInterval {
			deadline := time.Now().Add(5 * time.Second)
			for w.Synced() < 20 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if w.Synced() < 20 {
				t.Fatal("interval syncer never synced")
			}
		} else {
			if w.Synced() != 0 {
				t.Fatalf("SyncNone synced %d", w.Synced())
			}
			// Unsynced: a crash loses them, and that is the documented contract.
			_, seqs, err := collect(t, Options{FS: m.CrashClone(), Dir: o.Dir, Logger: o.Logger}, 0)
			if err != nil || len(seqs) != 0 {
				t.Fatalf("none: crash kept %d records (err %v)", len(seqs), err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		_, seqs, err := collect(t, Options{FS: m.CrashClone(), Dir: o.Dir, Logger: o.Logger}, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkSeqs(t, seqs, 1, 20)
	}
}

func TestOptionsValidate(t *testing.T) {
	o := Options{Sync: 9, SyncInterval: -1, SegmentSizeBytes: 3}
	err := o.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"Dir", "Sync", "SyncInterval", "SegmentSizeBytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate misses %s: %v", want, err)
		}
	}
	if _, err := ParseSyncPolicy("sometimes"); err == nil {
		t.Fatal("bad policy accepted")
	}
}

// TestCrashRandom appends from several goroutines and crashes at a random
// moment (torn unsynced tails kept at random), then checks every
// acknowledged record is recovered, in order, and Open succeeds.
func TestCrashRandom(t *testing.T) {
	iters := 100
	if testing.Short() {
		iters = 20
	}
	for it := 0; it < iters; it++ {
		rng := rand.New(rand.NewPCG(uint64(it), 7))
		m := vfs.NewCrashableMem()
		o, _ := testOpts(m)
		o.SegmentSizeBytes = int64(200 + rng.IntN(2000))
		w, _, err := collect(t, o, 0)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		acked := map[uint64]bool{}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := 0; g < 3; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					s, err := w.Append([]byte("x"))
					if err != nil {
						return
					}
					mu.Lock()
					acked[s] = true
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
		mu.Lock()
		snapshot := make(map[uint64]bool, len(acked))
		for k := range acked {
			snapshot[k] = true
		}
		c := m.CrashCloneWith(vfs.CrashOptions{Rand: rng})
		mu.Unlock()
		close(stop)
		wg.Wait()
		w.Close()
		oc, _ := testOpts(c)
		var got []uint64
		if _, err := Open(oc, 0, func(s uint64, _ []byte) error { got = append(got, s); return nil }); err != nil {
			t.Fatalf("iter %d: reopen: %v", it, err)
		}
		for i, s := range got {
			if s != uint64(i+1) {
				t.Fatalf("iter %d: gap in replay at %d: %d", it, i, s)
			}
		}
		for s := range snapshot {
			if s > uint64(len(got)) {
				t.Fatalf("iter %d: acked seq %d lost (recovered %d)", it, s, len(got))
			}
		}
	}
}

func TestSegmentNames(t *testing.T) {
	if s, ok := parseSegName(segName(0xabc)); !ok || s != 0xabc {
		t.Fatal(s, ok)
	}
	for _, bad := range []string{"wal-xyz.log", "wal-0000000000000001.txt", "MANIFEST"} {
		if _, ok := parseSegName(bad); ok {
			t.Fatal(bad)
		}
	}
}

// TestDamagedNonFinalSegment: damage inside an older segment, with records
// in later segments, is corruption (an error naming the file and offset)
// and must not truncate anything; a torn older segment followed only by
// empty segments is a torn tail.
func TestDamagedNonFinalSegment(t *testing.T) {
	m := vfs.NewCrashableMem()
	o, _ := testOpts(m)
	o.SegmentSizeBytes = 1000
	w, _, err := collect(t, o, 0)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, w, 60)
	segs := w.Segments()
	if len(segs) < 3 {
		t.Fatalf("want several segments, got %v", segs)
	}
	w.Close()
	first := filepath.Join("/db/wal", segs[0])
	data := fileBytes(t, m, first)
	// Cut the older segment short, inside a record: its own records give
	// no hint, only the later segments show this is not the tail.
	sp := recordSpans(t, data, 1)
	damaged := append([]byte(nil), data[:sp[len(sp)-1][1]-7]...)
	rewrite(t, m, first, damaged)
	_, _, err = collect(t, o, 0)
	var ce *CorruptError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || ce.Path != first {
		t.Fatalf("want a corruption error naming %s, got %v", first, err)
	}
	if got := len(fileBytes(t, m, first)); got != len(damaged) {
		t.Fatalf("damaged segment was truncated from %d to %d bytes", len(damaged), got)
	}

	// Same damage, but every later segment is empty: a torn tail.
	m2 := vfs.NewCrashableMem()
	o2, lb := testOpts(m2)
	o2.SegmentSizeBytes = 1 << 20
	w2, _, err := collect(t, o2, 0)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, w2, 10)
	seg := w2.Segments()[0]
	w2.Close()
	p := filepath.Join("/db/wal", seg)
	d2 := fileBytes(t, m2, p)
	sp2 := recordSpans(t, d2, 1)
	rewrite(t, m2, p, d2[:sp2[len(sp2)-1][1]-5])
	empty := filepath.Join("/db/wal", segName(11))
	f, err := m2.Create(empty)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	w2, seqs, err := collect(t, o2, 0)
	if err != nil {
		t.Fatalf("torn older segment before an empty one: %v", err)
	}
	checkSeqs(t, seqs, 1, 9)
	if !strings.Contains(lb.String(), "torn tail") {
		t.Fatalf("no torn-tail warning: %q", lb.String())
	}
	if seq, err := w2.Append(payloadFor(10)); err != nil || seq != 10 {
		t.Fatalf("append after recovery: %d %v", seq, err)
	}
	w2.Close()
}

// TestSyncedSeq: with SyncedSeq, damage to a synced record is a loss, not
// a torn tail; a log that ends before SyncedSeq, or lacks the ActiveSeq
// segment, is refused; Check agrees with Open and changes nothing;
// AcceptLoss opens over the loss and never reuses a sequence number.
// OnRotate reports every rotation.
func TestSyncedSeq(t *testing.T) {
	build := func(t *testing.T) (*vfs.MemFS, []string) {
		mem := vfs.NewCrashableMem()
		o, _ := testOpts(mem)
		o.SegmentSizeBytes = 1024
		var rotations []uint64
		o.OnRotate = func(first uint64) { rotations = append(rotations, first) }
		w, _, err := collect(t, o, 0)
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, w, 20)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		segs := w.Segments()
		if len(rotations) != len(segs)-1 {
			t.Fatalf("OnRotate called %d times for %d segments", len(rotations), len(segs))
		}
		for i, first := range rotations {
			if segName(first) != segs[i+1] {
				t.Fatalf("rotation %d reported first %d, segment %s", i, first, segs[i+1])
			}
		}
		return mem, segs
	}
	cutLast := func(t *testing.T, mem *vfs.MemFS, segs []string) string {
		p := filepath.Join("/db/wal", segs[len(segs)-1])
		b := readAll(t, mem, p)
		var first uint64
		fmt.Sscanf(segs[len(segs)-1], "wal-%x.log", &first)
		sp := recordSpans(t, b, first)
		f, _ := mem.OpenReadWrite(p)
		f.Truncate(int64(sp[len(sp)-1][1] - 3)) // inside the last record, before its sync mark
		f.Sync()
		f.Close()
		return p
	}
	t.Run("torn synced record", func(t *testing.T) {
		mem, segs := build(t)
		p := cutLast(t, mem, segs)
		o, _ := testOpts(mem)
		o.SyncedSeq = 20
		before := readAll(t, mem, p)
		if _, err := Check(o, 0, nil); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), p) {
			t.Fatalf("Check: %v", err)
		}
		if _, _, err := collect(t, o, 0); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), p) {
			t.Fatalf("Open: %v", err)
		}
		if !bytes.Equal(before, readAll(t, mem, p)) {
			t.Fatal("a refused Open changed the segment")
		}
		// Without the knowledge it is a torn tail.
		o.SyncedSeq = 19
		w, seqs, err := collect(t, o, 0)
		if err != nil || len(seqs) != 19 {
			t.Fatalf("torn tail after the synced point: %v, %d records", err, len(seqs))
		}
		w.Close()
	})
	t.Run("log ends early", func(t *testing.T) {
		mem, _ := build(t)
		o, _ := testOpts(mem)
		o.SyncedSeq = 25
		if _, _, err := collect(t, o, 0); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "through 25") {
			t.Fatalf("Open: %v", err)
		}
		var lb logBuf
		o.AcceptLoss, o.Logger = true, slog.New(slog.NewTextHandler(&lb, nil))
		w, seqs, err := collect(t, o, 0)
		if err != nil || len(seqs) != 20 || !strings.Contains(lb.String(), "lost") {
			t.Fatalf("AcceptLoss: %v, %d records, log %s", err, len(seqs), lb.String())
		}
		if got, err := w.Append([]byte("x")); err != nil || got != 26 {
			t.Fatalf("first append after AcceptLoss: seq %d, %v; want 26", got, err)
		}
		w.Close()
	})
	t.Run("active segment deleted", func(t *testing.T) {
		mem, segs := build(t)
		var first uint64
		fmt.Sscanf(segs[len(segs)-1], "wal-%x.log", &first)
		p := filepath.Join("/db/wal", segs[len(segs)-1])
		mem.Remove(p)
		o, _ := testOpts(mem)
		o.ActiveSeq = first
		if _, _, err := collect(t, o, 0); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), p) {
			t.Fatalf("Open: %v", err)
		}
	})
}

func readAll(t *testing.T, fs vfs.FS, p string) []byte {
	t.Helper()
	f, err := fs.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
