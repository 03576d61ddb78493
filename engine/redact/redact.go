// Package redact removes credentials and high-entropy secrets from text
// and source URIs before a document is stored (redaction at ingest):
// Secrets for text, URI for a source URI, Documents for a write batch
// under a collection's policy (Auto, Always, Off). The engine applies it
// in Collection.Upsert, before anything derives from the text (embedding,
// postings, doc store); ingesters that derive data from a document before
// Upsert (the text they embed) call Secrets themselves.
//
// Decision: gitleaks' rules as data, not gitleaks as a dependency.
// github.com/zricethezav/gitleaks/v8 v8.30.1 was evaluated in a scratch
// module holding a copy of our go.mod: `go get` added 59 modules (go mod
// graph: 153 → 1434 edges), among them spf13/viper and cobra, a wasm
// runtime (tetratelabs/wazero, for wasilibs/go-re2), mholt/archives with
// 7-zip/rar/xz/lz4/brotli readers and charmbracelet/lipgloss, and it
// upgrades golang.org/x/crypto. A program importing only its detect
// package took 21.2 s to build from a cold cache against 3.8 s for a
// trivial one (+17.4 s), and its binary was 12.9 MB against 2.3 MB. Its
// detector also applies path, commit and stopword allowlists meant for
// repository scans. So Strata embeds a curated subset of gitleaks'
// default rules (config/gitleaks.toml of v8.30.1) as data below: each
// rule keeps gitleaks' id, regular expression, keywords (the pre-filter:
// a rule's regex runs only when one of its keywords occurs in the
// lower-cased text) and Shannon-entropy threshold, and a few of its
// allowlists. Two rules of our own cover what gitleaks deliberately
// leaves to its generic rule: "bearer-token" (Authorization: Bearer …) and
// "password-assignment" (password= / secret: / api_key= with a literal
// value that need not be high-entropy).
//
// The gitleaks rules are used under its MIT licence:
//
//	MIT License
//
//	Copyright (c) 2019 Zachary Rice
//
//	Permission is hereby granted, free of charge, to any person obtaining a copy
//	of this software and associated documentation files (the "Software"), to deal
//	in the Software without restriction, including without limitation the rights
//	to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
//	copies of the Software, and to permit persons to whom the Software is
//	furnished to do so, subject to the following conditions:
//
//	The above copyright notice and this permission notice shall be included in all
//	copies or substantial portions of the Software.
//
//	THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
//	IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
//	FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
//	AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
//	LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
//	OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
//	SOFTWARE.

package redact

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/stratasearch/strata/engine/contract"
)

// Policy is a redaction policy (engine.CollectionOptions.Redact).
type Policy string

// Redaction policies.
const (
	// Auto redacts documents whose Trust is external_unverified. The
	// default.
	Auto Policy = "auto"
	// Always redacts every document.
	Always Policy = "always"
	// Off stores every document as given.
	Off Policy = "off"
)

// Validate reports an error unless p is Auto, Always or Off.
func (p Policy) Validate() error {
	switch p {
	case Auto, Always, Off:
		return nil
	}
	return fmt.Errorf("engine: collection option Redact = %q, want auto, always or off", string(p))
}

// Metadata keys a redacted document carries (only when at least one secret
// was removed; a document without one is stored byte-identical).
const (
	// MetaRedactions is the number of secrets removed from the document's
	// content, string metadata values and source URI (a number).
	MetaRedactions = "redactions"
	// MetaRedactionRules lists the distinct rule ids that fired, sorted
	// (a string list).
	MetaRedactionRules = "redaction_rules"
)

// secretRule is one detector: a regex whose group secretGroup (0 = the whole
// match) is the secret, run only when a keyword occurs in the lower-cased
// text, kept when the secret's Shannon entropy (bits per byte) is at least
// entropy and no allow pattern matches it (allowMatch: the whole match).
type secretRule struct {
	id          string
	re          *regexp.Regexp
	secretGroup int
	keywords    []string
	entropy     float64
	allow       []*regexp.Regexp
	allowMatch  []*regexp.Regexp
	// scan is scanWhole, scanLines or scanAnchored; anchored is re
	// anchored at its start (scanAnchored only).
	scan     int
	anchored *regexp.Regexp
	// prefix > 0 extends the match left over up to prefix bytes of
	// [A-Za-z0-9_.-] before allowMatch sees it.
	prefix int
	check  func(secret, match string) bool
}

