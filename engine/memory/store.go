package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/redact"
)

// SecretPolicy is what admission does with a secret in a write's content.
type SecretPolicy string

// Secret policies.
const (
	// SecretsRedact replaces each secret with "[REDACTED:<rule-id>]"
	// (package engine/redact) and stores the record. The default.
	SecretsRedact SecretPolicy = "redact"
	// SecretsRefuse refuses the write.
	SecretsRefuse SecretPolicy = "refuse"
)

// SelfReportPolicy is what admission does with a self-reported lesson.
type SelfReportPolicy string

// Self-report policies.
const (
	// SelfReportWeak stores it with Weight = Policy.SelfReportWeight. The
	// default.
	SelfReportWeak SelfReportPolicy = "weak"
	// SelfReportRefuse refuses it.
	SelfReportRefuse SelfReportPolicy = "refuse"
)

// Retention bounds one kind's records per subject.
type Retention struct {
	// TTL forgets a record once RecordedAt + TTL has passed (0 = none).
	TTL time.Duration
	// Capacity keeps at most this many active records per subject
	// (0 = unbounded); Expire drops the lowest retention scores.
	Capacity int
}

// Policy is the admission and retention policy.
type Policy struct {
	Secrets    SecretPolicy
	SelfReport SelfReportPolicy
	// SelfReportWeight is a weak hint's Weight, in (0,1]. Default 0.25.
	SelfReportWeight float64
	// Retention per kind (Expire).
	Retention map[Kind]Retention
	// NearDupJaccard is the word-3-shingle Jaccard similarity at or above
	// which consolidation merges two records. Default DefaultNearDupJaccard.
	NearDupJaccard float64
	// NearDupCosine, in (0,1], is the vector cosine at or above which two
	// records with vectors are also near-duplicates (merged by
	// Consolidate, deleted with each other by Delete). Default 0: off.
	// With the built-in static embedder no threshold separates
	// restatements from different facts on the memgen stream
	// (restatements ≥ 0.77, different facts up to 0.93; one topic with
	// two different known values up to 1.0; bench/results/notes/memory.md
	// "Near-duplicate threshold"), so vectors decide nothing unless a
	// caller with a better embedder sets a measured threshold.
	NearDupCosine float64
}

func (p *Policy) ensureDefaults() {
	if p.Secrets == "" {
		p.Secrets = SecretsRedact
	}
	if p.SelfReport == "" {
		p.SelfReport = SelfReportWeak
	}
	if p.SelfReportWeight == 0 {
		p.SelfReportWeight = 0.25
	}
	if p.NearDupJaccard == 0 {
		p.NearDupJaccard = DefaultNearDupJaccard
	}
}

func (p *Policy) validate() error {
	var errs []error
	if p.Secrets != SecretsRedact && p.Secrets != SecretsRefuse {
		errs = append(errs, fmt.Errorf("memory: Policy.Secrets %q: want redact or refuse", p.Secrets))
	}
	if p.SelfReport != SelfReportWeak && p.SelfReport != SelfReportRefuse {
		errs = append(errs, fmt.Errorf("memory: Policy.SelfReport %q: want weak or refuse", p.SelfReport))
	}
	if !(p.SelfReportWeight > 0 && p.SelfReportWeight <= 1) {
		errs = append(errs, fmt.Errorf("memory: Policy.SelfReportWeight %v outside (0,1]", p.SelfReportWeight))
	}
	if !(p.NearDupJaccard > 0 && p.NearDupJaccard <= 1) {
		errs = append(errs, fmt.Errorf("memory: Policy.NearDupJaccard %v outside (0,1]", p.NearDupJaccard))
	}
	if !(p.NearDupCosine >= 0 && p.NearDupCosine <= 1) {
		errs = append(errs, fmt.Errorf("memory: Policy.NearDupCosine %v outside [0,1] (0 = off)", p.NearDupCosine))
	}
	for k, r := range p.Retention {
		if !k.Valid() || r.TTL < 0 || r.Capacity < 0 {
			errs = append(errs, fmt.Errorf("memory: Policy.Retention[%q] invalid", k))
		}
	}
	return errors.Join(errs...)
}

// Options configures a Store.
type Options struct {
	// Policy is the admission and retention policy.
	Policy Policy
	// AppendOnly turns off everything but appending: no exact-duplicate
	// folding, no keyed-fact resolution (every keyed record stays
	// active), and Consolidate merges nothing. The benchmark's baseline.
	AppendOnly bool
	// Now is the clock (default time.Now); tests fix it.
	Now func() time.Time
}

