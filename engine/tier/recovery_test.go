package tier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/vfs"
)

const recoverySeed = 16

// logBuffer is a slog handler target that tests can read.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// recoveryOptions: small WAL segments, so a few hundred small batches
// rotate the WAL several times.
func recoveryOptions(fs vfs.FS, dir string) Options {
	o := testOptions(fs)
	o.Dir = dir
	o.WALSegmentSizeBytes = 2048
	return o
}

// buildRecoveryStore writes batches 1..140 of the recoverySeed workload:
// 1..40 flushed into a segment that is then archived (a cold Parquet
// file), 41..80 flushed into a warm segment, 81..140 only in the WAL
// (several rotated files). With closeStore the store is closed (the
// manifest then records every epoch as synced); otherwise it is left
// open, as a crash would leave it. It returns the number of acknowledged
// batches.
func buildRecoveryStore(t testing.TB, fs vfs.FS, dir string, closeStore bool) (*Store, uint64) {
	t.Helper()
	s, err := Open(recoveryOptions(fs, dir))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var e uint64
	write := func(to uint64) {
		for i := e + 1; i <= to; i++ {
			got, err := s.Apply(genBatch(recoverySeed, i))
			if err != nil || got != i {
				t.Fatalf("apply %d: epoch %d, %v", i, got, err)
			}
			e = i
		}
	}
	write(40)
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Archive(ctx, ArchiveOptions{Oldest: 1, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	write(80)
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	write(140)
	if closeStore {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return nil, e
	}
	return s, e
}

// snapshotFiles returns every file under dir (but LOCK) with its bytes.
func snapshotFiles(t testing.TB, fs vfs.FS, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	var walk func(d string)
	walk = func(d string) {
		names, err := fs.List(d)
		if err != nil {
			return
		}
		for _, n := range names {
			p := filepath.Join(d, n)
			st, err := fs.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if st.IsDir() {
				walk(p)
				continue
			}
			if n == "LOCK" {
				continue
			}
			b, err := readAllFile(fs, p)
			if err != nil {
				t.Fatal(err)
			}
			out[p] = b
		}
	}
	walk(dir)
	return out
}

// TestOpenKeepsDataWhenMetadataIsDamaged reproduces the startup that
// deleted the only copy of flushed data: with CURRENT removed, or the
// manifest's last byte flipped, Open must fail naming the damaged file,
// and every segment, archive and WAL file must still be there, unchanged.
func TestOpenKeepsDataWhenMetadataIsDamaged(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		damage     func(t *testing.T, dir string)
	}{
		{"remove CURRENT", "CURRENT", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "CURRENT")); err != nil {
				t.Fatal(err)
			}
		}},
		{"flip the manifest's last byte", "MANIFEST-000001", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "MANIFEST-000001")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)-1] ^= 0xff
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "db")
			buildRecoveryStore(t, vfs.Default, dir, true)
			if _, err := os.Stat(filepath.Join(dir, "seg-000003.sst")); err != nil {
				t.Fatalf("setup: %v", err)
			}
			walFiles, _ := os.ReadDir(filepath.Join(dir, "wal"))
			if len(walFiles) < 3 {
				t.Fatalf("setup: the WAL did not rotate (%d files)", len(walFiles))
			}
			tc.damage(t, dir)
			before := snapshotFiles(t, vfs.Default, dir)
			var lb logBuffer
			o := recoveryOptions(vfs.Default, dir)
			o.Logger = lb.logger()
			s, err := Open(o)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded over damaged metadata")
			}
			var ce *wal.CorruptError
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || !strings.Contains(err.Error(), filepath.Join(dir, tc.file)) ||
				!strings.Contains(err.Error(), "offset") {
				t.Fatalf("Open: %v; want a corruption error naming %s and an offset", err, tc.file)
			}
			after := snapshotFiles(t, vfs.Default, dir)
			if d := diffFiles(before, after); d != "" {
				t.Fatalf("a refused Open changed the store: %s\nlog:\n%s", d, lb.String())
			}
			if strings.Contains(lb.String(), "removing") {
				t.Fatalf("log mentions a removal:\n%s", lb.String())
			}
		})
	}
}

