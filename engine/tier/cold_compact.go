package tier

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"

	"github.com/parquet-go/parquet-go"

	"github.com/stratasearch/strata/vfs"
)

// deadRows counts the archive's rows dead at every epoch ≥ e.
func (a *coldArchive) deadRows(e uint64) int {
	n := 0
	for r := range a.death {
		if a.death[r].Load() <= e {
			n++
		}
	}
	return n
}

// rewriteArchive writes rows keep of archive a (ascending row numbers)
// as a new cold archive to w. The codec and the 18-byte codes are reused
// unchanged (no retraining); the vector column is kept as in a.
func rewriteArchive(w io.Writer, a *coldArchive, keep []uint32) error {
	info := a.info
	info.Rows = uint64(len(keep))
	minE, maxE := uint64(math.MaxUint64), uint64(0)
	for _, r := range keep {
		minE, maxE = min(minE, a.birth[r]), max(maxE, a.birth[r])
	}
	if len(keep) == 0 {
		minE = 0
	}
	info.MinEpoch, info.MaxEpoch = minE, maxE
	opts := []parquet.WriterOption{parquet.Compression(&parquet.Zstd),
		parquet.KeyValueMetadata(kvFormat, strconv.Itoa(coldFormatVersion))}
	if a.codec != nil {
		info.Nlist = a.codec.Index().Options().Nlist
		var cb bytes.Buffer
		if _, err := a.codec.WriteTo(&cb); err != nil {
			return fmt.Errorf("tier: cold codec: %w", err)
		}
		opts = append(opts, parquet.KeyValueMetadata(kvCodec, base64.StdEncoding.EncodeToString(cb.Bytes())))
	}
	ij, _ := json.Marshal(info)
	opts = append(opts, parquet.KeyValueMetadata(kvArchive, string(ij)))
	pw := parquet.NewGenericWriter[coldRow](w, opts...)
	batch := make([]coldRow, 0, 256)
	for i, r := range keep {
		d := a.docs[r]
		meta := "{}"
		if len(d.Metadata) > 0 {
			b, err := json.Marshal(d.Metadata)
			if err != nil {
				return fmt.Errorf("tier: cold metadata row %d: %w", i, err)
			}
			meta = string(b)
		}
		cr := coldRow{ID: d.ID, Content: d.Content, Metadata: meta, Namespace: d.Namespace, SourceURI: d.SourceURI,
			Trust: uint8(d.Trust), ACL: d.ACL, EBirth: a.birth[r], EDeath: epochLive, VersionHash: d.VersionHash,
			Committed: d.UpdatedUnixNano}
		if ci := a.rowCode[r]; ci >= 0 {
			var c [18]byte
			copy(c[:], a.codes[int(ci)*len(c):])
			cr.Code = &c
			if info.Vectors {
				cr.Vector = d.Vector
			}
		}
		batch = append(batch, cr)
		if len(batch) == cap(batch) || i == len(keep)-1 {
			if _, err := pw.Write(batch); err != nil {
				return fmt.Errorf("tier: write cold archive: %w", err)
			}
			batch = batch[:0]
		}
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("tier: write cold archive: %w", err)
	}
	return nil
}

// CompactArchives rewrites every cold archive whose dead fraction ρ_dead
// (rows dead at every epoch ≥ min(oldest pinned epoch, durable epoch):
// a row dies on disk only once its death is durable) exceeds
// CompactDeadFraction without those rows, so a deleted row's content
// leaves the disk without a promote. The archive's codec and 18-byte
// codes are reused (no retraining); the new file is written temp → fsync
// → rename → fsync dir; then, with writes held, deaths of the kept rows
// (including those during the rewrite) are carried over and one manifest
// edit removes the old archive, adds the new one (a new id) and records
// the carried tombstones ≤ the durable epoch. An archive whose rows are
// all dead is removed by the edit alone. The old file is deleted once no
// Snapshot uses it. Queries and writes continue during the rewrite.
// Errors: ErrClosed, ctx, I/O (the store is unchanged unless a manifest
// edit failed: ErrReadOnly).
func (s *Store) CompactArchives(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	s.maintMu.Lock()
	defer s.maintMu.Unlock()
	return s.compactArchivesLocked(ctx)
}

// compactArchivesLocked is CompactArchives; the caller holds maintMu.
func (s *Store) compactArchivesLocked(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.Err(); err != nil {
		return err
	}
	v := s.currentView()
	defer v.unref()
	// Rows dead at P but after the durable epoch stay until a flush makes
	// their deaths durable (with sync=none the delete's WAL record could
	// still be lost in a crash, and the row must come back then).
	P := min(s.OldestPinnedEpoch(), s.manifest.State().DurableEpoch)
	for _, a := range v.cold {
		if !(a.meta.Rows == 0 || float64(a.deadRows(P)) > s.o.CompactDeadFraction*float64(a.meta.Rows)) {
			continue
		}
		if err := s.compactArchive(ctx, a, P); err != nil {
			return err
		}
	}
	return nil
}

// compactArchive rewrites archive a without its rows dead at P (the
// caller holds maintMu and a view holding a).
func (s *Store) compactArchive(ctx context.Context, a *coldArchive, P uint64) error {
	var keep []uint32
	for r := range a.docs {
		if a.death[r].Load() > P {
			keep = append(keep, uint32(r))
		}
	}
	id := s.allocSegmentID()
	var na *coldArchive
	if len(keep) > 0 {
		name := coldFileName(id)
		path := filepath.Join(s.o.Dir, name)
		if err := vfs.WriteFileAtomic(s.o.FS, path, func(w io.Writer) error {
			return rewriteArchive(w, a, keep)
		}); err != nil {
			s.o.FS.Remove(path)
			return fmt.Errorf("tier: compact archive %d: %w", a.meta.ID, err)
		}
		var err error
		if na, err = s.loadArchive(name, nil); err != nil {
			s.o.FS.Remove(path)
			return err
		}
		na.meta.ID = id
		if err := ctx.Err(); err != nil {
			na.obsolete.Store(true)
			na.free()
			return err
		}
	}
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	D := s.manifest.State().DurableEpoch
	edit := Edit{NextSegmentID: s.segmentIDCounter(id), RemoveArchives: []uint64{a.meta.ID}}
	if na != nil {
		edit.AddArchives = []ArchiveMeta{na.meta}
		// Writes are held: carry every death of a kept row over.
		for i, r := range keep {
			d := a.death[r].Load()
			if d == epochLive {
				continue
			}
			na.death[i].Store(d)
			if d <= D {
				edit.Tombstones = append(edit.Tombstones, Tombstone{Segment: id, Row: uint32(i), Death: d})
			}
		}
	}
	if err := s.manifest.Apply(edit); err != nil {
		if na != nil {
			na.obsolete.Store(true)
			na.free()
		}
		if s.manifest.Err() != nil {
			return fmt.Errorf("%w: %w", ErrReadOnly, err)
		}
		return err
	}
	cur := s.cur
	var cold []*coldArchive
	for _, c := range cur.cold {
		if c != a {
			cold = append(cold, c)
		}
	}
	if na != nil {
		cold = append(cold, na) // the largest id: ascending order kept
	}
	a.obsolete.Store(true)
	s.swapView(cur.derive(cur.segs, cold))
	s.archiveCompactions.Add(1)
	return nil
}

// ArchiveCompactions returns the number of archive rewrites or removals
// done by CompactArchives (or Compact).
func (s *Store) ArchiveCompactions() int64 { return s.archiveCompactions.Load() }