// secretRules is the rule set, most specific first: when spans of several
// rules overlap, the earlier rule names the merged span.
var secretRules = []secretRule{
	// Private keys (gitleaks "private-key"): PEM blocks, also inside JSON
	// strings with \n escapes, as in a GCP service-account key file.
	{id: "private-key", re: regexp.MustCompile(`(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S-]{64,}?KEY(?: BLOCK)?-----`),
		keywords: []string{"-----begin"}},
	{id: "aws-access-token", re: regexp.MustCompile(`\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b`), secretGroup: 1,
		keywords: []string{"a3t", "akia", "asia", "abia", "acca"}, entropy: 3, allow: []*regexp.Regexp{regexp.MustCompile(`.+EXAMPLE$`)}},
	{id: "aws-amazon-bedrock-api-key-long-lived", re: regexp.MustCompile(`\b(ABSK[A-Za-z0-9+/]{109,269}={0,2})(?:[\x60'"\s;]|\\[nr]|$)`), secretGroup: 1,
		keywords: []string{"absk"}, entropy: 3},
	{id: "gcp-api-key", re: regexp.MustCompile(`\b(AIza[\w-]{35})(?:[\x60'"\s;]|\\[nr]|$)`), secretGroup: 1,
		keywords: []string{"aiza"}, entropy: 4},
	{id: "azure-ad-client-secret", re: regexp.MustCompile(`(?:^|[\\'"\x60\s>=:(,)])([a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.-]{31,34})(?:$|[\\'"\x60\s<),])`), secretGroup: 1,
		keywords: []string{"q~"}, entropy: 3},
	{id: "github-pat", re: regexp.MustCompile(`ghp_[0-9a-zA-Z]{36}`), keywords: []string{"ghp_"}, entropy: 3},
	{id: "github-fine-grained-pat", re: regexp.MustCompile(`github_pat_\w{82}`), keywords: []string{"github_pat_"}, entropy: 3},
	{id: "github-oauth", re: regexp.MustCompile(`gho_[0-9a-zA-Z]{36}`), keywords: []string{"gho_"}, entropy: 3},
	{id: "github-app-token", re: regexp.MustCompile(`(?:ghu|ghs)_[0-9a-zA-Z]{36}`), keywords: []string{"ghu_", "ghs_"}, entropy: 3},
	{id: "github-refresh-token", re: regexp.MustCompile(`ghr_[0-9a-zA-Z]{36}`), keywords: []string{"ghr_"}, entropy: 3},
	{id: "gitlab-pat-routable", re: regexp.MustCompile(`\bglpat-[0-9a-zA-Z_-]{27,300}\.[0-9a-z]{2}[0-9a-z]{7}\b`), keywords: []string{"glpat-"}, entropy: 4},
	{id: "gitlab-pat", re: regexp.MustCompile(`glpat-[\w-]{20}`), keywords: []string{"glpat-"}, entropy: 3},
	{id: "gitlab-ptt", re: regexp.MustCompile(`glptt-[0-9a-f]{40}`), keywords: []string{"glptt-"}, entropy: 3},
	{id: "gitlab-rrt", re: regexp.MustCompile(`GR1348941[\w-]{20}`), keywords: []string{"gr1348941"}, entropy: 3},
	{id: "gitlab-runner-authentication-token", re: regexp.MustCompile(`glrt-[0-9a-zA-Z_\-]{20}`), keywords: []string{"glrt-"}, entropy: 3},
	{id: "gitlab-deploy-token", re: regexp.MustCompile(`gldt-[0-9a-zA-Z_\-]{20}`), keywords: []string{"gldt-"}, entropy: 3},
	{id: "slack-bot-token", re: regexp.MustCompile(`xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*`), keywords: []string{"xoxb"}, entropy: 3},
	{id: "slack-user-token", re: regexp.MustCompile(`xox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28,34}`), keywords: []string{"xoxp-", "xoxe-"}, entropy: 2},
	{id: "slack-app-token", re: regexp.MustCompile(`(?i)xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+`), keywords: []string{"xapp"}, entropy: 2},
	{id: "slack-legacy-token", re: regexp.MustCompile(`xox[os]-\d+-\d+-\d+-[a-fA-F\d]+`), keywords: []string{"xoxo", "xoxs"}, entropy: 2},
	{id: "slack-webhook-url", re: regexp.MustCompile(`(?:https?://)?hooks.slack.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{43,56}`), keywords: []string{"hooks.slack.com"}},
	{id: "stripe-access-token", re: regexp.MustCompile(`\b((?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99})(?:[\x60'"\s;]|\\[nr]|$)`), secretGroup: 1,
		keywords: []string{"sk_test", "sk_live", "sk_prod", "rk_test", "rk_live", "rk_prod"}, entropy: 2},
	{id: "openai-api-key", re: regexp.MustCompile(`\b(sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})\b|sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20})(?:[\x60'"\s;]|\\[nr]|$)`), secretGroup: 1,
		keywords: []string{"t3blbkfj"}, entropy: 3},
	{id: "anthropic-api-key", re: regexp.MustCompile(`\b(sk-ant-api03-[a-zA-Z0-9_\-]{93}AA)(?:[\x60'"\s;]|\\[nr]|$)`), secretGroup: 1,
		keywords: []string{"sk-ant-api03"}},
	{id: "npm-access-token", re: regexp.MustCompile(`(?i)\b(npm_[a-z0-9]{36})(?:[\x60'"\s;]|\\[nr]|$)`), secretGroup: 1, keywords: []string{"npm_"}, entropy: 2},
	{id: "pypi-upload-token", re: regexp.MustCompile(`pypi-AgEIcHlwaS5vcmc[\w-]{50,1000}`), keywords: []string{"pypi-ageichlwas5vcmc"}, entropy: 3},
	{id: "sendgrid-api-token", re: regexp.MustCompile(`\b(SG\.(?i)[a-z0-9=_\-\.]{66})(?:[\x60'"\s;]|\\[nr]|$)`), secretGroup: 1, keywords: []string{"sg."}, entropy: 2},
	{id: "digitalocean-pat", re: regexp.MustCompile(`\b(dop_v1_[a-f0-9]{64})(?:[\x60'"\s;]|\\[nr]|$)`), secretGroup: 1, keywords: []string{"dop_v1_"}, entropy: 3},
	{id: "heroku-api-key-v2", re: regexp.MustCompile(`\b((HRKU-AA[0-9a-zA-Z_-]{58}))(?:[\x60'"\s;]|\\[nr]|$)`), secretGroup: 1, keywords: []string{"hrku-aa"}, entropy: 4},
	{id: "huggingface-access-token", re: regexp.MustCompile(`\b(hf_(?i:[a-z]{34}))(?:[\x60'"\s;]|\\[nr]|$)`), secretGroup: 1, keywords: []string{"hf_"}, entropy: 2},
	{id: "jwt", re: regexp.MustCompile(`\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9\/\\_-]{17,}\.(?:[a-zA-Z0-9\/\\_-]{10,}={0,2})?)(?:[\x60'"\s;]|\\[nr]|$)`), secretGroup: 1,
		keywords: []string{"eyj"}, entropy: 3}, // gitleaks: "ey"; a JWT header ({") always encodes as eyJ
	// Strata's own: a bearer credential in an Authorization header or
	// prose ("Bearer <token>"), at least 16 token characters.
	{id: "bearer-token", re: regexp.MustCompile(`(?i)\bbearer[ \t]+([A-Za-z0-9\-._~+/]{16,}=*)`), secretGroup: 1,
		keywords: []string{"bearer"}, entropy: 3},
	// Strata's own: password= / secret: / api_key= assignments with a
	// literal value (see passwordValue).
	{id: "password-assignment", re: regexp.MustCompile(`(?i)\b(?:password|passwd|pwd|passphrase|secret|client[_-]?secret|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|auth[_-]?token|access[_-]?token)["']?[ \t]*(?:=|:|=>|:=)[ \t]*(["'\x60]?)([^\s"'\x60,;]{4,200})(["'\x60]?)`),
		secretGroup: 2, keywords: []string{"pass", "pwd", "secret", "key", "token"}, check: passwordValue, scan: scanLines},
	// gitleaks "generic-api-key": a high-entropy value assigned to a
	// secret-ish name. Run unanchored over a whole text, this regex cost
	// ≈0.2 µs per byte of keyword-dense text (Go's regexp runs it as an
	// NFA); so it runs anchored at each keyword occurrence (scanAnchored),
	// ≈4 ms per 100 KB of Go source for the whole rule set. Anchoring
	// needs the keyword first: gitleaks' leading lazy [\w.-]{0,50}? is
	// dropped and the match is extended left over up to 50 such bytes
	// instead (prefix), as the leftmost match did, before the allowMatch
	// patterns see it.
	{id: "generic-api-key", prefix: 50, scan: scanAnchored, re: regexp.MustCompile(genericAPIKey), anchored: regexp.MustCompile(`^(?:` + genericAPIKey + `)`),
		secretGroup: 1, keywords: []string{"access", "api", "auth", "key", "credential", "creds", "passwd", "password", "secret", "token"}, entropy: 3.5,
		allow:      []*regexp.Regexp{regexp.MustCompile(`^[a-zA-Z_.-]+$`)},
		allowMatch: []*regexp.Regexp{regexp.MustCompile(`(?i)(?:access(?:ibility|or)|access[_.-]?id|random[_.-]?access|api[_.-]?(?:id|name|version)|rapid|capital|[a-z0-9-]*?api[a-z0-9-]*?:jar:|author|X-MS-Exchange-Organization-Auth|Authentication-Results|(?:credentials?[_.-]?id|withCredentials)|(?:bucket|foreign|hot|idx|natural|primary|pub(?:lic)?|schema|sequence)[_.-]?key|(?:turkey)|key[_.-]?(?:alias|board|code|frame|id|length|mesh|name|pair|press(?:ed)?|ring|selector|signature|size|stone|storetype|word|up|down|left|right)|key[_.-]?vault[_.-]?(?:id|name)|keyVaultToStoreSecrets|key(?:store|tab)[_.-]?(?:file|path)|issuerkeyhash|(?-i:[DdMm]onkey|[DM]ONKEY)|keying|(?:secret)[_.-]?(?:length|name|size)|UserSecretsId|(?:csrf)[_.-]?token|(?:io\.jsonwebtoken[ \t]?:[ \t]?[\w-]+)|(?:api|credentials|token)[_.-]?(?:endpoint|ur[il])|public[_.-]?token|(?:key|token)[_.-]?file)`)}},
}

