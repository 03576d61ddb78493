// Package server is searchd's HTTP/JSON API (DESIGN.md "Server"): a thin
// layer over engine.DB built on net/http's pattern routing. `searchd serve`
// (cmd/searchd) calls Run; the embedded library can do everything the
// server does.
//
// # Routes
//
//	GET    /healthz                                   200 {"status":"ok"}, 200 {"status":"degraded",…} when a collection could not be opened, 503 when a store turned read-only (DB.Err)
//	GET    /metrics                                   Prometheus text format (see metrics)               (admin, with API keys)
//	GET    /v1/openapi.json                           the OpenAPI 3.0 document (embedded openapi.json)
//	GET    /v1/collections                            list (stats and source_roots for admin keys only)
//	POST   /v1/collections                            {"name","options":engine.CollectionOptions} → 201   (admin)
//	GET    /v1/collections/{name}                     one collection
//	DELETE /v1/collections/{name}                     drop it and its data                              (admin)
//	POST   /v1/collections/{name}/documents           {"documents":[…],"if_match":{id:hash}} → one atomic batch, one epoch
//	GET    /v1/collections/{name}/documents           ?limit=1..(1000)&cursor=… → {"documents":[summary…],"next_cursor"}
//	POST   /v1/collections/{name}/documents/delete    {"ids":[…]} → one atomic batch
//	GET    /v1/collections/{name}/documents/{id}      the document (id percent-encoded; it may hold '/' and '#'); ETag = version hash
//	DELETE /v1/collections/{name}/documents/{id}      delete one
//	POST   /v1/collections/{name}/search              a contract.Query (JSON) → contract.Result
//	POST   /v1/jobs                                   {"kind","collection","path","params"} → 202 job   (admin)
//	GET    /v1/jobs, /v1/jobs/{id}                    job views (state, progress, log tail)             (admin)
//	POST   /v1/jobs/{id}/cancel                       cancel a queued or running job                    (admin)
//
// Batch delete is a POST to .../documents/delete rather than a DELETE with a
// body: bodies on DELETE are ignored by some proxies and clients.
//
// # Closed schemas and errors
//
// Bodies are application/json (else 415), at most Options.MaxBodyBytes
// (else 413), valid UTF-8 (else 400 naming the offending string's path:
// encoding/json would silently turn invalid bytes into U+FFFD), and exactly
// one JSON value with no unknown field (contract.Decode). Keys are matched
// exactly, case included ({"Text":…} is an unknown field, not text), no
// object may hold a key twice, and null is refused where a number is due
// (inside a vector, for top_k); a pointer-typed field such as budget_ms
// takes null as absent. Job params are checked at submission (an archive
// job with oldest < 0 or nlist outside 0..65536 is a 400, not a 202 that
// fails later). A request path that is not clean ("." or ".." segments,
// doubled slashes) is a 400 invalid_format at ["path"], never net/http's
// HTML redirect; an id that is not UTF-8 is invalid_utf8. Every error
// answers
//
//	{"status":S,"error_count":N,"errors":[{"loc":[…],"input_value":…,"error_type":"…","message":"…","expected_domain":"…"}]}
//
// with S = validation_error (400) | unauthorized (401) | forbidden (403) |
// not_found (404) | method_not_allowed (405, with Allow) | conflict (409:
// Idempotency-Key in flight, collection exists, job finished, an id held
// by an invisible document) | precondition_failed (412: If-Match, engine.ErrConflict)
// | payload_too_large (413) | unsupported_media_type (415) |
// idempotency_key_reused (422) | too_many_requests (429, Retry-After) |
// internal_error (500) | unavailable (503: read-only store, shutting down) |
// timeout (504). Validation reuses contract's checks (ValidateDocuments,
// Query.Validate through Collection.Search) and adds: file:// source_uri
// paths must be absolute and clean (no "..": path traversal) and of the
// local host, and must lie — symbolic links resolved — under a directory
// the operator bound to the document's namespace (Options.VerifyRoots,
// searchd serve --verify-root) or under the collection's SourceRoots
// (else 400 error_type "source_not_permitted": verification reads no
// other local file for an API caller, so that a search's verify outcome
// cannot reveal a file the caller could not read), an explicit
// "top_k":0 is rejected (the contract reads 0 as "omitted"), index-job paths
// must be absolute, clean and under an --index-root (re-checked after
// resolving symlinks when the job starts). Bad input never changes stored
// data: every check runs before the engine's single atomic write.
//
// # Writes: idempotency and If-Match
//
// See idempotency.go: Idempotency-Key on POST/DELETE, durable per-key
// response records under DataDir/server/idempotency/, byte-identical replay
// with Idempotent-Replayed: true, 409 while in flight, 422 on reuse with
// another request, a TTL window (default 24 h) that survives restarts. An
// accepted write runs under context.WithoutCancel(request) plus the request
// deadline, so a client that disconnects does not abort it and its retry
// finds the stored answer. If-Match: "<version_hash>" on a single-document
// upsert (or "if_match" in the body for batches, naming ids of the batch
// only: another id is a 400 at ["body","if_match",id]) maps to
// engine.IfMatch; a mismatch is 412 "version mismatch for document at
// documents[i]" and nothing is written. The 412 never carries the stored
// version hash (the engine's error text is not passed on). The idempotency
// fingerprint covers If-Match, and a replay restores ETag and Location.
//
// # Tenancy
//
// With Options.APIKeys every request but /healthz and /v1/openapi.json
// needs "Authorization: Bearer <key>" (401 otherwise); /metrics needs an
// admin key (403 for others: its gauges span tenants). /healthz answers
// {"status":"ok"} or a 503 without detail; when a collection found on disk
// could not be opened (engine.DB.Unavailable: a corrupt config or store)
// the others serve, that collection's routes answer 503
// "collection_unavailable" with the reason, and /healthz answers 200
// {"status":"degraded","unavailable_collections":n}, plus
// "unavailable":[{"collection","reason"}] in open mode or for an admin key. A key maps to a
// contract.Principal (name, groups, namespace prefixes), which goes into
// every Query so the engine's ACL pre-filter applies while candidates are
// generated (a tenant gets its full top-k even when another tenant's
// documents dominate the matches). A document is visible to a key when
// Principal.CanRead holds: its namespace is one of the key's and its ACL
// is empty or names the principal or a group. GET document answers 404
// for an invisible document, and listing never returns one: the engine
// lists only the namespaces and ACL classes the key may read
// (engine.Collection.ListDocuments), so a page costs O(page + log n)
// whatever other keys own. Writes treat invisible documents the same
// way:
//
//   - an upsert into a namespace the key does not have is 403 (the
//     caller's own input);
//   - preconditions (If-Match, if_match) are checked against what the key
//     can see first: an invisible document answers exactly as an absent
//     one (412 for any expected hash, whatever the guess);
//   - an upsert of an id held by an invisible document is one uniform 409
//     {"error_type":"id_unavailable"} — the same for "another namespace"
//     and "ACL does not name you", and nothing is written;
//   - a delete counts invisible ids as absent and deletes nothing of them.
//
// These rules are the engine's (engine.As; engine/tenancy.go), so an
// embedded caller writing for a principal gets the same ones: the check
// and the write are one atomic step under the collection's write lock,
// against every writer (server requests, index jobs, embedding programs).
//
// Scores: under API keys every search carries its key's principal, and
// the engine then computes the BM25 statistics (N, average length, each
// term's document frequency) over the rows that principal may read in the
// query's namespace, in every collection, multi_tenant or not — so a
// tenant's scores never move when another key writes, and cannot reveal
// another tenant's term frequencies. (The alternative, refusing to serve
// several keys from one collection without multi_tenant, would break
// shared collections; the cost of the choice is O(readable rows) per
// lexical query instead of O(segments).) Open mode has no principal and
// uses collection-wide statistics.
//
// Epochs: a collection's epoch counts the write batches of every key, so
// a non-admin key never sees it — GET /v1/collections[/{name}], upsert
// and delete responses and search results omit "epoch" for such a key,
// in every collection (whether another key writes there is not known in
// advance), as they omit stats; otherwise a tenant polling the epoch, or
// comparing the epochs of its own writes, would learn when and how often
// other tenants write. No route takes an epoch as input, so nothing a
// tenant can do needs it. Open mode and admin keys see it.
//
// Residual leak (by design): document ids are one key space per
// collection. An upsert of a fresh id succeeds while an id held by an
// invisible document gets the 409, so a tenant willing to create a
// document can learn that an id is taken (not by whom, not its content
// or version). Use namespace-prefixed ids ("tenant-a/…") or one collection
// per tenant when ids themselves are sensitive.
//
// Admin keys create and drop collections, run jobs, read /metrics and see
// CollectionOptions.SourceRoots (server-side paths, hidden from other
// keys). Without keys the server is in open mode (every caller trusted);
// cmd/searchd refuses that on a non-loopback address unless
// --insecure-no-auth, and open mode serves only requests whose Host header
// is a loopback name (localhost, 127.0.0.0/8, [::1], any port) or an
// Options.AllowedHosts entry (403 otherwise): a DNS-rebinding defence.
//
// # Limits
//
// Options.MaxConcurrency /v1 requests at once (429 + Retry-After beyond),
// Options.RequestTimeout per request (a search's Budget becomes
// min(budget_ms, RequestTimeout): a search past its budget returns a
// partial result, never a silent truncation), Options.MaxBodyBytes per body,
// engine.MaxBatchBytes (64 MiB, one WAL record) per upsert as it will be
// stored — checked before any embedding or write and answered 413
// payload_too_large naming the limit (vectors take 4 bytes a component
// however short their JSON; metadata numbers are stored in their shortest
// form, so they never grow past their JSON),
// listing pages of at most MaxListLimit (1000; larger limits are capped).
//
// # Shutdown
//
// Run (and Serve) stop on context cancellation: the listener closes,
// in-flight requests finish within ShutdownTimeout (http.Server.Shutdown),
// running jobs are cancelled and awaited (they, and queued ones, are
// recorded interrupted), then Run closes the DB, which syncs every
// collection's WAL.
//
// # Jobs
//
// Jobs are durable (jobs.go, jobstore.go): one checksummed record per job
// under DataDir/server/jobs/, rewritten atomically at every state change
// and log line, the last JobHistory kept. After a restart a job that was
// queued or running reads as interrupted with the reason; flush, compact,
// archive and promote are one atomic manifest edit each (effect complete
// or absent); index is incremental, not atomic (chunks written stay, the
// ingest manifest moves only at the end of a pass; rerun it). SubmitJob,
// Job, CancelJob and WatchJob are the same jobs for Go embedders (package
// mcp's job tools).
//
// # Known gaps
//
// Idempotency records hold the whole response (a search is not mutating
// and is never stored). JSON string escapes of lone UTF-16 surrogates
// ("\ud800") are decoded by encoding/json to U+FFFD and are not rejected.
package server
