package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine/contract"
)

// Journal operations (Entry.Op).
const (
	OpWrite     = "write"     // a record stored
	OpRestate   = "restate"   // an exact restatement added its provenance to ID
	OpSupersede = "supersede" // ID superseded by Target
	OpMerge     = "merge"     // ID merged into Target by consolidation
	OpUnmerge   = "unmerge"   // ID restored from a merge
	OpRestore   = "restore"   // ID's supersession undone (Rollback)
	OpDelete    = "delete"    // ID deleted: the tombstone
	OpUntrack   = "untrack"   // Provenance removed from ID's sources
)

// Entry is one journal entry. The journal is append-only: an entry is
// never rewritten. It holds ids, provenance URIs, versions and BLAKE3-256
// content hashes, never a record's content, key or subject, so a deleted
// record leaves only hashes and its tombstone.
type Entry struct {
	Seq        uint64    `json:"seq"`
	At         time.Time `json:"at"`
	Op         string    `json:"op"`
	ID         string    `json:"id"`
	Provenance string    `json:"provenance,omitempty"`
	Version    string    `json:"version,omitempty"`
	// ContentHash is BLAKE3-256 of the record's content (64 hex).
	ContentHash string `json:"content_hash,omitempty"`
	Target      string `json:"target,omitempty"`
	Reason      string `json:"reason,omitempty"`
	// PrevValidTo is the superseded record's ValidTo before (ms; 0 = open).
	PrevValidTo int64 `json:"prev_valid_to,omitempty"`
}

func journalID(seq uint64) string { return fmt.Sprintf("%s%020d", journalPrefix, seq) }

// journalDoc encodes one commit's entries (consecutive Seq) as one
// document whose id is journalID of the last Seq.
func journalDoc(es []Entry) (contract.Document, error) {
	b, err := json.Marshal(es)
	if err != nil {
		return contract.Document{}, err
	}
	return contract.Document{ID: journalID(es[len(es)-1].Seq), Namespace: journalNS, Trust: contract.Derived,
		Metadata: map[string]contract.Value{fEntry: contract.String(string(b))}}, nil
}

// Journal returns up to limit entries with Seq > after, in order. Each
// commit (one Remember, Rollback, delete or consolidation) stores its
// entries as one document "j:<last Seq>" holding their JSON array.
func (s *Store) Journal(ctx context.Context, after uint64, limit int) ([]Entry, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("%w: journal limit %d", ErrInvalid, limit)
	}
	ids, err := s.col.List(ctx, journalID(after), min(limit, 10000))
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, id := range ids {
		if !strings.HasPrefix(id, journalPrefix) {
			break
		}
		d, err := s.col.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		raw, _ := d.Metadata[fEntry].Str()
		var es []Entry
		if err := json.Unmarshal([]byte(raw), &es); err != nil {
			return nil, fmt.Errorf("memory: journal entry %s: %w", id, err)
		}
		for _, e := range es {
			if e.Seq > after && len(out) < limit {
				out = append(out, e)
			}
		}
		if len(out) >= limit {
			break
		}
	}
	return out, nil
}

// RollbackReport says what a Rollback or a delete changed.
type RollbackReport struct {
	// Deleted are the records removed (the provenance's own and every
	// record derived from them).
	Deleted []string `json:"deleted"`
	// Restored are records whose supersession or merge was undone.
	Restored []string `json:"restored,omitempty"`
	// Untracked are records that only lost the provenance from Sources.
	Untracked []string `json:"untracked,omitempty"`
}