// genericAPIKey is gitleaks' generic-api-key regex without its leading
// [\w.-]{0,50}? (see secretRule.prefix).
const genericAPIKey = `(?i)(?:access|auth|(?-i:[Aa]pi|API)|credential|creds|key|passw(?:or)?d|secret|token)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})(?:[\x60'"\s;]|\\[nr]|$)`

// identRE is a plain identifier, a dotted path or a call: code that names
// a value rather than a literal secret.
var identRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_.$]*(?:\(.*)?$`)

// passwordValue decides the password-assignment rule's value: a quoted
// literal of 4 or more bytes, or an unquoted value of 6 or more bytes that
// holds a digit or a symbol other than - and . ("my-tls-secret" is a name)
// and is not a call or a digit-free identifier or dotted path; never
// a placeholder (starting with $, <, {, % or *, or one repeated byte).
func passwordValue(secret, match string) bool {
	if secret == "" || strings.ContainsAny(secret[:1], "$<{%*[") {
		return false
	}
	if strings.Count(secret, secret[:1]) == len(secret) {
		return false // "xxxxxx", "******"
	}
	idx := strings.LastIndex(match, secret)
	if idx > 0 && strings.IndexByte("\"'`", match[idx-1]) >= 0 {
		// A quoted literal.
		return len(secret) >= 4
	}
	if len(secret) < 6 || strings.Contains(secret, "(") {
		return false
	}
	digitOrSym := strings.IndexFunc(secret, func(r rune) bool {
		return r >= '0' && r <= '9' || strings.ContainsRune("!@#$%^&*+/=?~:", r)
	}) >= 0
	if !digitOrSym {
		return false
	}
	// A digit-free identifier or dotted path names a value. One with
	// digits ("hunter2") is taken for a literal: a false positive on
	// "password = user1" is the accepted cost.
	if identRE.MatchString(secret) && !strings.ContainsAny(secret, "0123456789") {
		return false
	}
	return true
}

