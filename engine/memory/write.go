package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/redact"
)

// Write is one memory a caller proposes. The runtime decides whether and
// how it is admitted (Remember).
type Write struct {
	Subject    string         `json:"subject"`
	Kind       Kind           `json:"kind"`
	Key        string         `json:"key,omitempty"`
	Content    string         `json:"content"`
	Provenance string         `json:"provenance"`
	Evidence   Evidence       `json:"evidence,omitempty"`
	Trust      contract.Trust `json:"trust,omitempty"`
	// ValidFrom is when the memory starts to hold (zero: now); ValidUntil
	// when it stops (zero: open-ended).
	ValidFrom  time.Time `json:"valid_from,omitzero"`
	ValidUntil time.Time `json:"valid_until,omitzero"`
	Vector     []float32 `json:"vector,omitempty"`
	// DerivedFrom lists the records of the same subject a derived record
	// (a summary, a lesson drawn from episodes) was built from.
	DerivedFrom []string `json:"derived_from,omitempty"`
	// SourceHash is the provenance source's version hash as read (see
	// CheckSources); "" = not tracked.
	SourceHash string `json:"source_hash,omitempty"`
	// Replaces is the id of a record this write replaces (an edit); with
	// IfVersion the replaced record's version must still be IfVersion.
	Replaces string `json:"replaces,omitempty"`
	// IfVersion is the version the caller read: of Replaces, or, for a
	// keyed write, of the key's current record. A mismatch fails the batch
	// with a *ConflictError. IfAbsent requires that the key has no current
	// record (or Replaces no record).
	IfVersion string `json:"if_version,omitempty"`
	IfAbsent  bool   `json:"if_absent,omitempty"`
}

// Outcome is what admission did with one Write.
type Outcome struct {
	// Status is "stored", "duplicate" (an exact restatement of Record,
	// which gained the write's provenance) or "refused".
	Status string `json:"status"`
	// Reason is the refusal reason (Refusal*), empty otherwise.
	Reason string  `json:"reason,omitempty"`
	Record *Record `json:"record,omitempty"`
	// Redactions counts the secrets removed from the content.
	Redactions int `json:"redactions,omitempty"`
	// Superseded lists the records this write superseded.
	Superseded []string `json:"superseded,omitempty"`
}

// Outcome statuses.
const (
	Stored    = "stored"
	Duplicate = "duplicate"
	Refused   = "refused"
)

// overlay is a batch's working state: changed or new records over the
// store's (copy on write).
type overlay struct {
	s       *Store
	changed map[string]*Record
	order   []string
	journal []Entry
	deleted map[string]bool
	exact   map[string][]string // exactKey → ids of records new in the batch
	// at is the batch's transaction time (commit: zero = the clock then).
	at time.Time
}

func (s *Store) newOverlay() *overlay {
	return &overlay{s: s, changed: map[string]*Record{}, deleted: map[string]bool{}, exact: map[string][]string{}}
}

func (o *overlay) get(id string) *Record {
	if o.deleted[id] {
		return nil
	}
	if r := o.changed[id]; r != nil {
		return r
	}
	return o.s.recs[id]
}

// mut returns a writable copy of id.
func (o *overlay) mut(id string) *Record {
	if r := o.changed[id]; r != nil {
		return r
	}
	r := o.s.recs[id]
	if r == nil {
		return nil
	}
	c := r.clone()
	o.changed[id] = c
	o.order = append(o.order, id)
	return c
}

func (o *overlay) add(r *Record) {
	k := exactKey(r)
	o.exact[k] = append(o.exact[k], r.ID)
	o.changed[r.ID] = r
	o.order = append(o.order, r.ID)
}

