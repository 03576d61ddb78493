package memory

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/zeebo/blake3"
)

// Kind is a record's kind.
type Kind string

// The record kinds.
const (
	Preference Kind = "preference"
	Fact       Kind = "fact"
	Lesson     Kind = "lesson"
	Episode    Kind = "episode"
	Note       Kind = "note"
)

// Valid reports whether k is one of the five kinds.
func (k Kind) Valid() bool {
	switch k {
	case Preference, Fact, Lesson, Episode, Note:
		return true
	}
	return false
}

// Kinds lists every kind.
var Kinds = []Kind{Preference, Fact, Lesson, Episode, Note}

// Evidence is how well a record is supported, best first: Verified (a test
// or check confirmed it), UserStated, Observed, SelfReport (the agent's own
// claim).
type Evidence string

// The evidence levels.
const (
	Verified   Evidence = "verified"
	UserStated Evidence = "user_stated"
	Observed   Evidence = "observed"
	SelfReport Evidence = "self_report"
)

// Rank orders evidence levels: Verified 4, UserStated 3, Observed 2,
// SelfReport 1, anything else 0.
func (e Evidence) Rank() int {
	switch e {
	case Verified:
		return 4
	case UserStated:
		return 3
	case Observed:
		return 2
	case SelfReport:
		return 1
	}
	return 0
}

// Valid reports whether e is one of the four levels.
func (e Evidence) Valid() bool { return e.Rank() > 0 }

// Status is a record's place in its history.
type Status string

// The statuses.
const (
	// Active records are current (recall returns them while valid).
	Active Status = "active"
	// Superseded records lost a keyed-fact resolution: their ValidTo ends
	// where the winner's validity starts. Recall returns them for an AsOf
	// inside their validity and in history.
	Superseded Status = "superseded"
	// Merged records are near-duplicates folded into MergedInto by
	// consolidation; recall never returns them (the canonical record
	// stands for them), History does.
	Merged Status = "merged"
)

// Record is one stored memory.
type Record struct {
	// ID is the record id: 32 lowercase hex digits.
	ID string `json:"id"`
	// Subject is the user, repository or tenant the record is about; it
	// scopes every read.
	Subject string `json:"subject"`
	Kind    Kind   `json:"kind"`
	// Key is an optional keyed-fact path, e.g. "contact.email".
	Key     string `json:"key,omitempty"`
	Content string `json:"content"`
	// Provenance is the URI of the trajectory, log or turn that produced
	// the record.
	Provenance string   `json:"provenance"`
	Evidence   Evidence `json:"evidence"`
	// Trust is derived, or external_unverified when the content came from
	// unverified text; memory never carries authority.
	Trust contract.Trust `json:"trust"`
	// ValidFrom and ValidTo bound the valid time [ValidFrom, ValidTo); a
	// zero ValidTo is open-ended. ValidUntil is the end the writer stated
	// (ValidTo is the earlier of it and a supersession).
	ValidFrom  time.Time `json:"valid_from"`
	ValidTo    time.Time `json:"valid_to,omitzero"`
	ValidUntil time.Time `json:"valid_until,omitzero"`
	// RecordedAt is the transaction time: when the store admitted it.
	RecordedAt time.Time `json:"recorded_at"`
	// Seq is the record's place in the store's admission order: a record
	// admitted later has a larger Seq (0: stored before Seq was kept). It
	// orders records whose times tie at the stored millisecond.
	Seq uint64 `json:"seq,omitempty"`
	// Version is BLAKE3-256 of the record's canonical fields, 64 hex.
	Version string `json:"version"`
	Status  Status `json:"status"`
	// Weight scales recall scores: 1, or Policy.SelfReportWeight for a
	// self-reported lesson.
	Weight float64 `json:"weight"`
	// Sources are further provenance URIs that restated the record
	// exactly (Provenance first is not repeated here).
	Sources []string `json:"sources,omitempty"`
	// MergedInto is the canonical record of a Merged record.
	MergedInto string `json:"merged_into,omitempty"`
	// DerivedFrom lists the record ids a derived record (a summary) was
	// built from; deleting any of them drops it.
	DerivedFrom []string `json:"derived_from,omitempty"`
	// SourceHash is the version hash of the provenance source's content
	// when the record was written ("" = not tracked); CheckSources
	// forgets the record when it no longer matches.
	SourceHash string `json:"source_hash,omitempty"`
	// Redactions counts the secrets admission removed from Content.
	Redactions int `json:"redactions,omitempty"`
	// Vector is the record's embedding, if any.
	Vector []float32 `json:"vector,omitempty"`
	// Prior is the record's earlier states in transaction time, oldest
	// first: each commit that changed the record (a supersession, merge,
	// un-merge, restatement, re-homing) appended the state it replaced,
	// with Until = that commit's time. The fields here are the state
	// believed since the last Until (or RecordedAt). KnownAt reads it.
	Prior []State `json:"prior,omitempty"`
}