// Scan modes of a rule (secretRule.scan).
const (
	// scanWhole runs the regex over the whole text once any keyword occurs.
	scanWhole = iota
	// scanLines runs it over each line holding a keyword occurrence.
	scanLines
	// scanAnchored runs it anchored at each keyword occurrence, over a
	// window of anchoredWindow bytes (widened to the end of the text when
	// a match reaches the window's end). The regex must start with its
	// keyword alternation.
	scanAnchored
)

const anchoredWindow = 512

// find returns the rule's matches in s (lower: s with ASCII letters
// lower-cased, same length) as FindAllStringSubmatchIndex does, in s's
// coordinates; nothing unless a keyword occurs.
func (r *secretRule) find(s, lower string) [][]int {
	var occ []int
	for _, k := range r.keywords {
		for from := 0; ; {
			i := strings.Index(lower[from:], k)
			if i < 0 {
				break
			}
			occ = append(occ, from+i)
			from += i + 1
			if r.scan == scanWhole {
				break
			}
		}
	}
	if len(occ) == 0 {
		return nil
	}
	switch r.scan {
	case scanLines:
		sort.Ints(occ)
		var out [][]int
		end := -1
		for _, o := range occ {
			if o < end {
				continue
			}
			ls := strings.LastIndexByte(s[:o], '\n') + 1
			le := strings.IndexByte(s[o:], '\n')
			if le < 0 {
				le = len(s)
			} else {
				le += o
			}
			end = le
			for _, m := range r.re.FindAllStringSubmatchIndex(s[ls:le], -1) {
				out = append(out, shift(m, ls))
			}
		}
		return out
	case scanAnchored:
		sort.Ints(occ)
		occ = slices.Compact(occ)
		var out [][]int
		for _, o := range occ {
			end := min(len(s), o+anchoredWindow)
			m := r.anchored.FindStringSubmatchIndex(s[o:end])
			if m != nil && o+m[1] == end && end < len(s) {
				m = r.anchored.FindStringSubmatchIndex(s[o:])
			}
			if m != nil {
				out = append(out, shift(m, o))
			}
		}
		return out
	}
	return r.re.FindAllStringSubmatchIndex(s, -1)
}

