package contract

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultBytesPerToken is the token-count estimate used by staging: one token
// per 4 bytes of UTF-8, rounded up. No tokenizer library is among the
// project's available Go modules, so staging uses this stated estimate. It is
// close for English prose under BPE tokenizers (cl100k ≈ 4 bytes/token) but
// undercounts dense code, digits and non-Latin scripts (often 2–3
// bytes/token); callers that need a hard model-context guarantee should set
// BytesPerToken lower or leave headroom in TokenBudget.
const DefaultBytesPerToken = 4

// StageOptions configures Stage. The zero value stages every hit in full.
type StageOptions struct {
	// MinScore is σ_min ∈ [0,1]; hits scoring below it are dropped. Default 0.
	MinScore float64
	// TokenBudget is S_budget: the total tokens of all framed hits, frame
	// tags included (≥ 0; 0 = no limit).
	TokenBudget int
	// MaxTokensPerHit is S_max: the tokens of one hit's framed body, the
	// escaped content between the tags (≥ 0; 0 = no limit).
	MaxTokensPerHit int
	// BytesPerToken is the estimate tokens(n bytes) = ⌈n / BytesPerToken⌉
	// (≥ 1). Default DefaultBytesPerToken (4).
	BytesPerToken int
	// Nonce is the frame nonce (16..64 ASCII letters and digits). Default: a
	// fresh 128-bit random nonce from crypto/rand per call. Set it only in tests.
	Nonce string
}

// StageOptionsFrom takes σ_min, S_budget and S_max from a query.
func StageOptionsFrom(q *Query) StageOptions {
	return StageOptions{MinScore: q.MinScore, TokenBudget: q.TokenBudget, MaxTokensPerHit: q.MaxTokensPerHit}
}

// EnsureDefaults fills BytesPerToken and Nonce.
func (o *StageOptions) EnsureDefaults() {
	if o.BytesPerToken == 0 {
		o.BytesPerToken = DefaultBytesPerToken
	}
	if o.Nonce == "" {
		o.Nonce = rand.Text() // 26 base32 characters, 128 bits
	}
}

