package text

import (
	"errors"
	"fmt"
	"strings"
)

// Mode selects the tokenizer.
type Mode string

const (
	// ModeUnicode segments text into maximal runs of Unicode letters, digits
	// and combining marks, lower-cased with Unicode case mapping. It is the
	// default.
	ModeUnicode Mode = "unicode"
	// ModeOracle is the reference protocol of /work/shared/REFERENCE.md
	// ("Exact protocol"): the input is lower-cased and tokens are the
	// maximal runs matching [a-z0-9]+. Every other character separates.
	// Identifier splitting, stop-words and stemming still apply if set, but
	// the protocol uses none of them (see OracleOptions).
	ModeOracle Mode = "oracle"
)

// Options configures an Analyzer. The zero value is valid after
// EnsureDefaults: Unicode tokens, no identifier splitting, no stop-words, no
// stemming, tokens longer than 64 runes dropped.
type Options struct {
	// Mode is the tokenizer. Default ModeUnicode.
	Mode Mode
	// SplitIdentifiers makes code identifiers (snake_case, camelCase,
	// PascalCase, SCREAMING_CASE, kebab-case) one token that also yields its
	// parts at the same position. "_" always joins a token in this mode, and
	// "-" joins when both neighbours are letters or digits. Default false
	// (on in CodeOptions).
	SplitIdentifiers bool
	// StopWords names the stop-word list: "" (none, the default), "english"
	// or "russian" (the Snowball lists shipped with
	// github.com/kljensen/snowball). A stop-word is not emitted, but it
	// still consumes a position, so phrase adjacency stays truthful.
	StopWords string
	// Stemmer names the Snowball stemmer applied to every emitted term: ""
	// (none, the default), "english" or "russian"
	// (github.com/kljensen/snowball v0.10.0, Porter2 / Snowball Russian).
	Stemmer string
	// MaxTokenRunes drops tokens (whole identifiers and parts) longer than
	// this many runes; a dropped whole token consumes no position.
	// Default 64. Must be >= 1 after EnsureDefaults.
	MaxTokenRunes int
}

// CodeOptions returns the options for code fields: identifier splitting on,
// no stop-words, no stemming.
func CodeOptions() Options {
	return Options{Mode: ModeUnicode, SplitIdentifiers: true, MaxTokenRunes: 64}
}

// ProseOptions returns the options for prose fields: English stop-words and
// the English Snowball stemmer, no identifier splitting.
func ProseOptions() Options {
	return Options{Mode: ModeUnicode, StopWords: "english", Stemmer: "english", MaxTokenRunes: 64}
}

// OracleOptions returns the REFERENCE.md protocol analyzer: [a-z0-9]+ over
// lower-cased text, no stemming, no stop-words. MaxTokenRunes is set high
// enough never to drop a token of the test collections (the protocol has no
// length limit).
func OracleOptions() Options {
	return Options{Mode: ModeOracle, MaxTokenRunes: 1 << 30}
}

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.Mode == "" {
		o.Mode = ModeUnicode
	}
	if o.MaxTokenRunes == 0 {
		o.MaxTokenRunes = 64
	}
}

// ErrInvalidOptions is matched by every error Validate returns.
var ErrInvalidOptions = errors.New("text: invalid options")

// Validate reports every problem in o (after EnsureDefaults semantics: zero
// fields are accepted as "default").
func (o Options) Validate() error {
	var probs []string
	switch o.Mode {
	case "", ModeUnicode, ModeOracle:
	default:
		probs = append(probs, fmt.Sprintf("Mode %q: want %q or %q", o.Mode, ModeUnicode, ModeOracle))
	}
	switch o.StopWords {
	case "", "english", "russian":
	default:
		probs = append(probs, fmt.Sprintf("StopWords %q: want \"\", \"english\" or \"russian\"", o.StopWords))
	}
	switch o.Stemmer {
	case "", "english", "russian":
	default:
		probs = append(probs, fmt.Sprintf("Stemmer %q: want \"\", \"english\" or \"russian\"", o.Stemmer))
	}
	if o.MaxTokenRunes < 0 {
		probs = append(probs, fmt.Sprintf("MaxTokenRunes %d: want >= 1 (0 = default 64)", o.MaxTokenRunes))
	}
	if len(probs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrInvalidOptions, strings.Join(probs, "; "))
}
