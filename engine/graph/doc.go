// Package graph is Strata's code graph: typed nodes and edges over the
// chunks of a collection, an epoch-versioned view that an edit moves in
// one step, and personalized PageRank (PPR) expansion under a token
// budget. Like the other index packages it knows nothing of storage,
// the contract or any language: ingestion builds the graph
// (ingest/codegraph), and a node's DocID is the collection document id
// of the chunk that holds it.
//
// # Model
//
// Nodes (NodeKind): File, Package, Type, Func (functions and methods),
// Var (package-level variables and constants, struct fields). Edges
// (EdgeKind), From → To: CONTAINS (file → definition, type → field),
// DECLARES (package → definition), CALLS, REFERENCES, IMPORTS (file →
// package), IMPLEMENTS / INHERITS, TYPED_AS (var or field → its type),
// READS / MODIFIES (function → package-level variable or field). An edge
// carries its first site's line and its number of sites (Count); edges
// are unique by (From, To, Kind). A Graph is immutable CSR: out-edges
// sorted by (To, Kind) per node, in-edges rebuilt on load. Memory: 20
// bytes per edge twice (out and in), 8 per node of offsets, plus the
// nodes (about 100 bytes each with their strings) and a key map.
//
// # File format
//
// See codec.go: a string table (sorted, front-coded), nodes as varint
// string indices, out-edges as delta-coded varint targets with a kind
// byte, a zigzag line delta to the node's line and count−1, then a
// CRC32C trailer. Decode reports any malformed input as a
// *base.CorruptError with the path and byte offset. On GOROOT/src the
// encoding is a fraction of the source's bytes (bench/results/notes/graph.md).
//
// # Epochs
//
// A Store holds the current View. Store.Apply(fragments…) replaces the
// nodes and edges of some files in one step: their base nodes are
// tombstoned (a bitset) and the fragments' nodes and edges form the
// delta, so the view is (base − tombstones) ∪ delta. A base edge into a
// tombstoned node follows the delta node with the same Key (the caller
// did not change), or is dropped when the edit removed that key; so an
// expansion never reaches a replaced node. Apply costs O(delta + in-degree
// of the replaced nodes), not O(graph). Store.SetBase installs a rebuilt
// base (a background compiler-level build) and keeps only the fragments
// applied after the rebuild started. Readers take one View and use it for
// a whole expansion.
//
// # Expansion
//
// PersonalizedPageRank solves p = (1−α)s + αPᵀp (α = 0.85, s the seeds'
// normalised weights) with the push method of Andersen, Chung and Lang
// (FOCS 2006), whose work is bounded by the visited subgraph: at most
// 1/((1−α)ε) pushes, each costing the pushed node's degree. P's rows
// (Transitions) weight an edge by kind — defaults CALLS 1.0, READS and
// MODIFIES 1.0, REFERENCES, TYPED_AS, IMPLEMENTS and INHERITS 0.5,
// CONTAINS and DECLARES 0.1, IMPORTS 0.05 — and follows edges forward
// only unless PPROptions.Reverse asks for backward steps too. A hub (degree above HubDegree, 64) is
// damped: it keeps the mass it receives but is not expanded, and edges
// into it are weighted down by HubDegree/degree. Expand groups the scores
// by chunk, cuts those below ε, and adds chunks in score order while
// they fit the token budget; each chosen chunk carries its most probable
// path from a seed (FormatPath: `handlePacket() -> CALLS
// parser.go:deserialize() -> READS schema.go:Header`). The tests check
// the push result against dense power iteration on seeded random graphs.
package graph