// Validate reports every problem with o.
func (o *StageOptions) Validate() error {
	var errs []error
	if !(o.MinScore >= 0 && o.MinScore <= 1) {
		errs = append(errs, fmt.Errorf("contract: stage: MinScore must be in [0,1], got %v", o.MinScore))
	}
	if o.TokenBudget < 0 {
		errs = append(errs, fmt.Errorf("contract: stage: TokenBudget must be ≥ 0, got %d", o.TokenBudget))
	}
	if o.MaxTokensPerHit < 0 {
		errs = append(errs, fmt.Errorf("contract: stage: MaxTokensPerHit must be ≥ 0, got %d", o.MaxTokensPerHit))
	}
	if o.BytesPerToken < 0 {
		errs = append(errs, fmt.Errorf("contract: stage: BytesPerToken must be ≥ 1, got %d", o.BytesPerToken))
	}
	if o.Nonce != "" && !validNonce(o.Nonce) {
		errs = append(errs, errors.New("contract: stage: Nonce must be 16..64 ASCII letters and digits"))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
}

func validNonce(s string) bool {
	if len(s) < 16 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// Cut marks a truncated hit.
type Cut struct {
	// OmittedBytes is the number of bytes of the original content left out.
	OmittedBytes int `json:"omitted_bytes"`
	// ContinueOffset is the byte offset, within the original content (the
	// span that SourceURI names), at which the omitted tail starts:
	// original[ContinueOffset:] is exactly the omitted tail.
	ContinueOffset int `json:"continue_offset"`
}

// StagedHit is one hit ready to paste into a model's context.
type StagedHit struct {
	// Envelope is the hit; its Content is the sanitised, possibly truncated
	// text (not escaped).
	Envelope Envelope `json:"envelope"`
	// Framed is the framed, escaped text including its trailing newline.
	Framed string `json:"framed"`
	// Tokens is the estimated token count of Framed.
	Tokens int `json:"tokens"`
	// Cut is non-nil when the content was truncated.
	Cut *Cut `json:"cut,omitempty"`
	// Sanitized counts what sanitising removed or repaired.
	Sanitized SanitizeStats `json:"sanitized"`
}

// StagedResult is Stage's output.
type StagedResult struct {
	// Hits are the staged hits, by score descending then DocID ascending.
	Hits []StagedHit `json:"hits"`
	// Text is the concatenation of every hit's Framed text.
	Text string `json:"text"`
	// Nonce is the per-request nonce carried by every frame.
	Nonce string `json:"nonce"`
	// TokensUsed is Σ Tokens (≤ TokenBudget when one is set).
	TokensUsed int `json:"tokens_used"`
	// Dropped lists every hit left out, with its reason.
	Dropped []Dropped `json:"dropped,omitempty"`
}

// FrameName is the element name of an evidence frame.
const FrameName = "retrieved_evidence"

// checkHit runs the structural checks on a hit; it returns "" when it passes.
func checkHit(e *Envelope) (DropReason, string) {
	switch {
	case e.DocID == "":
		return DropMissingID, "empty doc_id"
	case !utf8.ValidString(e.DocID) || hasControl(e.DocID):
		return DropMissingID, "doc_id is not printable UTF-8"
	case !e.Trust.Valid():
		return DropInvalidTrust, "trust " + strconv.Quote(string(e.Trust))
	case !isHash(e.VersionHash):
		return DropInvalidHash, "version_hash is not 64 lowercase hex digits"
	case !(e.Score >= 0 && e.Score <= 1):
		return DropInvalidScore, "score " + strconv.FormatFloat(e.Score, 'g', -1, 64) + " outside [0,1]"
	case !utf8.ValidString(e.SourceURI) || hasControl(e.SourceURI):
		return DropInvalidURI, "source_uri is not printable UTF-8"
	}
	return "", ""
}

// hasControl reports whether s holds a character Sanitize would remove.
func hasControl(s string) bool {
	_, _, st := sanitizeMap(s, false)
	return st.Changed() || strings.ContainsAny(s, "\n\t")
}

// header returns the opening tag.
func header(e *Envelope, nonce string, cut *Cut) string {
	var b strings.Builder
	b.WriteString("<" + FrameName)
	b.WriteString(` id="` + escapeAttr(e.DocID) + `"`)
	b.WriteString(` trust="` + string(e.Trust) + `"`)
	b.WriteString(` uri="` + escapeAttr(e.SourceURI) + `"`)
	b.WriteString(` hash="` + e.VersionHash + `"`)
	b.WriteString(` nonce="` + nonce + `"`)
	if cut != nil {
		b.WriteString(` omitted_bytes="` + strconv.Itoa(cut.OmittedBytes) + `"`)
		b.WriteString(` continue_offset="` + strconv.Itoa(cut.ContinueOffset) + `"`)
	}
	b.WriteString(">")
	return b.String()
}

func footer(nonce string) string { return "</" + FrameName + ` nonce="` + nonce + `">` + "\n" }

func tokens(n, bpt int) int { return (n + bpt - 1) / bpt }

// Stage turns envelopes into framed, budgeted text for a model's context.
//
//  1. Structural checks: a hit with an empty or non-printable DocID, an
//     unknown Trust, a VersionHash that is not 64 lowercase hex digits, a
//     Score outside [0,1] (or NaN), or a SourceURI that is not printable
//     UTF-8 is dropped and reported in Dropped.
//  2. Hits scoring below MinScore are dropped (reported too); the rest are
//     sorted by Score descending, DocID ascending.
//  3. Content is sanitised (Sanitize) and escaped (EscapeText).
//  4. Budgets: each hit's body gets at most MaxTokensPerHit tokens, and all
//     framed hits together at most TokenBudget tokens, greedily in score
//     order. A hit whose frame alone no longer fits is dropped with reason
//     token_budget. A body over its allowance is cut at the best syntactic
//     boundary (see the package doc) and the frame records omitted_bytes and
//     continue_offset.
//  5. Framing: <retrieved_evidence id=… trust=… uri=… hash=… nonce=…
//     [omitted_bytes=… continue_offset=…]>\n BODY \n</retrieved_evidence
//     nonce=…>\n.
//
// Stage never modifies hits. It returns an error wrapping ErrInvalid only for
// invalid options.
func Stage(hits []Envelope, opts StageOptions) (StagedResult, error) {
	if err := opts.Validate(); err != nil {
		return StagedResult{}, err
	}
	opts.EnsureDefaults()
	res := StagedResult{Nonce: opts.Nonce}
	var ok []*Envelope
	for i := range hits {
		e := &hits[i]
		if reason, detail := checkHit(e); reason != "" {
			id := e.DocID
			if !utf8.ValidString(id) {
				id = strings.ToValidUTF8(id, "\uFFFD")
			}
			res.Dropped = append(res.Dropped, Dropped{DocID: id, Reason: reason, Detail: detail})
			continue
		}
		if e.Score < opts.MinScore {
			res.Dropped = append(res.Dropped, Dropped{DocID: e.DocID, Reason: DropBelowMinScore,
				Detail: fmt.Sprintf("score %.6g < min_score %.6g", e.Score, opts.MinScore)})
			continue
		}
		ok = append(ok, e)
	}
	slices.SortStableFunc(ok, func(a, b *Envelope) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.DocID, b.DocID)
	})

	bpt := opts.BytesPerToken
	foot := footer(opts.Nonce)
	var text strings.Builder
	for _, e := range ok {
		clean, ends, st := sanitizeMap(e.Content, true)
		// Worst-case frame overhead: cut attributes at their longest.
		worst := &Cut{OmittedBytes: len(e.Content), ContinueOffset: len(e.Content)}
		overhead := len(header(e, opts.Nonce, worst)) + 2 + len(foot)
		allowed := math.MaxInt // body tokens
		if opts.MaxTokensPerHit > 0 {
			allowed = opts.MaxTokensPerHit
		}
		if opts.TokenBudget > 0 {
			rem := opts.TokenBudget - res.TokensUsed - tokens(overhead, bpt)
			if rem < 0 || (rem == 0 && clean != "") {
				res.Dropped = append(res.Dropped, Dropped{DocID: e.DocID, Reason: DropTokenBudget,
					Detail: fmt.Sprintf("%d of %d tokens left", max(0, opts.TokenBudget-res.TokensUsed), opts.TokenBudget)})
				continue
			}
			allowed = min(allowed, rem)
		}
		keep, cut := len(clean), (*Cut)(nil)
		if allowed != math.MaxInt {
			maxBody := allowed * bpt
			if allowed > math.MaxInt/bpt {
				maxBody = math.MaxInt
			}
			keep = cutPoint(clean, maxBody)
			if keep < len(clean) {
				off := 0
				if keep > 0 {
					off = int(ends[keep-1])
				}
				cut = &Cut{OmittedBytes: len(e.Content) - off, ContinueOffset: off}
			}
		}
		env := *e
		env.Content = clean[:keep]
		framed := header(e, opts.Nonce, cut) + "\n" + EscapeText(env.Content) + "\n" + foot
		h := StagedHit{Envelope: env, Framed: framed, Tokens: tokens(len(framed), bpt), Cut: cut, Sanitized: st}
		res.TokensUsed += h.Tokens
		res.Hits = append(res.Hits, h)
		text.WriteString(framed)
	}
	res.Text = text.String()
	return res, nil
}

