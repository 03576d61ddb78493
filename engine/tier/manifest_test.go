package tier

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/vfs"
	"github.com/stratasearch/strata/vfs/errorfs"
)

func mopts(n int) ManifestOptions { return ManifestOptions{CheckpointEdits: n, Logger: quietLog} }

// genEdit makes edit i of a deterministic sequence against state st.
func genEdit(rng *rand.Rand, st ManifestState, i int) Edit {
	e := Edit{DurableEpoch: st.DurableEpoch + uint64(rng.IntN(3)), NextSegmentID: st.NextSegmentID + 1}
	id := st.NextSegmentID + 1
	e.Add = []SegmentMeta{{ID: id, File: fmt.Sprintf("seg-%06d.sst", id), MinEpoch: uint64(i), MaxEpoch: uint64(i + 5), Rows: uint64(rng.IntN(1000)), SizeBytes: uint64(rng.IntN(1 << 20))}}
	if len(st.Segments) > 0 && rng.IntN(2) == 0 {
		e.Remove = []uint64{st.Segments[rng.IntN(len(st.Segments))].ID}
	}
	return e
}

func TestManifestRoundTripAndCheckpoint(t *testing.T) {
	mem := vfs.NewCrashableMem()
	vfs.MkdirAllDurable(mem, "/db")
	m, err := OpenManifest(mem, "/db", mopts(3))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	var states []ManifestState
	for i := 0; i < 20; i++ {
		if err := m.Apply(genEdit(rng, m.State(), i)); err != nil {
			t.Fatal(err)
		}
		states = append(states, m.State())
	}
	if m.FileNumber() < 5 {
		t.Fatalf("20 edits with CheckpointEdits=3 reached only MANIFEST-%d", m.FileNumber())
	}
	names, _ := mem.List("/db")
	nManifests := 0
	for _, n := range names {
		if _, ok := parseManifestName(n); ok {
			nManifests++
		}
	}
	if nManifests != 1 {
		t.Fatalf("old manifests not removed: %v", names)
	}
	want := m.State()
	m.Close()
	m2, err := OpenManifest(mem.CrashClone(), "/db", mopts(3))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m2.State(), want) {
		t.Fatalf("reopened state %+v, want %+v", m2.State(), want)
	}
	// Invalid edits are rejected and not written.
	if err := m2.Apply(Edit{Remove: []uint64{999999}}); err == nil {
		t.Fatal("removing an unknown segment accepted")
	}
	if err := m2.Apply(Edit{DurableEpoch: 0, Add: []SegmentMeta{want.Segments[0]}}); err == nil && len(want.Segments) > 0 {
		t.Fatal("duplicate segment accepted")
	}
	if !reflect.DeepEqual(m2.State(), want) {
		t.Fatal("rejected edit changed the state")
	}
}

func TestManifestCrash(t *testing.T) {
	iters := 100
	if testing.Short() {
		iters = 20
	}
	for it := 0; it < iters; it++ {
		rng := rand.New(rand.NewPCG(uint64(it), 3))
		mem := vfs.NewCrashableMem()
		crashAt := rng.IntN(120)
		var ops int
		var image *vfs.MemFS
		var ackedStates []ManifestState
		var ackedAtCrash int
		inj := errorfs.InjectorFunc{Name: "crash", Fn: func(errorfs.Op) error {
			if ops == crashAt && image == nil {
				image = mem.CrashCloneWith(vfs.CrashOptions{Rand: rng})
				ackedAtCrash = len(ackedStates)
			}
			ops++
			return nil
		}}
		fs := errorfs.Wrap(mem, inj)
		vfs.MkdirAllDurable(fs, "/db")
		m, err := OpenManifest(fs, "/db", mopts(1+rng.IntN(5)))
		if err != nil {
			t.Fatal(err)
		}
		initial := m.State()
		for i := 0; i < 25; i++ {
			if err := m.Apply(genEdit(rng, m.State(), i)); err != nil {
				t.Fatal(err)
			}
			ackedStates = append(ackedStates, m.State())
		}
		m.Close()
		if image == nil {
			image = mem.CrashClone()
			ackedAtCrash = len(ackedStates)
		}
		m2, err := OpenManifest(image, "/db", mopts(3))
		if err != nil {
			t.Fatalf("iter %d: reopen: %v", it, err)
		}
		got := m2.State()
		// got must be the state after k edits with k ≥ acked (k may be
		// one more: an edit whose fsync was cut short may survive).
		ok := false
		for k := ackedAtCrash; k <= len(ackedStates) && k <= ackedAtCrash+1; k++ {
			want := initial
			if k > 0 {
				want = ackedStates[k-1]
			}
			if reflect.DeepEqual(got, want) {
				ok = true
			}
		}
		if !ok {
			t.Fatalf("iter %d (crash at op %d, %d edits acked): recovered %+v", it, crashAt, ackedAtCrash, got)
		}
		// Recovered manifests accept edits again.
		if err := m2.Apply(genEdit(rng, got, 99)); err != nil {
			t.Fatalf("iter %d: apply after recovery: %v", it, err)
		}
	}
}

