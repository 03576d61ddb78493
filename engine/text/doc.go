// Package text is Strata's analysis: it turns field text into terms with
// positions for the lexical index (engine/bm25).
//
// # Tokenizer
//
// ModeUnicode (default) emits maximal runs of Unicode letters, digits and
// combining marks (categories L*, Nd/Nl/No, Mn, Mc), lower-cased with Go's
// Unicode case mapping (strings.ToLower). Everything else separates tokens.
// Scripts without spaces (Han, Thai) are not segmented into words: a run is
// one token.
//
// ModeOracle is the reference protocol of REFERENCE.md: lower-case the text,
// then take [a-z0-9]+. It exists so BM25 numbers can be checked against the
// published exhaustive-BM25 figures exactly.
//
// # Code identifiers
//
// With SplitIdentifiers, "_" joins a token and "-" joins when both
// neighbours are letters or digits, so verify_user_token_v2, kebab-case and
// ERR_CIPHER_ALLOC_FAIL are single original tokens. Each yields the whole
// identifier (lower-cased) and then its distinct parts: separators split,
// and case changes split (lower/digit→Upper: getUserName → get user name,
// utf8Decode → utf8 decode; UPPER→Upper+lower: HTTPRequest → http request).
// Letter↔digit changes do not split (v2, md5sum). Boundaries are found on
// the original case before lower-casing, and the whole is always emitted.
//
// Parts carry the position of their identifier. Positions therefore count
// original tokens only: parts never lengthen a document (|D| in BM25), and a
// phrase query may use either the whole identifier or one of its parts at a
// position ("call getUserName" and "call user" both match "call
// getUserName()"). Two parts of the same identifier are not adjacent to each
// other, so the phrase "get user" does not match getUserName; query the
// identifier itself instead.
//
// # Options per field
//
// Stop-words (Snowball English or Russian lists) are removed but keep their
// position, so phrase adjacency is not faked across a removed word. Stemming
// uses github.com/kljensen/snowball (Porter2 English, Snowball Russian).
// Tokens longer than MaxTokenRunes are dropped (an overlong identifier still
// yields its short parts). Presets: CodeOptions (split, no stop-words, no
// stemming), ProseOptions (English stop-words and stemming), OracleOptions.
//
// # Complexity
//
// Analysis is O(len(text)) plus stemming, which is O(len(token)) per token;
// splitting allocates one string per emitted term.
//
// Sources: M. Porter, "Snowball: A language for stemming algorithms" (2001)
// and the Porter2 English algorithm; the identifier rules follow the common
// camelCase/snake_case conventions used by code search engines.
package text