func shift(m []int, by int) []int {
	for i := range m {
		if m[i] >= 0 {
			m[i] += by
		}
	}
	return m
}

// asciiLower lower-cases ASCII letters only, so byte offsets stay valid.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

// shannon is the Shannon entropy of s in bits per byte.
func shannon(s string) float64 {
	if s == "" {
		return 0
	}
	var n [256]int
	for i := 0; i < len(s); i++ {
		n[s[i]]++
	}
	h := 0.0
	l := float64(len(s))
	for _, c := range n {
		if c > 0 {
			p := float64(c) / l
			h -= p * math.Log2(p)
		}
	}
	return h
}

// Redaction is the outcome of redacting one text.
type Redaction struct {
	// Text is the text with every secret replaced by "[REDACTED:<rule-id>]".
	Text string
	// Count is the number of secrets replaced.
	Count int
	// Rules are the distinct rule ids that fired, sorted.
	Rules []string
}

type secretSpan struct {
	start, end int
	rule       int
}

// Secrets replaces every credential and high-entropy secret in s (the
// package's rule set: a curated subset of gitleaks
// v8.30.1's default rules plus "bearer-token" and "password-assignment")
// with "[REDACTED:<rule-id>]". Overlapping detections are merged into one
// replacement named by the most specific rule. s without a secret comes
// back unchanged (Count 0). Byte offsets refer to s; s must be valid UTF-8
// (every rule matches ASCII only, so a replacement never splits a rune).
func Secrets(s string) Redaction {
	return secrets(s, false)
}

// assignmentRules are the rules that find a secret by the name it is
// assigned to (password=…, api_key: …, Bearer …) rather than by its own
// shape; URI does not run them over a URI's host and path, where
// "secret:" or "key," is far more often a name than an assignment.
var assignmentRules = map[string]bool{"password-assignment": true, "generic-api-key": true, "bearer-token": true}

