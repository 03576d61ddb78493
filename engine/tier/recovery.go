package tier

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/vfs"
)

// Recovery never deletes what it has not proven garbage (doc.go
// "Recovery"). Open first validates the manifest, the segment and archive
// set it lists and the WAL against each other, changing nothing; only
// then does it truncate torn tails and deal with files the manifest does
// not list, which sweepUnreferenced either removes (provably garbage) or
// moves to quarantine/.

var discardLogger = slog.New(slog.DiscardHandler)

// quarantineDir is the directory, inside the store directory, that holds
// files recovery set aside.
const quarantineDir = "quarantine"

// unreferenced is a segment or archive file the manifest does not list,
// and what recovery does with it.
type unreferenced struct {
	Name string
	// Remove: provably garbage (a temp file of an unfinished write, or
	// an id the live checkpoint superseded and no later edit names).
	// Otherwise the file is quarantined.
	Remove bool
	Why    string
}

// fileID parses the id of seg-<id>.sst and cold-<id>.parquet (and their
// .tmp names).
func fileID(name string) (uint64, bool) {
	var num string
	switch {
	case isSegFile(name):
		num = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(name, "seg-"), ".tmp"), ".sst")
	case isColdFile(name):
		num = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(name, "cold-"), ".tmp"), ".parquet")
	default:
		return 0, false
	}
	id, err := strconv.ParseUint(num, 10, 64)
	return id, err == nil
}

// unreferencedFiles lists the segment and archive files in the store
// directory that st does not list, classified.
func unreferencedFiles(fs vfs.FS, dir string, m *Manifest, st ManifestState) []unreferenced {
	names, err := fs.List(dir)
	if err != nil {
		return nil
	}
	listed := map[string]bool{}
	for _, sg := range st.Segments {
		listed[sg.File] = true
	}
	for _, a := range st.Archives {
		listed[a.File] = true
	}
	var out []unreferenced
	for _, n := range names {
		if !(isSegFile(n) || isColdFile(n)) || listed[n] {
			continue
		}
		u := unreferenced{Name: n}
		id, ok := fileID(n)
		switch {
		case strings.HasSuffix(n, ".tmp"):
			u.Remove, u.Why = true, "temp file of an unfinished write"
		case ok && m.provablyGarbage(id):
			u.Remove, u.Why = true, "superseded before the manifest's checkpoint, named in no later edit"
		default:
			u.Why = "not in the manifest, and not provably garbage"
		}
		out = append(out, u)
	}
	return out
}

// sweepUnreferenced removes the provably garbage unreferenced files and
// moves the others to quarantine/, logging each. Called by Open only once
// the store has been validated.
func (s *Store) sweepUnreferenced(st ManifestState) error {
	fs, dir := s.o.FS, s.o.Dir
	us := unreferencedFiles(fs, dir, s.manifest, st)
	if len(us) == 0 {
		return nil
	}
	qdir := filepath.Join(dir, quarantineDir)
	moved := false
	for _, u := range us {
		path := filepath.Join(dir, u.Name)
		if u.Remove {
			s.o.Logger.Info("tier: removing unreferenced file", "file", path, "why", u.Why)
			fs.Remove(path)
			continue
		}
		if !moved {
			if err := vfs.MkdirAllDurable(fs, qdir); err != nil {
				return fmt.Errorf("tier: create %s: %w", qdir, err)
			}
		}
		dst := filepath.Join(qdir, u.Name)
		for i := 1; ; i++ {
			if _, err := fs.Stat(dst); err != nil {
				break
			}
			dst = filepath.Join(qdir, fmt.Sprintf("%s.%d", u.Name, i))
		}
		s.o.Logger.Warn("tier: moving unreferenced file to quarantine", "file", path, "to", dst, "why", u.Why)
		if err := fs.Rename(path, dst); err != nil {
			return fmt.Errorf("tier: quarantine %s: %w", path, err)
		}
		moved = true
	}
	if moved {
		if err := vfs.SyncDir(fs, qdir); err != nil {
			return fmt.Errorf("tier: sync %s: %w", qdir, err)
		}
	}
	if err := vfs.SyncDir(fs, dir); err != nil {
		return fmt.Errorf("tier: sync %s: %w", dir, err)
	}
	return nil
}

// explainTorn ties a recovery failure to a torn manifest tail: when the
// manifest's final edit was dropped as torn, a missing segment or a WAL
// lacking records is most likely what that edit recorded (a flush whose
// WAL files were then deleted, a compaction whose inputs were), so the
// report names the manifest too.
func explainTorn(m *Manifest, err error) error {
	at, why := m.tornTail()
	if at < 0 || !errors.Is(err, ErrCorrupt) {
		return err
	}
	path := filepath.Join(m.dir, manifestName(m.num))
	return errors.Join(&wal.CorruptError{Kind: kindManifest, Path: path, Offset: at,
		Reason: fmt.Sprintf("final edit is torn (%s), and without it the store does not validate", why)}, err)
}