// keyRecords returns the records of subject's keyed fact key as the batch
// sees them, by id (a record's subject and key never change).
func (o *overlay) keyRecords(subject, key string) []*Record {
	var out []*Record
	for id, r := range o.s.keyed[subjectKey(subject, key)] {
		if o.deleted[id] {
			continue
		}
		if c := o.changed[id]; c != nil {
			out = append(out, c)
		} else {
			out = append(out, r)
		}
	}
	for _, id := range o.order {
		if r := o.changed[id]; r != nil && r.Key == key && r.Subject == subject && o.s.recs[id] == nil && !o.deleted[id] {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *Record) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func (o *overlay) log(e Entry) { o.journal = append(o.journal, e) }

// normalize folds case, whitespace and trailing punctuation, the form
// under which two contents are exact duplicates.
func normalize(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return strings.TrimRightFunc(b.String(), func(r rune) bool { return unicode.IsPunct(r) })
}

// better reports whether a wins over b for the same key at the same valid
// time: better evidence, then grounded in a source, then not
// external_unverified, then recorded later, then the larger id.
func better(a, b *Record) bool {
	if x, y := a.Evidence.Rank(), b.Evidence.Rank(); x != y {
		return x > y
	}
	if x, y := a.Grounded(), b.Grounded(); x != y {
		return x
	}
	if x, y := a.Trust != contract.ExternalUnverified, b.Trust != contract.ExternalUnverified; x != y {
		return x
	}
	if c := a.RecordedAt.Compare(b.RecordedAt); c != 0 {
		return c > 0
	}
	if a.Seq != b.Seq {
		return a.Seq > b.Seq
	}
	return a.ID > b.ID
}

// resolveKey recomputes a keyed fact's timeline over the batch's view:
// among the key's records that are not merged, the newest ValidFrom
// wins, ties broken by better(); each record's ValidTo is the next
// timeline record's ValidFrom (or its own ValidUntil if earlier) and all
// but the last are Superseded. When the key has a record that is not
// external_unverified, external_unverified records never enter the
// timeline (they are superseded on arrival: an unverified page cannot
// overwrite a fact). Nothing is deleted. It returns the ids it changed.
func (o *overlay) resolveKey(subject, key string) []string {
	if key == "" || o.s.o.AppendOnly {
		return nil
	}
	var cands []*Record
	trusted := false
	for _, r := range o.keyRecords(subject, key) {
		if r.Status == Merged {
			continue
		}
		cands = append(cands, r)
		if r.Trust != contract.ExternalUnverified {
			trusted = true
		}
	}
	type want struct {
		status Status
		to     time.Time
	}
	wants := map[string]want{}
	var line []*Record
	slices.SortFunc(cands, func(a, b *Record) int {
		if c := a.ValidFrom.Compare(b.ValidFrom); c != 0 {
			return c
		}
		if better(a, b) {
			return 1
		}
		return -1
	})
	for i, r := range cands {
		switch {
		case trusted && r.Trust == contract.ExternalUnverified,
			i+1 < len(cands) && cands[i+1].ValidFrom.Equal(r.ValidFrom): // a tie lost
			wants[r.ID] = want{Superseded, r.ValidFrom}
		default:
			line = append(line, r)
		}
	}
	for i, r := range line {
		w := want{Active, r.ValidUntil}
		if i+1 < len(line) {
			w.status = Superseded
			if next := line[i+1].ValidFrom; w.to.IsZero() || next.Before(w.to) {
				w.to = next
			}
		}
		wants[r.ID] = w
	}
	var changed []string
	for _, r := range cands {
		w := wants[r.ID]
		if r.Status != w.status || !r.ValidTo.Equal(w.to) {
			m := o.mut(r.ID)
			if m == nil { // new in this batch: already writable
				m = r
			}
			m.Status, m.ValidTo = w.status, w.to
			changed = append(changed, r.ID)
		}
	}
	return changed
}

func truncMS(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return time.UnixMilli(t.UnixMilli()).UTC()
}

// admit checks one write and returns the record to store, or a refusal
// reason.
func (s *Store) admit(w *Write, now time.Time) (*Record, string, int) {
	switch {
	case strings.TrimSpace(w.Subject) == "" || !utf8.ValidString(w.Subject):
		return nil, RefusalNoSubject, 0
	case strings.TrimSpace(w.Provenance) == "" || !utf8.ValidString(w.Provenance):
		return nil, RefusalNoProvenance, 0
	case strings.TrimSpace(w.Content) == "" || !utf8.ValidString(w.Content):
		return nil, RefusalNoContent, 0
	case !w.Kind.Valid():
		return nil, RefusalBadKind, 0
	case w.Evidence != "" && !w.Evidence.Valid():
		return nil, RefusalBadEvidence, 0
	case w.Trust != "" && !w.Trust.Valid():
		return nil, RefusalBadTrust, 0
	case !utf8.ValidString(w.Key) || strings.ContainsAny(w.Key, "\x00\n"):
		return nil, RefusalBadKind, 0
	}
	ev := w.Evidence
	if ev == "" {
		ev = Observed
	}
	trust := contract.Derived // memory is a derived record, never a source
	if w.Trust == contract.ExternalUnverified {
		trust = contract.ExternalUnverified
	}
	from := truncMS(w.ValidFrom)
	if from.IsZero() {
		from = now
	}
	until := truncMS(w.ValidUntil)
	if !until.IsZero() && !until.After(from) {
		return nil, RefusalBadValidity, 0
	}
	content, n := w.Content, 0
	if red := redact.Secrets(content); red.Count > 0 {
		if s.o.Policy.Secrets == SecretsRefuse {
			return nil, RefusalSecret, red.Count
		}
		content, n = red.Text, red.Count
	}
	weight := 1.0
	if w.Kind == Lesson && ev == SelfReport {
		if s.o.Policy.SelfReport == SelfReportRefuse {
			return nil, RefusalSelfReport, n
		}
		weight = s.o.Policy.SelfReportWeight
	}
	r := &Record{Subject: w.Subject, Kind: w.Kind, Key: w.Key, Content: content,
		Provenance: redactURI(w.Provenance), Evidence: ev, Trust: trust, ValidFrom: from,
		ValidUntil: until, ValidTo: until, RecordedAt: now, Status: Active, Weight: weight,
		DerivedFrom: slices.Clone(w.DerivedFrom), SourceHash: w.SourceHash, Redactions: n,
		Vector: slices.Clone(w.Vector)}
	s.lastSeq++
	r.Seq = s.lastSeq
	return r, "", n
}

// Remember admits and writes ws as one atomic batch (one collection
// write, journal entries included). Each write is checked by the runtime:
// no subject, provenance or content, an unknown kind, evidence or trust,
// or a ValidUntil not after ValidFrom is refused; secrets are redacted
// (or the write refused, Policy.Secrets) and counted; a self-reported
// lesson is stored with Weight Policy.SelfReportWeight (or refused);
// trust is derived, or external_unverified when the write says so (never
// authoritative). An exact restatement (same subject, kind, key and
// normalised content as a record that is not superseded) adds its
// provenance to that record instead of storing a copy. A keyed write is
// resolved against the key's records (resolveKey): the loser is
// superseded, its ValidTo set, never deleted. Refusals are per write
// (Outcome); a failed IfVersion / IfAbsent check fails the whole batch
// with a *ConflictError carrying the current record, and nothing is
// written. Other errors: the collection's.
func (s *Store) Remember(ctx context.Context, ws []Write) ([]Outcome, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := truncMS(s.o.Now())
	// Optimistic concurrency first: a conflict writes nothing.
	for i := range ws {
		w := &ws[i]
		if w.IfVersion == "" && !w.IfAbsent {
			continue
		}
		var cur *Record
		switch {
		case w.Replaces != "":
			if r := s.recs[w.Replaces]; r != nil && r.Subject == w.Subject {
				cur = r
			}
		case w.Key != "":
			cur = s.currentLocked(w.Subject, w.Key, now)
		default:
			return nil, fmt.Errorf("%w: write %d: if_version needs replaces or key", ErrInvalid, i)
		}
		if (w.IfAbsent && cur != nil) || (!w.IfAbsent && (cur == nil || cur.Version != w.IfVersion)) {
			var c *Record
			if cur != nil {
				c = cur.clone()
			}
			return nil, &ConflictError{Index: i, Expected: w.IfVersion, Current: c}
		}
	}
	ov := s.newOverlay()
	ov.at = now // the new records' RecordedAt and the changed records' state ends agree
	out := make([]Outcome, len(ws))
	st := s.stats
	st.Refused = map[string]int{}
	for k, v := range s.stats.Refused {
		st.Refused[k] = v
	}
	for i := range ws {
		w := &ws[i]
		r, reason, n := s.admit(w, now)
		if reason == "" && len(w.DerivedFrom) > 0 {
			for _, id := range w.DerivedFrom {
				in := ov.get(id)
				if in == nil || in.Subject != w.Subject {
					reason = RefusalBadDerived
					break
				}
				if in.Trust == contract.ExternalUnverified {
					r.Trust = contract.ExternalUnverified
				}
			}
		}
		if reason != "" {
			st.Refused[reason]++
			out[i] = Outcome{Status: Refused, Reason: reason, Redactions: n}
			continue
		}
		if n > 0 {
			st.Redacted++
			st.Secrets += n
		}
		if r.Weight < 1 {
			st.WeakHints++
		}
		if dup := s.findExact(ov, r); dup != nil && w.Replaces == "" {
			m := ov.mut(dup.ID)
			if m == nil {
				m = dup
			}
			if r.Provenance != m.Provenance && !slices.Contains(m.Sources, r.Provenance) {
				m.Sources = append(m.Sources, r.Provenance)
			}
			ov.log(Entry{Op: OpRestate, ID: m.ID, Provenance: r.Provenance, ContentHash: contentHash(r.Content)})
			st.Duplicates++
			out[i] = Outcome{Status: Duplicate, Record: m, Redactions: n}
			continue
		}
		s.seq++ // ids stay unique within one millisecond
		r.ID = newID(r.Subject, r.Kind, r.Key, r.Content, r.Provenance, now, s.seq)
		ov.add(r)
		ov.log(Entry{Op: OpWrite, ID: r.ID, Provenance: r.Provenance, ContentHash: contentHash(r.Content)})
		var sup []string
		if w.Replaces != "" {
			if old := ov.mut(w.Replaces); old != nil && old.Subject == r.Subject && !s.o.AppendOnly {
				prevTo := old.ValidTo
				if old.Key == r.Key && r.Key != "" {
					// the key's resolution below supersedes it
				} else {
					old.Status = Superseded
					if old.ValidTo.IsZero() || r.ValidFrom.Before(old.ValidTo) {
						old.ValidTo = r.ValidFrom
					}
					sup = append(sup, old.ID)
					ov.log(Entry{Op: OpSupersede, ID: old.ID, Provenance: r.Provenance, Target: r.ID,
						Reason: "replaced", PrevValidTo: ms0(prevTo)})
				}
			}
		}
		for _, id := range ov.resolveKey(r.Subject, r.Key) {
			if x := ov.get(id); x != nil && x.Status == Superseded && id != r.ID {
				sup = append(sup, id)
				ov.log(Entry{Op: OpSupersede, ID: id, Provenance: r.Provenance, Target: r.ID, Reason: "key " + r.Key})
			}
		}
		st.Admitted++
		out[i] = Outcome{Status: Stored, Record: r, Redactions: n, Superseded: sup}
	}
	if err := s.commit(ctx, ov); err != nil {
		return nil, err
	}
	s.stats = st
	for i := range out {
		if out[i].Record != nil {
			out[i].Record = out[i].Record.clone()
		}
	}
	return out, nil
}

func ms0(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// findExact returns a record that r restates exactly, or nil.
func (s *Store) findExact(ov *overlay, r *Record) *Record {
	if s.o.AppendOnly {
		return nil
	}
	k := exactKey(r)
	cands := append(slices.Clone(s.exact[k]), ov.exact[k]...)
	slices.Sort(cands)
	for _, id := range cands {
		x := ov.get(id)
		if x == nil || x.Status == Superseded {
			continue
		}
		if x.Status == Merged {
			if c := ov.get(x.MergedInto); c != nil {
				return c
			}
		}
		return x
	}
	return nil
}

// commit writes the overlay's changed records, deletions and journal
// entries as one collection batch, then installs them.
func (s *Store) commit(ctx context.Context, ov *overlay) error {
	if len(ov.order) == 0 && len(ov.deleted) == 0 && len(ov.journal) == 0 {
		return nil
	}
	now := ov.at
	if now.IsZero() {
		now = truncMS(s.o.Now())
	}
	var docs []contract.Document
	for _, id := range ov.order {
		if ov.deleted[id] {
			continue
		}
		r := ov.changed[id]
		if old := s.recs[id]; old != nil {
			// A changed record keeps the state it leaves (transaction
			// time); an unchanged one is written as it was.
			if r.computeVersion() == old.Version {
				r.Version = old.Version
			} else {
				r.Prior = append(r.Prior, old.state(now))
				r.Version = r.computeVersion()
			}
		} else {
			r.Version = r.computeVersion()
		}
		docs = append(docs, r.toDoc())
	}
	seq := s.seq
	for i := range ov.journal {
		e := &ov.journal[i]
		seq++
		e.Seq, e.At = seq, now
		if r := ov.changed[e.ID]; r != nil && e.Version == "" && !ov.deleted[e.ID] {
			e.Version = r.Version
		}
	}
	if len(ov.journal) > 0 {
		d, err := journalDoc(ov.journal)
		if err != nil {
			return err
		}
		docs = append(docs, d)
	}
	if len(ov.deleted) > 0 {
		ids := make([]string, 0, len(ov.deleted))
		for id := range ov.deleted {
			if s.recs[id] != nil {
				ids = append(ids, recPrefix+id)
			}
		}
		slices.Sort(ids)
		if len(ids) > 0 {
			// A delete and an upsert are two collection batches; the
			// journal entries (tombstones) go with the delete's upsert
			// after it, so a crash between them leaves records deleted
			// and journaled by replaying Open's state (no content).
			if _, err := s.col.Delete(ctx, ids); err != nil {
				return err
			}
		}
	}
	if len(docs) > 0 {
		for start := 0; start < len(docs); start += writeChunk {
			end := min(start+writeChunk, len(docs))
			if _, err := s.col.Upsert(ctx, docs[start:end]); err != nil {
				return err
			}
		}
	}
	s.seq = seq
	for id := range ov.deleted {
		if s.recs[id] != nil {
			s.dirty = true
			s.stats.Deleted++
		}
		s.drop(id)
	}
	for _, id := range ov.order {
		if !ov.deleted[id] {
			s.put(ov.changed[id])
		}
	}
	return nil
}

// writeChunk bounds the documents of one collection batch.
const writeChunk = 4096