// Store is a subject-scoped memory store over one engine collection.
// Safe for concurrent use: writes are serialised, recalls run in
// parallel with each other and with writes.
type Store struct {
	col *engine.Collection
	o   Options

	mu      sync.RWMutex // guards the fields below; held by writers for the whole write
	recs    map[string]*Record
	subj    map[string]map[string]*Record // subject → id → record
	exact   map[string][]string           // exactKey → ids (findExact)
	keyed   map[string]map[string]*Record // subjectKey(subject, key) → id → record, keyed records only
	seq     uint64                        // last journal sequence number
	lastSeq uint64                        // the largest Record.Seq issued or loaded
	stats   Stats
	dirty   bool // records were deleted since the last Purge
	access  map[string]*accessInfo
	accessM sync.Mutex
}

type accessInfo struct {
	n    int
	last time.Time
}

// Stats counts admission outcomes since Open.
type Stats struct {
	Admitted   int `json:"admitted"`
	Duplicates int `json:"duplicates"`
	// Refused counts refusals by reason (Refusal*).
	Refused map[string]int `json:"refused"`
	// Redacted counts records stored with secrets removed; Secrets the
	// secrets removed.
	Redacted int `json:"redacted"`
	Secrets  int `json:"secrets"`
	// WeakHints counts self-reported lessons stored with a lower weight.
	WeakHints int `json:"weak_hints"`
	Deleted   int `json:"deleted"`
}

// Refusal reasons (Outcome.Reason, Stats.Refused).
const (
	RefusalNoSubject    = "no_subject"
	RefusalNoProvenance = "no_provenance"
	RefusalNoContent    = "no_content"
	RefusalSecret       = "secret"
	RefusalSelfReport   = "self_report_lesson"
	RefusalBadKind      = "bad_kind"
	RefusalBadEvidence  = "bad_evidence"
	RefusalBadTrust     = "bad_trust"
	RefusalBadValidity  = "bad_validity"
	RefusalBadDerived   = "bad_derived_from"
)

// Errors.
var (
	// ErrConflict: a write's IfVersion no longer matches (a *ConflictError).
	ErrConflict = errors.New("memory: version conflict")
	// ErrNotFound: no such record.
	ErrNotFound = errors.New("memory: no such record")
	// ErrInvalid: a malformed request (a missing subject in a read, a bad
	// filter value).
	ErrInvalid = errors.New("memory: invalid request")
)

// ConflictError is a failed optimistic-concurrency check: the caller read
// Expected, the store holds Current (nil: the record or keyed fact no
// longer exists). Re-read, merge and write again with Current.Version.
type ConflictError struct {
	Index    int
	Expected string
	Current  *Record
}

func (e *ConflictError) Error() string {
	cur := "none"
	if e.Current != nil {
		cur = e.Current.Version
	}
	return fmt.Sprintf("memory: write %d: version conflict: expected %s, current %s", e.Index, e.Expected, cur)
}

// Is matches ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// CollectionOptions returns the options of a collection for a Store: the
// prose analyzer, the record fields indexed, cosine vectors of dim (≥ 1;
// records without vectors are searched lexically), and a MemTable of
// MemTableBytes, so most records sit in warm segments, whose scope and
// filter pass per query is cheaper than the MemTable's
// (bench/results/notes/memory.md).
func CollectionOptions(dim int) engine.CollectionOptions {
	return engine.CollectionOptions{Dim: dim, Metric: "cosine", Analyzer: engine.AnalyzerProse, MemTableSizeBytes: MemTableBytes,
		IndexedFields: map[string]engine.FieldType{
			fSubject: engine.FieldKeyword, fKind: engine.FieldKeyword, fKey: engine.FieldKeyword,
			fStatus: engine.FieldKeyword, fEvidence: engine.FieldKeyword,
			fValidFrom: engine.FieldNumber, fValidTo: engine.FieldNumber,
		}}
}

// MemTableBytes is CollectionOptions' MemTableSizeBytes: 8 MiB.
const MemTableBytes = 8 << 20

// Open opens a Store over col (created with CollectionOptions, or any
// collection whose documents only this Store writes) and loads its records
// and journal position. It costs one Get per stored document.
func Open(ctx context.Context, col *engine.Collection, o Options) (*Store, error) {
	o.Policy.ensureDefaults()
	if err := o.Policy.validate(); err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Store{col: col, o: o, recs: map[string]*Record{}, subj: map[string]map[string]*Record{}, exact: map[string][]string{},
		keyed:  map[string]map[string]*Record{},
		access: map[string]*accessInfo{}, stats: Stats{Refused: map[string]int{}}}
	after := ""
	for {
		ids, err := col.List(ctx, after, engine.MaxListLimit)
		if err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			break
		}
		for _, id := range ids {
			if j, ok := strings.CutPrefix(id, journalPrefix); ok {
				var n uint64
				if _, err := fmt.Sscanf(j, "%d", &n); err == nil && n > s.seq {
					s.seq = n
				}
				continue
			}
			if !strings.HasPrefix(id, recPrefix) {
				continue
			}
			d, err := col.Get(ctx, id)
			if err != nil {
				return nil, err
			}
			r, err := fromDoc(d)
			if err != nil {
				return nil, err
			}
			s.put(r)
			s.lastSeq = max(s.lastSeq, r.Seq)
		}
		after = ids[len(ids)-1]
	}
	return s, nil
}