func diffFiles(before, after map[string][]byte) string {
	var d []string
	for p, b := range before {
		a, ok := after[p]
		switch {
		case !ok:
			d = append(d, "deleted "+p)
		case !bytes.Equal(a, b):
			d = append(d, fmt.Sprintf("changed %s (%d → %d bytes)", p, len(b), len(a)))
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			d = append(d, "created "+p)
		}
	}
	sort.Strings(d)
	return strings.Join(d, "; ")
}

// TestTruncatedWALIsRefused: a WAL truncated or deleted in a stopped store
// is corruption naming the file, never a silent loss; with AcceptWALLoss
// the store opens over the loss, but never hands out an epoch at or below
// one acknowledged before, and the next Open is clean.
func TestTruncatedWALIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, fs *vfs.MemFS, walDir string, segs []string) string
	}{
		{"truncate the newest segment", func(t *testing.T, fs *vfs.MemFS, walDir string, segs []string) string {
			p := filepath.Join(walDir, segs[len(segs)-1])
			truncateTo(t, fs, p, 0)
			return p
		}},
		{"delete the newest segment", func(t *testing.T, fs *vfs.MemFS, walDir string, segs []string) string {
			p := filepath.Join(walDir, segs[len(segs)-1])
			if err := fs.Remove(p); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"delete every segment", func(t *testing.T, fs *vfs.MemFS, walDir string, segs []string) string {
			for _, n := range segs {
				if err := fs.Remove(filepath.Join(walDir, n)); err != nil {
					t.Fatal(err)
				}
			}
			return walDir
		}},
		{"delete the WAL directory", func(t *testing.T, fs *vfs.MemFS, walDir string, segs []string) string {
			for _, n := range segs {
				if err := fs.Remove(filepath.Join(walDir, n)); err != nil {
					t.Fatal(err)
				}
			}
			if err := fs.Remove(walDir); err != nil {
				t.Fatal(err)
			}
			return walDir
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewCrashableMem()
			_, acked := buildRecoveryStore(t, mem, "/db", true)
			walDir := "/db/wal"
			segs, _ := mem.List(walDir)
			sort.Strings(segs)
			file := tc.damage(t, mem, walDir, segs)
			o := recoveryOptions(mem, "/db")
			_, cerr := Check(o)
			_, err := Open(o)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), file) {
				t.Fatalf("Open after the WAL lost records: %v; want ErrCorrupt naming %s", err, file)
			}
			if cerr == nil || cerr.Error() != err.Error() {
				t.Fatalf("Check: %v, Open: %v", cerr, err)
			}
			var lb logBuffer
			o.AcceptWALLoss, o.Logger = true, lb.logger()
			s, err := Open(o)
			if err != nil {
				t.Fatalf("forced Open: %v", err)
			}
			if !strings.Contains(lb.String(), "lost") {
				t.Fatalf("forced Open logged no loss:\n%s", lb.String())
			}
			e, err := s.Apply(genBatch(recoverySeed+1, 1))
			if err != nil {
				t.Fatal(err)
			}
			if e <= acked {
				t.Fatalf("forced Open handed out epoch %d, but %d was acknowledged before", e, acked)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			o.AcceptWALLoss = false
			s, err = Open(o)
			if err != nil {
				t.Fatalf("Open after the accepted loss: %v", err)
			}
			if s.Epoch() != e {
				t.Fatalf("reopened at epoch %d, want %d", s.Epoch(), e)
			}
			s.Close()
		})
	}
}