func TestManifestTornAndCorrupt(t *testing.T) {
	build := func() (*vfs.MemFS, string, int) {
		mem := vfs.NewCrashableMem()
		vfs.MkdirAllDurable(mem, "/db")
		m, _ := OpenManifest(mem, "/db", mopts(100))
		rng := rand.New(rand.NewPCG(5, 5))
		for i := 0; i < 4; i++ {
			m.Apply(genEdit(rng, m.State(), i))
		}
		m.Close()
		return mem, "/db/" + manifestName(m.FileNumber()), 4
	}
	mem, path, _ := build()
	data := fileData(t, mem, path)
	// Torn: cut the last edit in half → state has 3 edits, warning, no error.
	var offs []int64
	wal.Scan(data, path, 1, func(r wal.Record) error { offs = append(offs, r.Offset); return nil })
	last := offs[len(offs)-1]
	rewriteFile(t, mem, path, data[:last+5])
	m, err := OpenManifest(mem, "/db", mopts(100))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.State().Segments); got == 0 {
		t.Fatal("state lost")
	}
	m.Close()
	// Corrupt the second record → hard error with file + offset.
	mem, path, _ = build()
	data = fileData(t, mem, path)
	data[offs[1]+wal.HeaderSize] ^= 0xff
	rewriteFile(t, mem, path, data)
	_, err = OpenManifest(mem, "/db", mopts(100))
	var ce *wal.CorruptError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || ce.Offset != offs[1] || ce.Path != path {
		t.Fatalf("err %v, want ErrCorrupt at %s:%d", err, path, offs[1])
	}
}

func TestManifestRenameFailure(t *testing.T) {
	mem := vfs.NewCrashableMem()
	vfs.MkdirAllDurable(mem, "/db")
	inj := errorfs.OnIndex(1, errorfs.OpRename) // rename 0 is the initial CURRENT
	fs := errorfs.Wrap(mem, inj)
	m, err := OpenManifest(fs, "/db", mopts(2))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 8))
	var acked []ManifestState
	for i := 0; i < 6; i++ {
		err := m.Apply(genEdit(rng, m.State(), i))
		if err != nil {
			if !errors.Is(err, errorfs.ErrInjected) {
				t.Fatalf("error %v", err)
			}
			break
		}
		acked = append(acked, m.State())
	}
	if !inj.Fired() || m.Err() == nil {
		t.Fatal("checkpoint rename failure not reported by Err")
	}
	if err := m.Apply(genEdit(rng, m.State(), 9)); err == nil {
		t.Fatal("manifest accepted an edit after a failed checkpoint")
	}
	m2, err := OpenManifest(mem.CrashClone(), "/db", mopts(2))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m2.State(), acked[len(acked)-1]) {
		t.Fatalf("after rename failure + crash: %+v, want %+v", m2.State(), acked[len(acked)-1])
	}
}

func fileData(t *testing.T, fs vfs.FS, path string) []byte {
	f, err := fs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	return b
}

func rewriteFile(t *testing.T, fs vfs.FS, path string, data []byte) {
	f, err := fs.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(data)
	f.Sync()
	f.Close()
	vfs.SyncDir(fs, "/db")
}