// State is one past transaction-time state of a record: what the store
// held for it until Until (exclusive), from the previous state's Until or
// the record's RecordedAt.
type State struct {
	Until      time.Time `json:"until"`
	Status     Status    `json:"status"`
	ValidTo    time.Time `json:"valid_to,omitzero"`
	MergedInto string    `json:"merged_into,omitempty"`
	Provenance string    `json:"provenance"`
	Sources    []string  `json:"sources,omitempty"`
	Version    string    `json:"version"`
}

// KnownAt returns a copy of the record as the store held it at
// transaction time t (millisecond precision): nil when it was recorded
// after t, else its fields with Status, ValidTo, MergedInto, Provenance,
// Sources and Version of the state current at t, and Prior cut to the
// states that ended by t. A zero t is now (the current state).
func (r *Record) KnownAt(t time.Time) *Record {
	if t.IsZero() {
		return r.clone()
	}
	if r.RecordedAt.After(t) {
		return nil
	}
	c := r.clone()
	for i, st := range r.Prior {
		if st.Until.After(t) {
			c.Status, c.ValidTo, c.MergedInto, c.Provenance, c.Version = st.Status, st.ValidTo, st.MergedInto, st.Provenance, st.Version
			c.Sources = slices.Clone(st.Sources)
			c.Prior = c.Prior[:i]
			break
		}
	}
	return c
}

// state is r's current state, ending at until.
func (r *Record) state(until time.Time) State {
	return State{Until: until, Status: r.Status, ValidTo: r.ValidTo, MergedInto: r.MergedInto,
		Provenance: r.Provenance, Sources: slices.Clone(r.Sources), Version: r.Version}
}

// ValidAt reports whether t is inside [ValidFrom, ValidTo).
func (r *Record) ValidAt(t time.Time) bool {
	if t.Before(r.ValidFrom) {
		return false
	}
	return r.ValidTo.IsZero() || t.Before(r.ValidTo)
}

// Grounded reports whether the record is tied to a checkable source:
// verified evidence or a tracked source hash.
func (r *Record) Grounded() bool { return r.Evidence == Verified || r.SourceHash != "" }