func truncateTo(t testing.TB, fs vfs.FS, path string, n int64) {
	t.Helper()
	f, err := fs.OpenReadWrite(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(n); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func writeWhole(t testing.TB, fs vfs.FS, path string, b []byte) {
	t.Helper()
	f, err := fs.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// The outcomes of a corruption matrix cell.
type outcome int

const (
	// refuse: Open fails with ErrCorrupt naming the file and an offset,
	// and leaves every file as it was.
	refuse outcome = iota
	// torn: Open truncates a tail beyond the synced epoch with a
	// warning; every epoch ≤ the synced one is present, and the state is
	// the model's at the recovered epoch.
	torn
	// quarantine: Open moves an unreferenced file to quarantine/ with a
	// warning and loses nothing.
	quarantine
)

func (o outcome) String() string { return [...]string{"refuse", "torn", "quarantine"}[o] }

// region locates the bytes of one file kind in a store: the file and the
// byte range [lo, hi) its damage aims at.
type region struct {
	path   string
	lo, hi int64
}

type damage int

const (
	flip damage = iota
	truncate
	remove
	zero
	appendGarbage
)

func (d damage) String() string {
	return [...]string{"flip", "truncate", "delete", "zero", "append"}[d]
}

// apply damages r in fs: flip xors the byte in the middle of the range,
// truncate cuts the file there, zero clears up to 32 bytes from the start
// of the range, append adds 37 seeded random bytes at the end.
func (d damage) apply(t testing.TB, fs vfs.FS, r region) {
	t.Helper()
	mid := r.lo + (r.hi-r.lo)/2
	if d == remove {
		if err := fs.Remove(r.path); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := readAllFile(fs, r.path)
	if err != nil {
		t.Fatal(err)
	}
	switch d {
	case flip:
		b[mid] ^= 0xff
	case truncate:
		b = b[:mid]
	case zero:
		clear(b[r.lo:min(r.hi, r.lo+32)])
	case appendGarbage:
		rng := rand.New(rand.NewPCG(recoverySeed, 37))
		for range 37 {
			b = append(b, byte(rng.Uint32()))
		}
	}
	writeWhole(t, fs, r.path, b)
}

// walRecords returns the [offset, end) of every record of a WAL or
// manifest file.
func walRecords(t testing.TB, b []byte, firstSeq uint64) [][2]int64 {
	t.Helper()
	var out [][2]int64
	if _, err := wal.Scan(b, "x", firstSeq, func(r wal.Record) error {
		out = append(out, [2]int64{r.Offset, r.Offset + int64(wal.HeaderSize+len(r.Payload))})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// locate finds a file kind in the store image.
func locate(t testing.TB, fs vfs.FS, dir, kind string) region {
	t.Helper()
	whole := func(p string) region {
		st, err := fs.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return region{p, 0, st.Size()}
	}
	manifest := filepath.Join(dir, "MANIFEST-000001")
	// WAL files holding records after the durable epoch, oldest first.
	var walFiles []string
	m, err := openManifest(fs, dir, ManifestOptions{Logger: quietLog}, true)
	if err != nil {
		t.Fatal(err)
	}
	durable := m.State().DurableEpoch
	names, _ := fs.List(filepath.Join(dir, "wal"))
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, "wal", n)
		if st, _ := fs.Stat(p); st.Size() == 0 {
			continue
		}
		b, _ := readAllFile(fs, p)
		var first uint64
		fmt.Sscanf(n, "wal-%x.log", &first)
		if first+uint64(len(walRecords(t, b, first))) > durable+1 {
			walFiles = append(walFiles, p)
		}
	}
	if len(walFiles) < 3 {
		t.Fatalf("only %d WAL files hold records after the durable epoch", len(walFiles))
	}
	recordOf := func(p string, which string) region {
		b, _ := readAllFile(fs, p)
		var first uint64
		fmt.Sscanf(filepath.Base(p), "wal-%x.log", &first)
		if strings.HasPrefix(filepath.Base(p), "MANIFEST") {
			first = 1
		}
		recs := walRecords(t, b, first)
		i := map[string]int{"first": 0, "middle": len(recs) / 2, "last": len(recs) - 1}[which]
		return region{p, recs[i][0], recs[i][1]}
	}
	seg := filepath.Join(dir, m.State().Segments[0].File)
	switch kind {
	case "CURRENT":
		return whole(filepath.Join(dir, "CURRENT"))
	case "MANIFEST":
		return whole(manifest)
	case "MANIFEST tail":
		return recordOf(manifest, "last")
	case "WAL head":
		return recordOf(walFiles[0], "first")
	case "WAL middle":
		return recordOf(walFiles[len(walFiles)/2], "middle")
	case "WAL tail":
		return recordOf(walFiles[len(walFiles)-1], "last")
	case "segment header":
		return region{seg, 0, segHeaderSize}
	case "segment section":
		b, _ := readAllFile(fs, seg)
		in, err := Inspect(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range in.Sections {
			if s.Name == "docs" {
				return region{seg, s.Offset, s.Offset + s.Length}
			}
		}
		t.Fatal("no docs section")
	case "segment footer":
		r := whole(seg)
		r.lo = r.hi - segFooterSize
		return r
	case "archive":
		names, _ := fs.List(dir)
		for _, n := range names {
			if strings.HasPrefix(n, "cold-") {
				return whole(filepath.Join(dir, n))
			}
		}
		t.Fatal("no archive")
	}
	t.Fatalf("unknown kind %q", kind)
	return region{}
}

// TestCorruptionMatrix damages every kind of store file in every way and
// checks the outcome written down for the cell. Across all cells: a
// refused Open changes no file; an Open that succeeds deletes no data
// file (segments and archives are still in the directory or in
// quarantine/, WAL files are only cut after the synced epoch) and holds
// every epoch up to the synced one, with the model's state at the
// recovered epoch.
//
// "clean" cells damage a closed store (its manifest records every epoch
// as synced); "crash" cells damage the image of a store that was never
// closed, whose newest WAL records are after the synced epoch the
// manifest knows.
func TestCorruptionMatrix(t *testing.T) {
	clean := vfs.NewCrashableMem()
	_, cleanAcked := buildRecoveryStore(t, clean, "/db", true)
	crashMem := vfs.NewCrashableMem()
	live, crashAcked := buildRecoveryStore(t, crashMem, "/db", false)
	crashImg := crashMem.CrashClone()
	live.Close()

	R, T := refuse, torn
	all := func(o outcome) map[damage]outcome {
		return map[damage]outcome{flip: o, truncate: o, remove: o, zero: o, appendGarbage: o}
	}
	cells := []struct {
		image string // "clean" or "crash"
		kind  string
		want  map[damage]outcome
		// names: what a refusal must name (default: the damaged file).
		names map[damage]string
	}{
		// CURRENT: any change makes it name no readable manifest, and a
		// missing CURRENT beside data is never taken for a new store.
		{"clean", "CURRENT", all(R), nil},
		// MANIFEST: damage with intact edits after it, a damaged whole
		// final record, a cut that leaves the store inconsistent, or
		// garbage that is no record prefix: refused.
		{"clean", "MANIFEST", all(R), map[damage]string{remove: "CURRENT"}},
		// The final edit (Close's synced epoch): a cut record is a torn
		// write and is dropped (the WAL still holds every epoch); a
		// whole record that fails its checksum is refused.
		{"clean", "MANIFEST tail", map[damage]outcome{flip: R, truncate: T, zero: R}, nil},
		// WAL files before the newest: damage with records after it, or
		// a gap in the sequence numbers.
		{"clean", "WAL head", all(R), map[damage]string{remove: "/db/wal/wal-"}},
		{"clean", "WAL middle", all(R), map[damage]string{remove: "/db/wal/wal-"}},
		// The newest WAL file of a closed store: every record was synced,
		// so damage, a cut or a deletion is a loss; garbage after the
		// last record is a torn tail.
		{"clean", "WAL tail", map[damage]outcome{flip: R, truncate: R, remove: R, zero: R, appendGarbage: T}, nil},
		// After a crash the newest records are beyond the synced epoch:
		// their damage is a torn tail; the active file's deletion is a loss.
		{"crash", "WAL tail", map[damage]outcome{flip: T, truncate: T, remove: R, zero: T, appendGarbage: T}, nil},
		// Segment and archive files: checksums, magics and the manifest's
		// list; never repaired.
		{"clean", "segment header", all(R), nil},
		{"clean", "segment section", all(R), nil},
		{"clean", "segment footer", all(R), nil},
		{"clean", "archive", all(R), nil},
	}
	for _, c := range cells {
		for _, d := range []damage{flip, truncate, remove, zero, appendGarbage} {
			want, ok := c.want[d]
			if !ok {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s/%s", c.image, c.kind, d), func(t *testing.T) {
				base, acked := clean, cleanAcked
				if c.image == "crash" {
					base, acked = crashImg, crashAcked
				}
				fs := base.CrashClone()
				r := locate(t, fs, "/db", c.kind)
				d.apply(t, fs, r)
				name := r.path
				if n, ok := c.names[d]; ok {
					name = n
				}
				checkCell(t, fs, want, name, acked, c.image == "clean")
			})
		}
	}
	// Files the manifest does not list.
	t.Run("clean/stray segment/quarantine", func(t *testing.T) {
		fs := clean.CrashClone()
		b, _ := readAllFile(fs, "/db/seg-000003.sst")
		writeWhole(t, fs, "/db/seg-000077.sst", b)
		checkCell(t, fs, quarantine, "seg-000077.sst", cleanAcked, true)
	})
	t.Run("clean/temp file/removed", func(t *testing.T) {
		fs := clean.CrashClone()
		writeWhole(t, fs, "/db/seg-000078.sst.tmp", []byte("unfinished"))
		checkCell(t, fs, torn, "", cleanAcked, true)
		if _, err := fs.Stat("/db/seg-000078.sst.tmp"); err == nil {
			t.Fatal("temp file of an unfinished write left in place")
		}
	})
}

func checkCell(t *testing.T, fs *vfs.MemFS, want outcome, name string, acked uint64, closed bool) {
	t.Helper()
	pre, err := openManifest(fs, "/db", ManifestOptions{Logger: quietLog}, true)
	var synced uint64
	if err == nil {
		synced = pre.State().SyncedEpoch
	}
	before := snapshotFiles(t, fs, "/db")
	var lb logBuffer
	o := recoveryOptions(fs, "/db")
	o.Logger = lb.logger()
	_, cerr := Check(o)
	s, err := Open(o)
	if (cerr == nil) != (err == nil) {
		t.Fatalf("Check and Open disagree: Check %v, Open %v", cerr, err)
	}
	if want == refuse {
		if err == nil {
			s.Close()
			t.Fatalf("Open succeeded, want a refusal naming %s; log:\n%s", name, lb.String())
		}
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "offset") {
			t.Fatalf("Open: %v; want ErrCorrupt naming %s and an offset", err, name)
		}
		if cerr.Error() != err.Error() {
			t.Fatalf("Check: %v, Open: %v", cerr, err)
		}
		t.Logf("refused: %v", err)
		if d := diffFiles(before, snapshotFiles(t, fs, "/db")); d != "" {
			t.Fatalf("a refused Open changed the store: %s", d)
		}
		return
	}
	if err != nil {
		t.Fatalf("Open: %v; want %v", err, want)
	}
	defer s.Close()
	logs := lb.String()
	switch want {
	case torn:
		if name != "" && !strings.Contains(logs, "torn") {
			t.Fatalf("no torn-tail warning; log:\n%s", logs)
		}
	case quarantine:
		if !strings.Contains(logs, "quarantine") {
			t.Fatalf("no quarantine warning; log:\n%s", logs)
		}
		if _, err := fs.Stat(filepath.Join("/db", quarantineDir, name)); err != nil {
			t.Fatalf("%s not in quarantine: %v", name, err)
		}
	}
	after := snapshotFiles(t, fs, "/db")
	for p := range before {
		base := filepath.Base(p)
		if _, ok := after[p]; ok || strings.HasSuffix(base, ".tmp") || strings.HasPrefix(base, "MANIFEST") {
			continue
		}
		if _, ok := after[filepath.Join("/db", quarantineDir, base)]; !ok {
			t.Fatalf("%s was deleted", p)
		}
	}
	// A closed store synced every acknowledged epoch: none may be
	// missing. After a crash, those up to the synced epoch may not.
	e := s.Epoch()
	if e < synced || (closed && e != acked) {
		t.Fatalf("recovered epoch %d, but %d was synced (%d acknowledged, closed %v)", e, synced, acked, closed)
	}
	sn := s.Snapshot()
	defer sn.Close()
	if d := checkAgainst(sn, modelAt(recoverySeed, min(e, acked))); d != "" {
		t.Fatal(d)
	}
}