// Rollback undoes everything provenance prov (one trajectory, session or
// page) wrote: its records are deleted (tombstones in the journal), and
// so is every record derived from them (DerivedFrom, transitively);
// records merged into one of them are un-merged; every keyed fact they
// touched is resolved again without them, which restores the values they
// superseded; records that prov only restated lose it from Sources, and a
// record prov wrote that another provenance restated exactly stays, with
// that provenance as its own.
// Consolidation then runs again on the subjects touched. One call, one
// atomic batch for the records.
func (s *Store) Rollback(ctx context.Context, prov string) (RollbackReport, error) {
	if prov == "" {
		return RollbackReport{}, fmt.Errorf("%w: empty provenance", ErrInvalid)
	}
	prov = redactURI(prov)
	s.mu.Lock()
	ov := s.newOverlay()
	var seeds, rehome []string
	for id, r := range s.recs {
		if r.Provenance != prov {
			continue
		}
		// A record another provenance restated exactly is that one's
		// too: it moves to it instead of going.
		if len(r.Sources) > 0 {
			rehome = append(rehome, id)
		} else {
			seeds = append(seeds, id)
		}
	}
	rep := s.cascadeLocked(ov, seeds, "rollback "+prov, true)
	slices.Sort(rehome)
	for _, id := range rehome {
		m := ov.mut(id)
		m.Provenance, m.Sources = m.Sources[0], slices.Clone(m.Sources[1:])
		ov.log(Entry{Op: OpUntrack, ID: id, Provenance: prov, Target: m.Provenance})
		rep.Untracked = append(rep.Untracked, id)
	}
	for id, r := range s.recs {
		if ov.deleted[id] || !slices.Contains(r.Sources, prov) {
			continue
		}
		m := ov.mut(id)
		m.Sources = slices.DeleteFunc(m.Sources, func(x string) bool { return x == prov })
		ov.log(Entry{Op: OpUntrack, ID: id, Provenance: prov})
		rep.Untracked = append(rep.Untracked, id)
	}
	slices.Sort(rep.Untracked)
	subjects := ov.subjectsTouched()
	err := s.commit(ctx, ov)
	s.mu.Unlock()
	if err != nil {
		return RollbackReport{}, err
	}
	for _, sub := range subjects {
		if _, err := s.Consolidate(ctx, sub); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func (o *overlay) subjectsTouched() []string {
	set := map[string]bool{}
	for id := range o.deleted {
		if r := o.s.recs[id]; r != nil {
			set[r.Subject] = true
		}
	}
	for _, id := range o.order {
		set[o.changed[id].Subject] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// cascadeLocked deletes seeds and every record derived from a deleted
// one. With undo (Rollback), records merged into a deleted record are
// un-merged and the keyed facts touched are resolved again (restoring
// what the deleted records superseded); without it (a delete request),
// the merged copies are deleted too and nothing superseded comes back.
func (s *Store) cascadeLocked(ov *overlay, seeds []string, reason string, undo bool) RollbackReport {
	var rep RollbackReport
	queue := slices.Clone(seeds)
	slices.Sort(queue)
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		r := s.recs[id]
		if r == nil || ov.deleted[id] {
			continue
		}
		ov.deleted[id] = true
		ov.log(Entry{Op: OpDelete, ID: id, Provenance: r.Provenance, Version: r.Version,
			ContentHash: contentHash(r.Content), Reason: reason})
		rep.Deleted = append(rep.Deleted, id)
		var next []string
		for xid, x := range s.subj[r.Subject] {
			if ov.deleted[xid] {
				continue
			}
			if slices.Contains(x.DerivedFrom, id) {
				next = append(next, xid)
			}
			if !undo && (x.MergedInto == id || (r.MergedInto != "" && (xid == r.MergedInto || x.MergedInto == r.MergedInto))) {
				next = append(next, xid)
			}
		}
		slices.Sort(next)
		queue = append(queue, next...)
	}
	if undo {
		for _, id := range rep.Deleted {
			r := s.recs[id]
			for xid, x := range s.subj[r.Subject] {
				if ov.deleted[xid] || x.MergedInto != id {
					continue
				}
				m := ov.mut(xid)
				m.Status, m.MergedInto = Active, ""
				ov.log(Entry{Op: OpUnmerge, ID: xid, Target: id, Reason: reason})
				rep.Restored = append(rep.Restored, xid)
			}
		}
		keys := map[[2]string]bool{}
		for _, id := range rep.Deleted {
			if r := s.recs[id]; r.Key != "" {
				keys[[2]string{r.Subject, r.Key}] = true
			}
		}
		for _, id := range rep.Restored {
			if r := s.recs[id]; r.Key != "" {
				keys[[2]string{r.Subject, r.Key}] = true
			}
		}
		ks := make([][2]string, 0, len(keys))
		for k := range keys {
			ks = append(ks, k)
		}
		slices.SortFunc(ks, func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) })
		for _, k := range ks {
			for _, id := range ov.resolveKey(k[0], k[1]) {
				if x := ov.get(id); x != nil && x.Status == Active {
					ov.log(Entry{Op: OpRestore, ID: id, Reason: reason})
					rep.Restored = append(rep.Restored, id)
				}
			}
		}
		slices.Sort(rep.Restored)
		rep.Restored = slices.Compact(rep.Restored)
	}
	return rep
}