// FrameHit frames one hit in full (no budgets) with the given nonce. It
// returns an error wrapping ErrInvalid if the hit fails the structural checks
// of Stage or the nonce is invalid.
func FrameHit(e Envelope, nonce string) (string, error) {
	if !validNonce(nonce) {
		return "", fmt.Errorf("%w: frame: nonce must be 16..64 ASCII letters and digits", ErrInvalid)
	}
	if reason, detail := checkHit(&e); reason != "" {
		return "", fmt.Errorf("%w: frame: %s: %s", ErrInvalid, reason, detail)
	}
	clean, _ := Sanitize(e.Content)
	return header(&e, nonce, nil) + "\n" + EscapeText(clean) + "\n" + footer(nonce), nil
}

// Boundary classes, best first.
const (
	classWord    = 0 // between two runes not both identifier characters
	classLine    = 1 // after a newline
	classBrace   = 2 // after a newline at brace depth 0
	classBlank   = 3 // after a blank line
	classHeading = 4 // before a Markdown ATX heading line
)

// cutPoint returns the clean-prefix length to keep so that its escaped form
// fits maxBody bytes: len(clean) when it all fits, else the best boundary p
// with escaped(clean[:p]) ≤ maxBody. Among boundaries that keep at least half
// of the longest fitting prefix L it prefers the highest class, then the
// longest; when none does, the longest boundary of any class. p is always a
// rune boundary, never splits an identifier ([\pL\pN_]+) and never
// separates a combining mark from its base; p = 0 when nothing fits.
func cutPoint(clean string, maxBody int) int {
	// L: longest rune-boundary prefix whose escaped length fits.
	L, cost := 0, 0
	for L < len(clean) {
		r, size := utf8.DecodeRuneInString(clean[L:])
		c := escapedLen(r, size)
		if cost+c > maxBody {
			break
		}
		cost += c
		L += size
	}
	if L == len(clean) {
		return L
	}
	best, bestClass := -1, -1
	bestAny := -1
	consider := func(p, class int) {
		if p > bestAny {
			bestAny = p
		}
		if 2*p >= L && (class > bestClass || class == bestClass && p > best) {
			best, bestClass = p, class
		}
	}
	depth := 0
	for p := 0; p < L; p++ {
		switch clean[p] {
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		case '\n':
			q := p + 1
			class := classLine
			if depth == 0 {
				class = classBrace
			}
			if p > 0 && clean[p-1] == '\n' {
				class = classBlank
			}
			if isHeading(clean[q:]) {
				class = classHeading
			}
			consider(q, class)
		}
	}
	if best < 0 {
		// No line boundary keeps half: look for a word boundary.
		for p := L; p > 0; p-- {
			if !utf8.RuneStart(clean[p]) {
				continue
			}
			before, _ := utf8.DecodeLastRuneInString(clean[:p])
			after, _ := utf8.DecodeRuneInString(clean[p:])
			if !(isIdent(before) && isIdent(after)) && !unicode.Is(unicode.M, after) {
				consider(p, classWord)
				break
			}
		}
	}
	if best >= 0 {
		return best
	}
	return max(bestAny, 0)
}

func isIdent(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// isHeading reports whether s starts with a Markdown ATX heading: 1–6 '#'
// then a space or tab.
func isHeading(s string) bool {
	n := 0
	for n < len(s) && n < 7 && s[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && n < len(s) && (s[n] == ' ' || s[n] == '\t')
}
