// Package contract defines Strata's retrieval contract: the typed Query a
// caller sends, the Document it writes, the Envelope it gets back, their
// closed JSON schemas and validation, score normalisation, and the staging
// (budgeting, truncation, framing, sanitising) of hits for a model's context.
// It imports no other Strata package (DESIGN.md level 1).
//
// # Query, Document, validation
//
// Query = ⟨Text and/or Vector, Scope, Freshness, TopK, Budget, Filter, Mode,
// Tiers, Fusion, MinScore σ_min, TokenBudget S_budget, MaxTokensPerHit S_max,
// Verify⟩ plus result shaping: Cursor (continue a Result.NextCursor),
// Collapse (at most n hits per source file) and Highlight
// (Envelope.Highlights: byte spans [start, end) of the query terms in
// Content); the engine implements them (package engine, "Result
// shaping"). Query.EnsureDefaults fills TopK = 10, Mode (hybrid for text +
// vector, lexical for text only, dense for vector only), Tiers = hot + warm
// (cold is scanned only when asked) and Fusion = rrf with k = 60.
//
// Query.Validate, Document.Validate and ValidateDocuments return every
// problem in one *ValidationError (errors.Is(err, ErrInvalid)), which
// marshals to the server's error shape:
//
//	{"status":"validation_error","error_count":2,"errors":[
//	  {"loc":["query","vector",3],"input_value":"NaN","error_type":"not_finite",
//	   "message":"vector component is not finite","expected_domain":"finite float32"},
//	  {"loc":["query","top_k"],"input_value":5000,"error_type":"out_of_range",
//	   "message":"top_k out of range","expected_domain":"integer 1..1000 (omitted = 10)"}]}
//
// Multi-tenancy: with ValidateOptions.MultiTenant every query and document
// needs a namespace; a Query.Principal (set by the server from the API key,
// never decoded from JSON) may name only namespaces under its prefixes.
// A document's empty ACL means "readable by every principal allowed its
// namespace" (Principal.CanRead).
//
// # JSON
//
// Every schema is closed: unknown fields are rejected, also by a plain
// json.Unmarshal into a Query or Document. Names are snake_case; durations
// are integer milliseconds (budget_ms, freshness_ms); Trust, Mode and Tier
// are their strings; metadata values are JSON strings, numbers, booleans or
// arrays of strings. Unknown enum strings decode and are reported by Validate
// with every other problem; JSON syntax and type errors are reported by
// DecodeQuery / DecodeDocuments / Decode in the same error shape. A filter
// is a tree of one-key objects:
//
//	{"and":[{"eq":{"field":"lang","value":"go"}},
//	        {"range":{"field":"lines","gte":10,"lt":500}},
//	        {"not":{"exists":"generated"}}]}
//
// with operators eq, in, range (gt, gte, lt, lte), prefix, exists, and, or,
// not; Filter.Match is the reference semantics.
//
// # Scores
//
// Envelope.Score is in [0,1] in every mode, so σ_min means the same thing
// whatever the mode:
//
//   - hybrid: the (weighted) RRF score divided by its maximum Σ_m w_m/(k+1)
//     (HybridScore; package fusion's Fused.Normalized);
//   - lexical: BM25 divided by the query's upper bound, the sum of each
//     term's maximum contribution (LexicalScore);
//   - dense: (1 + cos)/2 for cosine, and for ip on normalised vectors;
//     1/(1 + d²) for L2 with d² the squared distance (DenseScore).
//
// Each is clamped to [0,1]. The raw values stay in Envelope.Explain.
//
// # Staging
//
// Stage prepares hits for pasting into a model's context:
//
//  1. hits failing the structural checks (empty or non-printable id, unknown
//     trust, malformed version hash, score outside [0,1], non-printable URI)
//     are dropped and listed in Dropped with a reason — never silently;
//  2. hits under σ_min are dropped (also listed); the rest are sorted by
//     score descending, then id;
//  3. in that order, each hit's body gets at most S_max tokens, and all
//     frames together at most S_budget tokens; a hit whose frame no longer
//     fits is dropped with reason token_budget;
//  4. a body over its allowance is cut at a syntactic boundary. Let L be the
//     longest prefix that fits. Candidate cut points are: before a Markdown
//     heading line (best), after a blank line, after a line at brace depth 0
//     (counting '{' and '}', ignoring strings and comments), after any line,
//     and — only when no line boundary keeps at least L/2 — the last point
//     before L between two characters that are not both identifier
//     characters ([\pL\pN_]). Among cut points keeping at least L/2 the best
//     class wins, then the longest; otherwise the longest of any class. A cut
//     is never inside a UTF-8 sequence nor inside an identifier.
//  5. every cut is recorded in the frame (omitted_bytes, continue_offset) and
//     in StagedHit.Cut: continue_offset is the byte offset within the hit's
//     original content — the span its URI names — at which the omitted tail
//     starts, so original[continue_offset:] is exactly the omitted bytes.
//
// Token counting uses a stated estimate, not a tokenizer: ⌈bytes / 4⌉
// (DefaultBytesPerToken; StageOptions.BytesPerToken changes it). No
// well-kept Go tokenizer is among the project's available modules. S_max
// applies to the escaped body; S_budget to whole frames including tags.
//
// # Framing and sanitising
//
// Each staged hit is
//
//	<retrieved_evidence id="…" trust="…" uri="…" hash="…" nonce="N"[ omitted_bytes="…" continue_offset="…"]>
//	BODY
//	</retrieved_evidence nonce="N">
//
// with one random nonce per request (crypto/rand, 128 bits). Attribute values
// are escaped (& < > " ' newline tab as character references). The body is:
//
//   - sanitised (Sanitize): ANSI/ECMA-48 escape sequences (CSI, OSC, DCS,
//     SOS, PM, APC, two-byte escapes, and their 8-bit C1 forms) are removed
//     whole; other C0 controls but \n and \t, DEL, C1 controls, bidi
//     embedding/override/isolate controls and Unicode tag characters are
//     removed;
//   - repaired: invalid UTF-8 is not rejected; each invalid byte becomes
//     U+FFFD and is counted in StagedHit.Sanitized;
//   - escaped (EscapeText): & < > become &amp; &lt; &gt;, and look-alikes of
//     < and > (fullwidth ＜＞, small ﹤﹥, ‹›, «», 〈〉《》, ⟨⟩, ˂˃, ᐸᐳ, ❮❯ …)
//     become numeric references.
//
// So a body contains no '<' or '>' of any kind: a payload holding the closing
// delimiter, "]]>", a case or whitespace variant of the frame, a fullwidth
// look-alike, or a closing tag with a guessed nonce cannot end the frame.
// Every '<' and '>' in a staged text belongs to a frame tag, and only tags
// carrying the request's nonce are genuine. html.UnescapeString recovers the
// sanitised content.
package contract
