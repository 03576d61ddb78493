// Package codegraph builds the code graph of package engine/graph from
// source, keeps it current as files change, and answers expand-mode
// queries over it.
//
// # Go: exact edges
//
// BuildGo loads packages with golang.org/x/tools/go/packages (syntax and
// go/types from source) and emits one graph.Fragment per file: nodes for
// the package, the file, each top-level function, method, type, variable
// and constant, and each field of a top-level struct type; a node's DocID
// is the ingest chunk (ingest.ChunkFile, ingest.ChunkID) holding its
// first line, so graph nodes and collection documents meet by id. Direct
// calls come from go/types (typeutil.StaticCallee); calls through
// interfaces and function values from x/tools/go/callgraph over SSA —
// vta (variable type analysis over the CHA graph: only the types and
// functions that flow to the site) by default, cha (class hierarchy
// analysis: every method of that name and signature on a type
// implementing the interface; half VTA's build time, ten times its
// dynamic edges) when GoOptions.Dynamic asks; the costs
// and the agreement with callgraph's own result are in
// bench/results/notes/graph.md. READS / MODIFIES are uses of
// package-level variables and struct fields (an assignment's left side,
// ++/--, & count as MODIFIES); uses inside closures and local
// declarations count for the enclosing top-level definition.
//
// Keys are computable from syntax given the package path
// ("pkg:PATH", "file:ABS", "PATH.Name", "PATH.Recv.Name",
// "PATH.Type.Field"), which is what lets the fast path below and a view's
// key redirection work.
//
// # The fast path
//
// SyntaxFragment rebuilds one edited file's fragment from go/parser
// alone, resolving names by scope (go/parser's object resolution: a name
// not declared locally is the package's) and by import (pkg.Name), and a
// method's receiver fields and methods by the receiver's type name. It
// has exactly BuildGo's nodes; its edges are a subset of BuildGo's
// (method calls on other values and dynamic calls need types).
// graph.Store.Apply swaps the file's old nodes for the fragment in one
// step, while a BuildGo rebuild can run in the background and be
// installed with Store.SetBase.
//
// # Other languages and whole trees
//
// BuildLang builds the fragments of the tree-sitter languages (Python,
// JavaScript, TypeScript, TSX, Rust, Java, C, C++) from ingest/lang's
// definitions and references, resolving each reference by scope and
// import (see BuildLang for the rules; precision measured in
// bench/results/notes/graph.md). BuildTree builds a whole tree: Go
// type-checked under a go.mod (else syntax-level) plus the other
// languages, over the files ingest.Walk lists. Updater is the edit path:
// an incremental ingest pass and the edited files' fragments side by
// side, applied to the Store in one step.
//
// # Expand
//
// Expand seeds personalized PageRank with the top k₀ hits of
// ingest.Search, ranks chunks by their best node's score, keeps those
// that fit the token budget (source text, ⌈bytes/4⌉), and returns them
// through engine.Collection.Fetch — scope, principal and verification
// as for any hit — with a path serialisation per chunk and the tokens
// used. Calls lists a definition's callers or callees with call-site
// lines. RankedMap renders a repository map ranked by PageRank over the
// file/definition graph, personalised to files and names, fitted to a
// token budget within ±15%.
package codegraph