func FuzzDecodeEdit(f *testing.F) {
	f.Add(encodeEdit(Edit{DurableEpoch: 5, NextSegmentID: 2, Add: []SegmentMeta{{ID: 1, File: "a", Rows: 3}}, Remove: []uint64{7}}))
	f.Add(encodeEdit(Edit{}))
	f.Add(encodeEdit(Edit{DurableEpoch: 9, SyncedEpoch: 12, ActiveWAL: 13}))
	f.Add([]byte{1, 0, 0, 255, 255, 255, 255, 15})
	f.Fuzz(func(t *testing.T, p []byte) {
		e, err := decodeEdit(p)
		if err != nil {
			return
		}
		e2, err := decodeEdit(encodeEdit(e))
		if err != nil || !reflect.DeepEqual(e, e2) {
			t.Fatalf("re-decode mismatch: %v", err)
		}
	})
}

// TestManifestReadsVersion3: a manifest written before format version 4
// (no synced epoch, no active WAL) still opens, with both unknown (0).
func TestManifestReadsVersion3(t *testing.T) {
	e := Edit{DurableEpoch: 7, NextSegmentID: 3, Add: []SegmentMeta{{ID: 2, File: "seg-000002.sst", MinEpoch: 1, MaxEpoch: 7, Rows: 4, SizeBytes: 99}},
		Tombstones: []Tombstone{{Segment: 2, Row: 1, Death: 6}}}
	v4 := encodeEdit(e)
	if v4[0] != 4 || v4[len(v4)-1] != 0 || v4[len(v4)-2] != 0 {
		t.Fatalf("version 4 encoding %x", v4)
	}
	v3 := append([]byte{3}, v4[1:len(v4)-2]...)
	got, err := decodeEdit(v3)
	if err != nil || !reflect.DeepEqual(got, e) {
		t.Fatalf("decode version 3: %+v, %v; want %+v", got, err, e)
	}
	mem := vfs.NewCrashableMem()
	mem.MkdirAll("/db", 0o755)
	rewriteFile(t, mem, "/db/MANIFEST-000001", wal.AppendRecord(nil, wal.TypeManifestCheckpoint, 1, v3))
	rewriteFile(t, mem, "/db/CURRENT", []byte("MANIFEST-000001\n"))
	m, err := OpenManifest(mem, "/db", ManifestOptions{Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	st := m.State()
	if st.DurableEpoch != 7 || len(st.Segments) != 1 || len(st.Tombstones) != 1 || st.SyncedEpoch != 0 || st.ActiveWAL != 0 {
		t.Fatalf("state %+v", st)
	}
}

// TestInspectManifestFinalEdit: the manifest inspector applies Open's
// rule to the final edit: cut short by the end of the file it is a torn
// write (a warning); whole but failing its checksum it is a problem.
func TestInspectManifestFinalEdit(t *testing.T) {
	b := wal.AppendRecord(nil, wal.TypeManifestCheckpoint, 1, encodeEdit(Edit{NextSegmentID: 1}))
	b = wal.AppendRecord(b, wal.TypeManifestEdit, 2, encodeEdit(Edit{DurableEpoch: 3, SyncedEpoch: 3}))
	cut := b[:len(b)-3]
	in, _ := InspectManifest(cut)
	if !in.OK() || len(in.Warnings) != 1 {
		t.Fatalf("cut final edit: problems %v, warnings %v", in.Problems, in.Warnings)
	}
	flipped := append([]byte(nil), b...)
	flipped[len(flipped)-1] ^= 0xff
	in, _ = InspectManifest(flipped)
	if in.OK() {
		t.Fatalf("damaged final edit not a problem: warnings %v", in.Warnings)
	}
	for _, d := range [][]byte{cut, flipped} {
		mem := vfs.NewCrashableMem()
		mem.MkdirAll("/db", 0o755)
		rewriteFile(t, mem, "/db/MANIFEST-000001", d)
		rewriteFile(t, mem, "/db/CURRENT", []byte("MANIFEST-000001\n"))
		in, _ := InspectManifest(d)
		m, err := OpenManifest(mem, "/db", ManifestOptions{Logger: quietLog})
		if (err == nil) != in.OK() {
			t.Fatalf("OpenManifest %v, inspector OK %v", err, in.OK())
		}
		if err == nil {
			m.Close()
		}
	}
}