// secrets is Secrets; shapeOnly skips assignmentRules.
func secrets(s string, shapeOnly bool) Redaction {
	if s == "" {
		return Redaction{Text: s}
	}
	lower := asciiLower(s)
	var spans []secretSpan
	for ri := range secretRules {
		r := &secretRules[ri]
		if shapeOnly && assignmentRules[r.id] {
			continue
		}
	matches:
		for _, m := range r.find(s, lower) {
			g := r.secretGroup
			if 2*g+1 >= len(m) || m[2*g] < 0 {
				continue
			}
			st, en := m[2*g], m[2*g+1]
			ms := m[0]
			for k := 0; k < r.prefix && ms > 0 && isKeyByte(s[ms-1]); k++ {
				ms--
			}
			secret, match := s[st:en], s[ms:m[1]]
			if r.entropy > 0 && shannon(secret) < r.entropy {
				continue
			}
			for _, a := range r.allow {
				if a.MatchString(secret) {
					continue matches
				}
			}
			for _, a := range r.allowMatch {
				if a.MatchString(match) {
					continue matches
				}
			}
			if r.check != nil && !r.check(secret, match) {
				continue
			}
			spans = append(spans, secretSpan{st, en, ri})
		}
	}
	if len(spans) == 0 {
		return Redaction{Text: s}
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].rule < spans[j].rule
	})
	merged := spans[:1]
	for _, sp := range spans[1:] {
		cur := &merged[len(merged)-1]
		if sp.start < cur.end {
			cur.end = max(cur.end, sp.end)
			cur.rule = min(cur.rule, sp.rule)
			continue
		}
		merged = append(merged, sp)
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	var rules []string
	for _, sp := range merged {
		b.WriteString(s[last:sp.start])
		id := secretRules[sp.rule].id
		b.WriteString("[REDACTED:")
		b.WriteString(id)
		b.WriteByte(']')
		last = sp.end
		if !slices.Contains(rules, id) {
			rules = append(rules, id)
		}
	}
	b.WriteString(s[last:])
	sort.Strings(rules)
	return Redaction{Text: b.String(), Count: len(merged), Rules: rules}
}

// Applies reports whether the redaction policy (Auto, Always, Off; ""
// is Auto) covers a document of trust t.
func Applies(policy Policy, t contract.Trust) bool {
	switch policy {
	case Always:
		return true
	case Off:
		return false
	default: // Auto
		return t == contract.ExternalUnverified
	}
}

// Documents applies the redaction policy to a validated write batch and
// returns the batch to store. docs itself is never modified: a document
// with a secret is copied, its Content, string metadata values and
// SourceURI (URI) redacted, MetaRedactions / MetaRedactionRules set in its
// metadata, and — when it had no VersionHash — its VersionHash set to
// versionHash of the source Content before redaction (DESIGN.md "Data
// model"). Documents without a secret are returned unchanged
// (byte-identical).
func Documents(policy Policy, docs []contract.Document, versionHash func([]byte) string) []contract.Document {
	var out []contract.Document
	for i := range docs {
		d := &docs[i]
		if !Applies(policy, d.Trust) {
			continue
		}
		rc := Secrets(d.Content)
		count := rc.Count
		rules := rc.Rules
		uri, uriN, uriRules := URI(d.SourceURI)
		count += uriN
		rules = append(rules, uriRules...)
		var meta map[string]contract.Value
		for _, k := range slices.Sorted(maps.Keys(d.Metadata)) {
			v := d.Metadata[k]
			switch v.Kind() {
			case contract.KindString:
				s, _ := v.Str()
				if r := Secrets(s); r.Count > 0 {
					meta = setMeta(meta, d.Metadata, k, contract.String(r.Text))
					count += r.Count
					rules = append(rules, r.Rules...)
				}
			case contract.KindStrings:
				ss, _ := v.List()
				var cp []string
				for j, s := range ss {
					if r := Secrets(s); r.Count > 0 {
						if cp == nil {
							cp = append([]string(nil), ss...)
						}
						cp[j] = r.Text
						count += r.Count
						rules = append(rules, r.Rules...)
					}
				}
				if cp != nil {
					meta = setMeta(meta, d.Metadata, k, contract.Strings(cp...))
				}
			}
		}
		if count == 0 {
			continue
		}
		if out == nil {
			out = append([]contract.Document(nil), docs...)
		}
		nd := *d
		if nd.VersionHash == "" {
			nd.VersionHash = versionHash([]byte(d.Content))
		}
		nd.Content = rc.Text
		nd.SourceURI = uri
		sort.Strings(rules)
		rules = slices.Compact(rules)
		meta = setMeta(meta, d.Metadata, MetaRedactions, contract.Number(float64(count)))
		meta[MetaRedactionRules] = contract.Strings(rules...)
		nd.Metadata = meta
		out[i] = nd
	}
	if out == nil {
		return docs
	}
	return out
}