// Collection returns the store's collection.
func (s *Store) Collection() *engine.Collection { return s.col }

// Stats returns the admission counters.
func (s *Store) Stats() Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.stats
	st.Refused = map[string]int{}
	for k, v := range s.stats.Refused {
		st.Refused[k] = v
	}
	return st
}

func (s *Store) put(r *Record) {
	if s.recs[r.ID] == nil {
		k := exactKey(r)
		s.exact[k] = append(s.exact[k], r.ID)
	}
	s.recs[r.ID] = r
	m := s.subj[r.Subject]
	if m == nil {
		m = map[string]*Record{}
		s.subj[r.Subject] = m
	}
	m[r.ID] = r
	if r.Key != "" {
		k := subjectKey(r.Subject, r.Key)
		km := s.keyed[k]
		if km == nil {
			km = map[string]*Record{}
			s.keyed[k] = km
		}
		km[r.ID] = r
	}
}

// subjectKey is the index key of subject's keyed fact key.
func subjectKey(subject, key string) string { return subject + "\x00" + key }

func (s *Store) drop(id string) {
	r := s.recs[id]
	if r == nil {
		return
	}
	delete(s.recs, id)
	k := exactKey(r)
	if ids := slices.DeleteFunc(s.exact[k], func(x string) bool { return x == id }); len(ids) > 0 {
		s.exact[k] = ids
	} else {
		delete(s.exact, k)
	}
	if m := s.subj[r.Subject]; m != nil {
		delete(m, id)
		if len(m) == 0 {
			delete(s.subj, r.Subject)
		}
	}
	if r.Key != "" {
		k := subjectKey(r.Subject, r.Key)
		if km := s.keyed[k]; km != nil {
			delete(km, id)
			if len(km) == 0 {
				delete(s.keyed, k)
			}
		}
	}
	s.accessM.Lock()
	delete(s.access, id)
	s.accessM.Unlock()
}

// Get returns a copy of record id of subject.
func (s *Store) Get(subject, id string) (*Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.recs[id]
	if r == nil || r.Subject != subject {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return r.clone(), nil
}

// Current returns the current value of keyed fact key of subject at time
// at (zero: now): the record valid then that is not merged, or ErrNotFound.
func (s *Store) Current(subject, key string, at time.Time) (*Record, error) {
	if at.IsZero() {
		at = s.o.Now()
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if r := s.currentLocked(subject, key, at); r != nil {
		return r.clone(), nil
	}
	return nil, fmt.Errorf("%w: %s %q", ErrNotFound, subject, key)
}

func (s *Store) currentLocked(subject, key string, at time.Time) *Record {
	var best *Record
	for _, r := range s.keyed[subjectKey(subject, key)] {
		if r.Key != key || r.Status == Merged || !r.ValidAt(at) {
			continue
		}
		if best == nil || better(r, best) {
			best = r
		}
	}
	return best
}

// History returns every record of subject's keyed fact key (or, with key
// "", every record of the subject), superseded and merged ones included,
// by ValidFrom, then RecordedAt, then admission order (Seq).
func (s *Store) History(subject, key string) []*Record { return s.HistoryAt(subject, key, time.Time{}) }

// HistoryAt is History as the store held it at transaction time knownAt
// (zero: now): the records recorded by then, each in its state then
// (Record.KnownAt). Records deleted since are not returned.
func (s *Store) HistoryAt(subject, key string, knownAt time.Time) []*Record {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*Record
	for _, r := range s.subj[subject] {
		if key == "" || r.Key == key {
			if v := r.KnownAt(knownAt); v != nil {
				out = append(out, v)
			}
		}
	}
	slices.SortFunc(out, func(a, b *Record) int {
		if c := a.ValidFrom.Compare(b.ValidFrom); c != 0 {
			return c
		}
		if c := a.RecordedAt.Compare(b.RecordedAt); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Seq, b.Seq); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// Len returns the number of stored records (every status).
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.recs)
}

// Records returns copies of subject's records (every status), by id.
func (s *Store) Records(subject string) []*Record {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*Record, 0, len(s.subj[subject]))
	for _, r := range s.subj[subject] {
		out = append(out, r.clone())
	}
	slices.SortFunc(out, func(a, b *Record) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Subjects returns the subjects holding records, sorted.
func (s *Store) Subjects() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.subj))
	for k := range s.subj {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// exactKey is what two records share when one restates the other
// exactly: subject, kind, key, trust and normalised content.
func exactKey(r *Record) string {
	return r.Subject + "\x00" + string(r.Kind) + "\x00" + r.Key + "\x00" + string(r.Trust) + "\x00" + normalize(r.Content)
}

// redactURI removes a password or token from a provenance URI.
func redactURI(u string) string {
	out, _, _ := redact.URI(u)
	return out
}
