package engine

import (
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/redact"
)

// RedactPolicy is the redaction-at-ingest policy (CollectionOptions.Redact);
// the detectors and the batch rewrite are package engine/redact, and Upsert
// applies the collection's policy.
type RedactPolicy = redact.Policy

// Redaction policies (CollectionOptions.Redact).
const (
	// RedactAuto redacts documents whose Trust is external_unverified.
	// The default.
	RedactAuto = redact.Auto
	// RedactAlways redacts every document.
	RedactAlways = redact.Always
	// RedactOff stores every document as given.
	RedactOff = redact.Off
)

// Metadata keys a redacted document carries (only when at least one secret
// was removed; a document without one is stored byte-identical).
const (
	// MetaRedactions is the number of secrets removed from the document's
	// content, string metadata values and source URI (a number).
	MetaRedactions = redact.MetaRedactions
	// MetaRedactionRules lists the distinct rule ids that fired, sorted
	// (a string list).
	MetaRedactionRules = redact.MetaRedactionRules
)

// RuleURIPassword is the redaction rule id of a password in a source URI's
// userinfo (scheme://user:password@host/...).
const RuleURIPassword = redact.RuleURIPassword

// Redaction is the outcome of redacting one text (redact.Redaction).
type Redaction = redact.Redaction

// RedactSecrets replaces every credential and high-entropy secret in s
// with "[REDACTED:<rule-id>]" (redact.Secrets).
func RedactSecrets(s string) Redaction { return redact.Secrets(s) }

// RedactionApplies reports whether the collection's Redact policy covers
// documents of trust t, so a caller that derives data from a document
// before Upsert (an ingester building the text it embeds) can redact that
// data with RedactSecrets exactly as Upsert will redact the content.
func (c *Collection) RedactionApplies(t contract.Trust) bool {
	return redact.Applies(c.o.Redact, t)
}

// redactDocs applies the collection's Redact policy to a validated write
// batch (redact.Documents; a document without a VersionHash gets the
// VersionHash of its unredacted Content).
func (c *Collection) redactDocs(docs []contract.Document) []contract.Document {
	return redact.Documents(c.o.Redact, docs, VersionHash)
}