// RuleURIPassword is the redaction rule id of a password in a source URI's
// userinfo (scheme://user:password@host/...).
const RuleURIPassword = "uri-userinfo-password"

// URI removes secrets from a source URI and returns the URI to store,
// the number of secrets removed and the rule ids that fired (one per
// removal, repeats included). It never re-encodes: each removal is spliced
// into the original string, so every byte not redacted stays as given
// (scheme case, path escaping, spaces), and a URI in which nothing fires is
// returned unchanged. It works on the string, not on url.Parse's result, so
// it also covers URIs that do not parse. What is redacted:
//
//   - Userinfo. The authority follows the first "//" that is preceded by
//     nothing (a scheme-relative "//user:pw@host/x") or by one or more
//     schemes ("https:", nested "jdbc:postgresql:"). The userinfo is the
//     text before the last '@' ahead of the first '/' after "//", so a '#',
//     '?' or '@' inside a password does not end it; a candidate whose user
//     name (the text before its first ':') holds '?' or '#' is not a
//     userinfo ("https://h?t=10:30&m=a@b.com"). The password (after that
//     ':') is dropped with its ':' (user:pw@host → user@host, rule
//     RuleURIPassword; RFC 3986 §3.2.1 deprecates the field for this
//     reason); an empty one is left alone. The user name is kept unless
//     Secrets flags it (a token used as the user name,
//     https://ghp_…@github.com/…), in which case Secrets' replacement
//     stands in for it.
//   - Query and fragment: each '&'- or ';'-separated part (key=value) goes
//     through Secrets on its own, so a redacted value never swallows
//     the parameters after it (?api_key=…&page=3 keeps &page=3), and
//     tokens in the fragment (#access_token=… of the OAuth implicit flow)
//     are removed like those in the query.
//   - Host and path: Secrets' shape rules (every rule except the
//     assignment rules password-assignment, generic-api-key and
//     bearer-token), e.g. a Slack webhook URL (slack-webhook-url) or a token
//     in a path segment. A ';'-separated parameter after the first ';' that
//     holds '=' (JDBC properties, matrix parameters: ;password=…) gets the
//     full rule set, like a query parameter.
//
// A password holding an unescaped '/' (which RFC 3986 forbids) ends the
// authority early and keeps the part before the '/'. Redacting the path
// changes what DeleteBySource and Scope.URIPrefix see: they compare against
// both the given URI and its redacted form (URIMatchForms).
func URI(uri string) (string, int, []string) {
	if uri == "" {
		return uri, 0, nil
	}
	var e uriEdits
	rest := 0 // start of host + path
	if a, ok := uriAuthority(uri); ok {
		rest = a
		if at := userinfoEnd(uri, a); at >= 0 {
			user, pw, hasPw := strings.Cut(uri[a:at], ":")
			if ui := uri[a:at]; strings.HasPrefix(ui, "[REDACTED:") && strings.HasSuffix(ui, "]") && !strings.Contains(ui[1:], "[") {
				// A user name an earlier pass replaced: its ':' is not a
				// password separator (redaction is idempotent).
				user, pw, hasPw = ui, "", false
			}
			if r := Secrets(user); r.Count > 0 {
				e.add(a, a+len(user), r.Text, r.Count, r.Rules)
			}
			if hasPw && pw != "" {
				e.add(a+len(user), at, "", 1, []string{RuleURIPassword})
			}
			rest = at + 1
		}
	}
	pathEnd := len(uri)
	if i := strings.IndexAny(uri[rest:], "?#"); i >= 0 {
		pathEnd = rest + i
	}
	// Host and path: shape rules, except parameters after a ';'.
	for i, p := range splitParts(uri, rest, pathEnd, ";") {
		e.redact(uri, p[0], p[1], i == 0 || !strings.Contains(uri[p[0]:p[1]], "="))
	}
	if pathEnd < len(uri) {
		from := pathEnd + 1
		fragAt := len(uri)
		if uri[pathEnd] == '?' {
			if i := strings.IndexByte(uri[from:], '#'); i >= 0 {
				fragAt = from + i
			}
			for _, p := range splitParts(uri, from, fragAt, "&;") {
				e.redact(uri, p[0], p[1], false)
			}
		} else {
			fragAt = pathEnd
		}
		if fragAt < len(uri) {
			for _, p := range splitParts(uri, fragAt+1, len(uri), "&;") {
				e.redact(uri, p[0], p[1], false)
			}
		}
	}
	if e.n == 0 {
		return uri, 0, nil
	}
	return e.apply(uri), e.n, e.rules
}

