package memory

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
)

// Delete forgets records ids of subject and every copy of them: the
// records merged with them (either way), their near-duplicates among the
// subject's records of the same kind and key not yet consolidated
// (nearDup; not for a keyed fact, whose other values are its history),
// and every record derived from any of them, transitively.
// Keyed facts are not re-resolved: a deleted current value leaves the
// key without one (nothing superseded comes back). The journal keeps a
// tombstone (id, version, content hash) per record. The text leaves the
// collection's files at the next Purge. With Options.AppendOnly only ids
// and what derives from them are deleted. Unknown ids are ErrNotFound and
// nothing is deleted.
func (s *Store) Delete(ctx context.Context, subject string, ids []string) (RollbackReport, error) {
	if err := ctx.Err(); err != nil {
		return RollbackReport{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seeds := map[string]bool{}
	for _, id := range ids {
		r := s.recs[id]
		if r == nil || r.Subject != subject {
			return RollbackReport{}, fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		seeds[id] = true
	}
	for _, id := range ids {
		r := s.recs[id]
		if s.o.AppendOnly || r.Key != "" {
			continue // a keyed fact's other values are its history, not copies
		}
		sr := Shingles(r.Content)
		for xid, x := range s.subj[subject] {
			if !seeds[xid] && x.Kind == r.Kind && x.Key == r.Key && s.nearDup(r, x, sr, Shingles(x.Content)) {
				seeds[xid] = true
			}
		}
	}
	ov := s.newOverlay()
	rep := s.cascadeLocked(ov, mapKeys(seeds), "delete", false)
	if err := s.commit(ctx, ov); err != nil {
		return RollbackReport{}, err
	}
	return rep, nil
}

// DeleteSubject forgets every record of subject.
func (s *Store) DeleteSubject(ctx context.Context, subject string) (RollbackReport, error) {
	if err := ctx.Err(); err != nil {
		return RollbackReport{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ov := s.newOverlay()
	ids := make([]string, 0, len(s.subj[subject]))
	for id := range s.subj[subject] {
		ids = append(ids, id)
	}
	rep := s.cascadeLocked(ov, ids, "delete subject", false)
	if err := s.commit(ctx, ov); err != nil {
		return RollbackReport{}, err
	}
	return rep, nil
}

// DeleteProvenance forgets what provenance prov produced: Rollback.
func (s *Store) DeleteProvenance(ctx context.Context, prov string) (RollbackReport, error) {
	return s.Rollback(ctx, prov)
}

func mapKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// SourceResolver returns the current version hash of a provenance URI's
// content, or ok = false when the source no longer exists.
type SourceResolver func(ctx context.Context, uri string) (hash string, ok bool, err error)

// FileSources resolves file:// provenance: BLAKE3-256 of the span the URI
// names (engine.ReadSpan); any other scheme is reported as unchanged
// (hash "" means "cannot tell", and CheckSources keeps the record).
func FileSources(_ context.Context, uri string) (string, bool, error) {
	if !strings.HasPrefix(uri, "file://") {
		return "", true, nil
	}
	b, err := engine.ReadSpan(uri)
	if err != nil {
		return "", false, nil
	}
	return engine.VersionHash(b), true, nil
}

// CheckSources forgets (as Delete, reason "source changed") every record
// whose SourceHash no longer matches its provenance's content as resolve
// reports it, or whose source is gone. It returns what it deleted.
func (s *Store) CheckSources(ctx context.Context, resolve SourceResolver) (RollbackReport, error) {
	s.mu.RLock()
	type cand struct{ id, uri, hash string }
	var cs []cand
	for id, r := range s.recs {
		if r.SourceHash != "" {
			cs = append(cs, cand{id, r.Provenance, r.SourceHash})
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(cs, func(a, b cand) int { return strings.Compare(a.id, b.id) })
	var stale []string
	for _, c := range cs {
		h, ok, err := resolve(ctx, c.uri)
		if err != nil {
			return RollbackReport{}, err
		}
		if !ok || (h != "" && h != c.hash) {
			stale = append(stale, c.id)
		}
	}
	return s.forget(ctx, stale, "source changed")
}

// forget deletes ids that still exist (a cascade like Delete's, without
// near-duplicate expansion).
func (s *Store) forget(ctx context.Context, ids []string, reason string) (RollbackReport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ov := s.newOverlay()
	rep := s.cascadeLocked(ov, ids, reason, false)
	if err := s.commit(ctx, ov); err != nil {
		return RollbackReport{}, err
	}
	return rep, nil
}

// RetentionScore is the score Expire keeps the highest of when a kind is
// over capacity: log2(1 + recalls) + uniqueness − age in days / 30, where
// uniqueness = 1 − the largest shingle Jaccard with another record of the
// same subject and kind (so a near-copy goes first), and age counts from
// the last recall (or RecordedAt).
func RetentionScore(recalls int, age time.Duration, uniqueness float64) float64 {
	return math.Log2(1+float64(recalls)) + uniqueness - age.Hours()/(24*30)
}

// Expire applies Policy.Retention: records older than their kind's TTL
// (RecordedAt + TTL ≤ now) are forgotten, then, per subject and kind,
// the active records beyond Capacity with the lowest RetentionScore
// (ties: older RecordedAt first, then earlier Seq, then smaller id). Superseded records
// are history and count against neither limit but go with the TTL.
func (s *Store) Expire(ctx context.Context) (RollbackReport, error) {
	now := s.o.Now()
	s.mu.RLock()
	var drop []string
	for _, sub := range s.sortedSubjects() {
		byKind := map[Kind][]*Record{}
		for _, r := range s.subj[sub] {
			ret, ok := s.o.Policy.Retention[r.Kind]
			if !ok {
				continue
			}
			if ret.TTL > 0 && !r.RecordedAt.Add(ret.TTL).After(now) {
				drop = append(drop, r.ID)
				continue
			}
			if ret.Capacity > 0 && r.Status == Active {
				byKind[r.Kind] = append(byKind[r.Kind], r)
			}
		}
		for k, rs := range byKind {
			capN := s.o.Policy.Retention[k].Capacity
			if len(rs) <= capN {
				continue
			}
			type scored struct {
				r *Record
				v float64
			}
			sh := make([][]uint64, len(rs))
			for i, r := range rs {
				sh[i] = Shingles(r.Content)
			}
			sc := make([]scored, len(rs))
			s.accessM.Lock()
			for i, r := range rs {
				maxJ := 0.0
				for j := range rs {
					if j != i {
						maxJ = max(maxJ, Jaccard(sh[i], sh[j]))
					}
				}
				n, last := 0, r.RecordedAt
				if a := s.access[r.ID]; a != nil {
					n, last = a.n, a.last
				}
				sc[i] = scored{r, RetentionScore(n, now.Sub(last), 1-maxJ)}
			}
			s.accessM.Unlock()
			slices.SortFunc(sc, func(a, b scored) int {
				if a.v != b.v {
					if a.v < b.v {
						return -1
					}
					return 1
				}
				if c := a.r.RecordedAt.Compare(b.r.RecordedAt); c != 0 {
					return c
				}
				if c := cmp.Compare(a.r.Seq, b.r.Seq); c != 0 {
					return c
				}
				return strings.Compare(a.r.ID, b.r.ID)
			})
			for _, x := range sc[:len(rs)-capN] {
				drop = append(drop, x.r.ID)
			}
		}
	}
	s.mu.RUnlock()
	slices.Sort(drop)
	return s.forget(ctx, drop, "retention")
}

func (s *Store) sortedSubjects() []string {
	out := make([]string, 0, len(s.subj))
	for k := range s.subj {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// PurgeReport says what Purge did.
type PurgeReport struct {
	// Rewritten is the number of live documents (records and journal
	// entries) written again.
	Rewritten int `json:"rewritten"`
	// Skipped is true when nothing was deleted since the last Purge.
	Skipped bool `json:"skipped"`
}

// Purge makes deleted records' bytes leave the collection's files. The
// tier drops a dead row's bytes only when it rewrites its segment or
// archive, which it does once the dead fraction passes θ_compact (0.2),
// and the WAL holds every write until a flush. So Purge, when anything
// was deleted since the last one: flushes; asks the WAL to rotate at the
// next write (engine.Collection.RequestWALRotation); writes every live
// document (records from memory, journal entries as stored) again, which
// leaves every existing warm segment and cold archive entirely dead;
// flushes again (which deletes the WAL segments before the rewrite); and
// compacts, which removes the dead segments and archives
// (their files are deleted once no snapshot holds them). Cost O(live
// documents): a full rewrite. Writes wait for it.
func (s *Store) Purge(ctx context.Context) (PurgeReport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dirty {
		return PurgeReport{Skipped: true}, nil
	}
	if err := s.col.Flush(ctx); err != nil {
		return PurgeReport{}, err
	}
	s.col.RequestWALRotation()
	var docs []contract.Document
	ids := make([]string, 0, len(s.recs))
	for id := range s.recs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		docs = append(docs, s.recs[id].toDoc())
	}
	after := journalID(0)
	for {
		page, err := s.col.List(ctx, after, engine.MaxListLimit)
		if err != nil {
			return PurgeReport{}, err
		}
		n := 0
		for _, id := range page {
			if !strings.HasPrefix(id, journalPrefix) {
				continue
			}
			d, err := s.col.Get(ctx, id)
			if err != nil {
				return PurgeReport{}, err
			}
			d.Timestamp = time.Time{}
			docs = append(docs, d)
			n++
		}
		if len(page) == 0 || n == 0 {
			break
		}
		after = page[len(page)-1]
	}
	for start := 0; start < len(docs); start += writeChunk {
		if _, err := s.col.Upsert(ctx, docs[start:min(start+writeChunk, len(docs))]); err != nil {
			return PurgeReport{}, err
		}
	}
	if err := s.col.Flush(ctx); err != nil {
		return PurgeReport{}, err
	}
	if err := s.col.Compact(ctx); err != nil {
		return PurgeReport{}, err
	}
	s.dirty = false
	return PurgeReport{Rewritten: len(docs)}, nil
}
