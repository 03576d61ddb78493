// Package mcp serves Strata's retrieval to models as Model Context
// Protocol tools, over the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). It is a thin layer: each tool
// decodes and validates its arguments, fills in what the runtime owns, and
// calls the engine (Collection.Search, Snapshot.ScanMeta), ingest (the names
// index, Snippet, FileURI) and contract (Stage, FrameHit) — it holds no
// retrieval logic of its own.
//
// # Tools
//
//   - search: query text, mode (lexical | dense | hybrid), a metadata
//     filter (contract.Filter's JSON), top_k and a cursor (the engine's
//     signed Result.NextCursor). Hits are staged (contract.Stage) under the
//     configured token budgets.
//   - find_definition: a symbol (Name, Type.Method or pkg.Name) looked up
//     in the "names" keyword field ingestion writes for every Go
//     declaration, ranked by BM25 of the symbol.
//   - read: lines of an indexed file by file:// URI (a hit's source_uri),
//     absolute path or path relative to a root, and an optional line range.
//     Over the token budget the span keeps its head (whole lines, up to
//     half the budget) and its tail (whole lines) around the line
//     "[... N lines and B bytes truncated ...]"; only a first line longer
//     than half the budget is cut inside, at a UTF-8 boundary. The result
//     says truncated: true and gives a cursor that continues at the first
//     omitted byte.
//   - list: one directory of the indexed tree (subdirectories with their
//     file counts, then files with their chunk counts), paginated.
//   - repo_map: the tree below a directory with up to symbols_per_file
//     declared symbols per file (exported first; types, functions,
//     methods, then constants and variables), admitted level by level
//     while the token budget lasts, so a small budget shows the upper
//     levels whole.
//   - the code-graph arguments (with Options.Graph, a code graph of the
//     collection built by ingest/codegraph), which add no tool: search's
//     expand (a token budget; not with filter or cursor) seeds
//     personalized PageRank with the top_k hits and returns the chunks it
//     ranks within the budget (three quarters for source text, the rest
//     for frames), verified, with a path from a seed per hit
//     ("Widget.Paint() -> CALLS a.go:Frobnicate()"); find_definition's
//     calls (callers | callees) lists the symbol's CALLS neighbours with
//     call-site lines instead of its definitions, only those whose chunks
//     the caller may read (engine.Collection.Fetch). Without a graph the
//     schemas do not list them and they are unknown fields.
//   - remember, recall, forget (EnableMemory; memory.go): recall with key
//     and history and no query lists every version of that key oldest
//     first.
//   - job (admin callers only, with Options.Jobs): with kind (index,
//     flush, compact, archive, promote) it queues a durable job of package
//     server's job runner on Options.Collection (index: path, a directory
//     under Options.Roots, symbolic links resolved; promote: archive_id;
//     archive: segments or oldest, omit_vectors, nlist) and returns at
//     once with its 128-bit id; with job_id it gives the job's state
//     (queued, running, completed, failed, cancelled, timed_out,
//     interrupted), progress and last log lines, and cancel: true stops
//     it first. An argument of the other mode or of another kind is a
//     validation error. Completion is pushed to the submitting session as
//     a notifications/message (logger "strata.jobs", level notice; sent
//     once the client has set a logging level) and, when the call carried
//     a progress token, a final notifications/progress. An ordinary caller
//     is not shown the tool and cannot call it.
//
// Tools are registered by register (server.go): an argument struct with a
// validate method, a run function, and the JSON Schemas (registerAdmin
// for an admin-only tool). Optional families add arguments to existing
// tools where the operation is the same (the graph) rather than tools:
// the definitions any caller sees — an admin caller with every family
// included — cost at most MaxDefinitionTokens (1,500) tokens in staging's
// estimate (⌈bytes/4⌉) as tools/list carries them; `searchd mcp
// --describe` prints the figure for every family and caller
// (DefinitionSizes). Rules that span fields (a job kind's arguments,
// expand without filter or cursor) are stated in the descriptions and
// enforced by validation rather than as JSON Schema conditionals, which
// would cost more than the rest of a tool.
//
// # The runtime disposes
//
// Arguments carry only the query, mode, filter, top_k, cursor and the
// span or directory to show. The rest comes from Options and the caller's
// credentials and no argument can widen it: the namespace
// (Options.Namespace, contract.Scope) and the principal (Caller: the API
// key's over HTTP, Options.Principal over stdio) go into every query; top_k
// is refused above Options.MaxTopK (itself clamped to 50); result sizes are
// bounded by Options.TokenBudget and MaxTokensPerHit; every call runs under
// Options.Deadline, of which the search's contract Budget is all but a
// tenth (at most 100 ms, left for staging), so a slow search is a partial
// result rather than a timeout. Unknown
// argument fields ("namespace", "principal") are validation errors.
// read, list and repo_map answer from a catalog of the indexed tree —
// every document ingestion wrote (engine.VerifiableSources) with a
// file:// source under Options.Roots, read with one metadata scan
// (engine.Snapshot.ScanMeta: no content) and rebuilt when the
// collection's epoch moves; a document an API caller wrote names no file of it, whatever
// its source_uri, so it can neither have read serve a file ingestion
// never indexed nor add names to list and repo_map — in which a file is visible to a caller
// only if the caller may read every one of its chunks (namespace and ACL,
// contract.Principal.CanRead). A read must also resolve, with symbolic
// links evaluated on both the root and the target, inside its root.
// Cursors of read and list are HMAC-sealed with a per-process key and
// bound to the tool and the caller.
//
// # Results and errors
//
// A result's structuredContent is its envelope (hits with staged content,
// next_cursor, partial, the frame nonce; or the span, list entries, map
// counts) and its text content is evidence framed as staging frames it:
// <retrieved_evidence … nonce="N">…</retrieved_evidence nonce="N"> with
// one 128-bit nonce per call, bodies sanitised and escaped
// (contract.Sanitize, contract.EscapeText), so no payload in the index —
// a fake closing tag, "]]>", ANSI/OSC escapes, look-alike brackets — can
// end a frame. Listings and maps are framed too: file and symbol names are
// indexed text. Bad arguments are a tool error (isError: true) whose
// structuredContent is the validation-error shape of the JSON API
// ({"status":"validation_error","error_count":N,"errors":[{"loc",
// "input_value","error_type","message","expected_domain"}]}); other
// failures use the same shape with status not_found, timeout, cancelled,
// unavailable or internal, and never carry an engine error's text (it is
// logged). Every output schema admits that shape (it requires no field). A message that is not
// JSON gets JSON-RPC's parse error (-32700, id null; over stdio the
// session goes on, over HTTP with status 400); other malformed JSON-RPC
// gets the SDK's protocol errors.
//
// # Transports and revisions
//
// Server.RunStdio serves stdio (`searchd mcp`), where the SDK negotiates
// either revision: 2026-07-28 (server/discover, per-request _meta) or
// 2025-11-25 and older (initialize). Server.HTTPHandler serves
// streamable HTTP (`searchd serve` mounts it at /mcp behind the API keys):
// requests at protocol revision 2026-07-28 (the Mcp-Protocol-Version
// header) go to the SDK's stateless handler, where each POST is a whole
// request and closing it cancels the call; all others to the stateful
// handler (2025-11-25 and older: initialize, sessions, and a client's
// notifications/cancelled cancels the call's context). A session is bound
// to the principal that opened it.
package mcp
