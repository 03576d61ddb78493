// Package memory is an agent's long-term memory over one engine
// collection: a write path where the runtime, not the model, decides what
// is admitted; subject-scoped recall; deterministic consolidation; and
// forgetting that reaches every stored copy.
//
// # Records
//
// A Record has a Subject (user, repository or tenant; required, it scopes
// every read), a Kind (preference | fact | lesson | episode | note),
// Content, an optional Key for keyed facts ("contact.email"), a
// Provenance URI (required: the trajectory, log or turn that produced
// it), an Evidence level (verified > user_stated > observed >
// self_report), the valid time [ValidFrom, ValidTo) kept apart from the
// transaction time RecordedAt, a Status (active | superseded | merged)
// and a Version (BLAKE3-256 of its fields, 64 hex). Memory is a derived
// record, never a source: Trust is derived, or external_unverified when
// the write came from unverified text, never authoritative.
//
// # Storage
//
// One collection (CollectionOptions: prose analyzer, subject, kind, key,
// status, evidence, valid_from and valid_to indexed) holds
//
//	m:<record id>   namespace m/<path-escaped subject>/   content, vector, metadata:
//	                subject kind key evidence status valid_from valid_to valid_until
//	                recorded_at (ms) weight sources merged_into derived_from source_hash
//	j:<last seq, 20 digits>  namespace j/   metadata entry = the JSON array of
//	                one commit's journal entries
//
// A write (Remember) is one collection batch holding its records and its
// journal document, so a record is never stored without its entry. The
// Store keeps every record in memory (Open loads them: one Get per
// document) for admission, resolution and consolidation; recall searches
// the collection (hot, warm and cold tiers). One Store per collection: a
// second Store, or writes to the collection made around the Store, are
// not seen until Open.
//
// # Admission (Remember)
//
// Refused, per write and counted in Stats: no subject, no provenance, no
// content, an unknown kind, evidence or trust, ValidUntil ≤ ValidFrom,
// derived_from naming a record of another subject; a secret (package
// engine/redact rules) is redacted or refused per Policy.Secrets; a
// self-reported lesson is stored with Weight Policy.SelfReportWeight
// (0.25) or refused per Policy.SelfReport. An exact restatement
// (normalised content, same kind, key and trust) adds its provenance to
// the existing record's Sources instead of a copy, so adding the same
// memory twice keeps one record. Optimistic concurrency: a write's
// IfVersion (or IfAbsent) is checked against the key's current record, or
// against Replaces; a mismatch fails the batch with a *ConflictError
// carrying the current record.
//
// # Keyed facts
//
// Every write to a key resolves its timeline (resolveKey): the newest
// ValidFrom wins; at equal ValidFrom the better evidence, then grounded
// (verified or with a SourceHash), then trusted, then the later
// RecordedAt, then the later admission (Seq); each loser is superseded
// with ValidTo = the next value's
// ValidFrom, never deleted. An external_unverified record never enters a
// timeline that has a trusted record. Recall returns the value valid at
// AsOf (default now); History returns every version.
//
// # Recall
//
// Recall searches the subject's namespace (hybrid with a vector or an
// embedder, else lexical BM25; without text, a listing), filtered by
// kind, key, status and validity at AsOf, scores × Weight, and frames
// every hit as evidence with contract.Stage (trust, provenance and version
// in the frame, content sanitised and escaped): a stored instruction
// comes back as quoted data.
//
// # Consolidation
//
// Consolidate merges near-duplicates among active records of one subject,
// kind and key: candidates from MinHash LSH (64 hashes, 16 bands × 4
// rows) over word unigram+bigram shingles, confirmed by the exact
// Jaccard ≥ Policy.NearDupJaccard (or, when a caller turns the rule on,
// vector cosine ≥ Policy.NearDupCosine; off by default: the built-in
// embedder does not separate restatements from different facts); the canonical record stays active, the others
// become merged (MergedInto). Deterministic: fixed hash parameters and
// id-ordered processing. The optional model hook (Summarize with a
// Summarizer, e.g. ChatSummarizer for an OpenAI-compatible
// /v1/chat/completions endpoint) writes an episode summary and
// self-reported lessons as derived records: DerivedFrom = the inputs,
// provenance memory:summary/<hash of the inputs' ids>, so deleting or
// rolling back any input drops them.
//
// # Journal, rollback, forgetting
//
// The journal is append-only and never holds content, keys or subjects:
// ids, provenance, versions, content hashes (Entry). Rollback(prov)
// deletes every record prov produced and every record derived from them,
// un-merges what was merged into them, re-resolves the keys they touched
// (restoring the values they superseded) and removes prov from Sources.
// Forgetting: superseded (resolution), source changed (CheckSources),
// retention (Expire: TTL and capacity per kind, RetentionScore), and
// delete by id (with every merged copy, near-duplicate and derived
// record), subject or provenance. Purge then rewrites the live documents
// so that compaction drops every segment and archive holding deleted
// bytes (see Purge for the cost).
package memory