// computeVersion hashes the record's fields that a write can change.
func (r *Record) computeVersion() string {
	h := blake3.New()
	w := func(s string) {
		var n [8]byte
		l := uint64(len(s))
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		_, _ = h.Write(n[:])
		_, _ = h.Write([]byte(s))
	}
	w(r.ID)
	w(r.Subject)
	w(string(r.Kind))
	w(r.Key)
	w(r.Content)
	w(r.Provenance)
	w(string(r.Evidence))
	w(string(r.Trust))
	w(timeKey(r.ValidFrom))
	w(timeKey(r.ValidTo))
	w(timeKey(r.ValidUntil))
	w(timeKey(r.RecordedAt))
	w(string(r.Status))
	w(strconv.FormatFloat(r.Weight, 'g', -1, 64))
	w(strings.Join(r.Sources, "\x00"))
	w(r.MergedInto)
	w(strings.Join(r.DerivedFrom, "\x00"))
	w(r.SourceHash)
	for _, st := range r.Prior {
		w(timeKey(st.Until))
		w(st.Version)
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return hex.EncodeToString(sum[:])
}

func timeKey(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return strconv.FormatInt(t.UnixNano(), 10)
}

// contentHash is BLAKE3-256 of s, 64 hex: what the journal keeps of a
// record's text.
func contentHash(s string) string {
	sum := blake3.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// newID derives a record id from what makes a write unique.
func newID(subject string, kind Kind, key, content, prov string, recorded time.Time, seq uint64) string {
	sum := blake3.Sum256([]byte(subject + "\x00" + string(kind) + "\x00" + key + "\x00" + content + "\x00" + prov +
		"\x00" + timeKey(recorded) + "\x00" + strconv.FormatUint(seq, 10)))
	return hex.EncodeToString(sum[:16])
}

// Stored documents: one collection holds both the records (namespace
// "m/<escaped subject>/", id "m:<record id>") and the journal (namespace
// "j/", id "j:<20-digit sequence>").
const (
	recPrefix     = "m:"
	journalPrefix = "j:"
	journalNS     = "j/"
)

// subjectNamespace is the namespace of subject's records.
func subjectNamespace(subject string) string { return "m/" + url.PathEscape(subject) + "/" }

// Metadata fields of a record document.
const (
	fSubject    = "subject"
	fKind       = "kind"
	fKey        = "key"
	fEvidence   = "evidence"
	fStatus     = "status"
	fValidFrom  = "valid_from"
	fValidTo    = "valid_to"
	fValidUntil = "valid_until"
	fRecorded   = "recorded_at"
	fWeight     = "weight"
	fSources    = "sources"
	fMergedInto = "merged_into"
	fDerived    = "derived_from"
	fSourceHash = "source_hash"
	fRedactions = "redactions_admitted"
	fEntry      = "entry"
	fPrior      = "prior"
	fSeq        = "seq"
)

// openEnd stands for an open ValidTo in the valid_to field (milliseconds,
// the year 9999), so a range filter needs no missing-field case.
const openEnd = 253402300799000

func ms(t time.Time) float64 { return float64(t.UnixMilli()) }

func fromMS(f float64) time.Time {
	if f == 0 || f >= openEnd {
		return time.Time{}
	}
	return time.UnixMilli(int64(f)).UTC()
}

// toDoc encodes r as a collection document. Times are stored in
// milliseconds (their precision in the store).
func (r *Record) toDoc() contract.Document {
	m := map[string]contract.Value{
		fSubject:   contract.String(r.Subject),
		fKind:      contract.String(string(r.Kind)),
		fEvidence:  contract.String(string(r.Evidence)),
		fStatus:    contract.String(string(r.Status)),
		fValidFrom: contract.Number(ms(r.ValidFrom)),
		fRecorded:  contract.Number(ms(r.RecordedAt)),
		fWeight:    contract.Number(r.Weight),
	}
	if r.Seq != 0 {
		m[fSeq] = contract.Number(float64(r.Seq))
	}
	if r.ValidTo.IsZero() {
		m[fValidTo] = contract.Number(openEnd)
	} else {
		m[fValidTo] = contract.Number(ms(r.ValidTo))
	}
	if !r.ValidUntil.IsZero() {
		m[fValidUntil] = contract.Number(ms(r.ValidUntil))
	}
	if r.Key != "" {
		m[fKey] = contract.String(r.Key)
	}
	if len(r.Sources) > 0 {
		m[fSources] = contract.Strings(r.Sources...)
	}
	if r.MergedInto != "" {
		m[fMergedInto] = contract.String(r.MergedInto)
	}
	if len(r.DerivedFrom) > 0 {
		m[fDerived] = contract.Strings(r.DerivedFrom...)
	}
	if r.SourceHash != "" {
		m[fSourceHash] = contract.String(r.SourceHash)
	}
	if r.Redactions > 0 {
		m[fRedactions] = contract.Number(float64(r.Redactions))
	}
	if len(r.Prior) > 0 {
		b, _ := json.Marshal(r.Prior) // State holds strings and times only
		m[fPrior] = contract.String(string(b))
	}
	return contract.Document{ID: recPrefix + r.ID, Content: r.Content, Vector: r.Vector,
		SourceURI: r.Provenance, Metadata: m, Namespace: subjectNamespace(r.Subject),
		Trust: r.Trust, VersionHash: r.Version}
}

// errBadDoc reports a stored document that does not decode as a record.
var errBadDoc = errors.New("memory: stored record is malformed")

// fromDoc decodes a record document (toDoc's inverse).
func fromDoc(d contract.Document) (*Record, error) {
	id, ok := strings.CutPrefix(d.ID, recPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: id %q", errBadDoc, d.ID)
	}
	str := func(k string) string { s, _ := d.Metadata[k].Str(); return s }
	num := func(k string) float64 { f, _ := d.Metadata[k].Num(); return f }
	list := func(k string) []string { l, _ := d.Metadata[k].List(); return slices.Clone(l) }
	r := &Record{ID: id, Subject: str(fSubject), Kind: Kind(str(fKind)), Key: str(fKey), Content: d.Content,
		Provenance: d.SourceURI, Evidence: Evidence(str(fEvidence)), Trust: d.Trust,
		ValidFrom: fromMS(num(fValidFrom)), ValidTo: fromMS(num(fValidTo)), ValidUntil: fromMS(num(fValidUntil)),
		RecordedAt: fromMS(num(fRecorded)), Version: d.VersionHash, Status: Status(str(fStatus)),
		Weight: num(fWeight), Sources: list(fSources), MergedInto: str(fMergedInto),
		DerivedFrom: list(fDerived), SourceHash: str(fSourceHash), Redactions: int(num(fRedactions)),
		Vector: d.Vector}
	if f := num(fSeq); f > 0 && f < 1<<53 && f == math.Trunc(f) {
		r.Seq = uint64(f)
	}
	if r.Subject == "" || !r.Kind.Valid() || math.IsNaN(r.Weight) {
		return nil, fmt.Errorf("%w: %s", errBadDoc, d.ID)
	}
	if p := str(fPrior); p != "" {
		if err := json.Unmarshal([]byte(p), &r.Prior); err != nil {
			return nil, fmt.Errorf("%w: %s: prior states: %v", errBadDoc, d.ID, err)
		}
	}
	return r, nil
}

func (r *Record) clone() *Record {
	c := *r
	c.Sources = slices.Clone(r.Sources)
	c.DerivedFrom = slices.Clone(r.DerivedFrom)
	c.Prior = slices.Clone(r.Prior)
	return &c
}