// CheckResult is what Check found in a store directory that Open would
// open.
type CheckResult struct {
	// DurableEpoch, SyncedEpoch, Segments and Archives come from the
	// manifest.
	DurableEpoch, SyncedEpoch uint64
	Segments, Archives        int
	// WALRecords counts the WAL records Open would replay; LastEpoch is
	// the newest epoch it would recover.
	WALRecords int
	LastEpoch  uint64
	// Warnings are what Open would repair without losing acknowledged
	// data: a torn manifest or WAL tail it truncates, unreferenced files
	// it removes or quarantines.
	Warnings []string
}

// Check validates the store in o.Dir exactly as Open does (the same
// code: manifest, segment and archive files, WAL replay with batch
// validation), without taking the lock or changing any file. It returns
// the error Open would return, or what Open would recover. o.Dim and
// o.Metric may be left zero: they are then read from the first segment or
// archive (a store with neither is checked without the vector-dimension
// test). Only FS, Dir, Dim, Metric, IndexedMetadata and AcceptWALLoss are
// used.
func Check(o Options) (CheckResult, error) {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Dir == "" {
		return CheckResult{}, errors.New("tier: Check: Options.Dir is required")
	}
	lg := o.Logger
	o.EnsureDefaults()
	if lg == nil {
		o.Logger = discardLogger
	}
	m, err := openManifest(o.FS, o.Dir, ManifestOptions{Logger: o.Logger}, true)
	if err != nil {
		return CheckResult{}, err
	}
	st := m.State()
	if o.Dim == 0 {
		o.Dim, o.Metric = inferShape(o.FS, o.Dir, st, o.Metric)
	}
	s := &Store{o: o}
	segs, err := s.openSegments(st)
	if err != nil {
		return CheckResult{}, explainTorn(m, err)
	}
	for _, sg := range segs {
		sg.free()
	}
	if _, err := s.openArchives(st); err != nil {
		return CheckResult{}, explainTorn(m, err)
	}
	r := CheckResult{DurableEpoch: st.DurableEpoch, SyncedEpoch: st.SyncedEpoch, Segments: len(st.Segments), Archives: len(st.Archives)}
	wr, err := wal.Check(wal.Options{FS: o.FS, Dir: filepath.Join(o.Dir, "wal"), Logger: o.Logger,
		SyncedSeq: st.SyncedEpoch, ActiveSeq: st.ActiveWAL, AcceptLoss: o.AcceptWALLoss}, st.DurableEpoch, s.replayCheck)
	if err != nil {
		return CheckResult{}, explainTorn(m, err)
	}
	r.WALRecords, r.LastEpoch = wr.Replayed, max(wr.LastSeq, st.SyncedEpoch)
	if at, why := m.tornTail(); at >= 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: torn final edit at byte offset %d (%s): truncated", filepath.Join(o.Dir, manifestName(m.num)), at, why))
	}
	if wr.TornFile != "" {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: torn tail at byte offset %d (%s), after the synced epoch %d: truncated", wr.TornFile, wr.TornOffset, wr.TornReason, st.SyncedEpoch))
	}
	if wr.Lost != "" {
		r.Warnings = append(r.Warnings, "acknowledged WAL records lost (AcceptWALLoss): "+wr.Lost)
	}
	for _, u := range unreferencedFiles(o.FS, o.Dir, m, st) {
		act := "moved to " + quarantineDir + "/"
		if u.Remove {
			act = "removed"
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %s: %s", filepath.Join(o.Dir, u.Name), u.Why, act))
	}
	return r, nil
}

// replayCheck is Open's replay callback without the apply step.
func (s *Store) replayCheck(seq uint64, payload []byte) error {
	b, err := decodeBatch(payload)
	if err == nil {
		err = s.validateBatch(b)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return nil
}

// inferShape reads the vector dimension and metric of a store from its
// first segment or archive (0 and def when it has none, or they do not
// say).
func inferShape(fs vfs.FS, dir string, st ManifestState, def Metric) (int, Metric) {
	var files []string
	for _, sg := range st.Segments {
		files = append(files, sg.File)
	}
	for _, a := range st.Archives {
		files = append(files, a.File)
	}
	for _, f := range files {
		b, err := readAllFile(fs, filepath.Join(dir, f))
		if err != nil {
			continue
		}
		in, err := Inspect(b)
		if err != nil {
			in, err = InspectArchive(b)
		}
		if err != nil || in == nil {
			continue
		}
		d, ok := in.Field("dim")
		if !ok || toU64(d) == 0 {
			continue
		}
		met := def
		if mv, ok := in.Field("metric"); ok {
			for _, c := range []Metric{L2, IP, Cosine} {
				if fmt.Sprint(mv) == c.String() {
					met = c
				}
			}
		}
		return int(toU64(d)), met
	}
	return 0, def
}