// URIMatchForms returns the distinct forms a stored SourceURI written as
// uri (or starting with prefix uri) may have: uri itself, stored as given
// when redaction does not apply, and URI(uri), stored when it does.
// engine.Collection.DeleteBySource and Scope.URIPrefix match against each
// of them. A prefix
// cut inside a secret (before the '@' of a userinfo, inside a token) is
// not redacted the way the whole URI is, so it matches the given form only.
func URIMatchForms(prefix string) []string {
	r, n, _ := URI(prefix)
	if n == 0 || r == prefix {
		return []string{prefix}
	}
	return []string{prefix, r}
}

// uriAuthority returns the offset where uri's authority starts: after a
// "//" that opens uri or follows one or more schemes
// ([A-Za-z][A-Za-z0-9+.-]*:, RFC 3986 §3.1; nested as in
// jdbc:postgresql://). ok is false when uri has no authority.
func uriAuthority(uri string) (int, bool) {
	p := 0
	for {
		n := schemeLen(uri[p:])
		if n == 0 {
			break
		}
		p += n
	}
	if strings.HasPrefix(uri[p:], "//") {
		return p + 2, true
	}
	return 0, false
}

// schemeLen is the length of the scheme and its ':' at the start of s, or 0.
func schemeLen(s string) int {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return 0
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			return i + 1
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '+', c == '.', c == '-':
		default:
			return 0
		}
	}
	return 0
}

// userinfoEnd returns the offset of the '@' that ends the userinfo of the
// authority starting at a, or -1: the last '@' before the first '/' after
// a, unless the user name (up to the first ':') holds '?' or '#'.
func userinfoEnd(uri string, a int) int {
	s := uri[a:]
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return -1
	}
	user, pw, hasPW := strings.Cut(s[:at], ":")
	if strings.ContainsAny(user, "?#") {
		return -1
	}
	// host:port?q=a@b or host:port#x@y: the text between ':' and the
	// first '?' or '#' is a port, so the '@' is in the query or fragment,
	// not after a userinfo.
	if hasPW {
		if q := strings.IndexAny(pw, "?#"); q >= 0 && isDigits(pw[:q]) {
			return -1
		}
	}
	return a + at
}

// isDigits reports whether s is empty or all ASCII digits (a port).
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// splitParts splits uri[from:to] at any byte of seps into [start, end)
// offsets (empty parts included).
func splitParts(uri string, from, to int, seps string) [][2]int {
	var out [][2]int
	for from <= to {
		i := strings.IndexAny(uri[from:to], seps)
		if i < 0 {
			out = append(out, [2]int{from, to})
			break
		}
		out = append(out, [2]int{from, from + i})
		from += i + 1
	}
	return out
}

// uriEdits collects URI's splices, in increasing offset order.
type uriEdits struct {
	edits []uriEdit
	n     int
	rules []string
}

type uriEdit struct {
	start, end int
	text       string
}

func (e *uriEdits) add(start, end int, text string, n int, rules []string) {
	e.edits = append(e.edits, uriEdit{start, end, text})
	e.n += n
	e.rules = append(e.rules, rules...)
}

// redact runs the rules (shape rules only when shapeOnly) over
// uri[start:end] and records the replacement when one fired.
func (e *uriEdits) redact(uri string, start, end int, shapeOnly bool) {
	if start >= end {
		return
	}
	if r := secrets(uri[start:end], shapeOnly); r.Count > 0 {
		e.add(start, end, r.Text, r.Count, r.Rules)
	}
}

func (e *uriEdits) apply(uri string) string {
	var b strings.Builder
	b.Grow(len(uri))
	last := 0
	for _, ed := range e.edits {
		b.WriteString(uri[last:ed.start])
		b.WriteString(ed.text)
		last = ed.end
	}
	b.WriteString(uri[last:])
	return b.String()
}

// setMeta sets k = v in a copy of orig (made on first use).
func setMeta(m, orig map[string]contract.Value, k string, v contract.Value) map[string]contract.Value {
	if m == nil {
		m = make(map[string]contract.Value, len(orig)+2)
		for kk, vv := range orig {
			m[kk] = vv
		}
	}
	m[k] = v
	return m
}
