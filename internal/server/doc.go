// Package server is searchd's HTTP/JSON API (DESIGN.md "Server"): a thin
// layer over engine.DB built on net/http's pattern routing. `searchd serve`
// (cmd/searchd) calls Run; the embedded library can do everything the
// server does.
//
// # Routes
//
//	GET    /healthz                                   200 {"status":"ok"}, 503 when a store turned read-only (DB.Err)
//	GET    /metrics                                   Prometheus text format (see metrics)
//	GET    /v1/openapi.json                           the OpenAPI 3.0 document (embedded openapi.json)
//	GET    /v1/collections                            list (stats for admin keys only)
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
// one JSON value with no unknown field (contract.Decode). Every error
// answers
//
//	{"status":S,"error_count":N,"errors":[{"loc":[…],"input_value":…,"error_type":"…","message":"…","expected_domain":"…"}]}
//
// with S = validation_error (400) | unauthorized (401) | forbidden (403) |
// not_found (404) | method_not_allowed (405, with Allow) | conflict (409:
// Idempotency-Key in flight, collection exists, job finished, a concurrent
// change under tenancy) | precondition_failed (412: If-Match, engine.ErrConflict)
// | payload_too_large (413) | unsupported_media_type (415) |
// idempotency_key_reused (422) | too_many_requests (429, Retry-After) |
// internal_error (500) | unavailable (503: read-only store, shutting down) |
// timeout (504). Validation reuses contract's checks (ValidateDocuments,
// Query.Validate through Collection.Search) and adds: file:// source_uri
// paths must be absolute and clean (no "..": path traversal), an explicit
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
// upsert (or "if_match" in the body for batches) maps to engine.IfMatch;
// a mismatch is 412 and nothing is written.
//
// # Tenancy
//
// With Options.APIKeys every request but /healthz, /metrics and
// /v1/openapi.json needs "Authorization: Bearer <key>" (401 otherwise). A key
// maps to a contract.Principal (name, groups, namespace prefixes), which goes
// into every Query so the engine's ACL pre-filter applies while candidates
// are generated (a tenant gets its full top-k even when another tenant's
// documents dominate the matches). GET document and listing check
// Principal.CanRead and answer 404 / skip for foreign documents. Writes whose
// namespace the key does not allow, or whose id exists in such a namespace,
// are 403; to close the race between that check and the write, the upsert
// pins every id's observed version with engine.IfMatch (a concurrent change
// makes it 409). Deletes silently skip ids the key may not write (as absent
// ids). Admin keys create and drop collections and run jobs. Without keys
// the server is in open mode (every caller trusted); cmd/searchd refuses
// that on a non-loopback address unless --insecure-no-auth.
//
// # Limits
//
// Options.MaxConcurrency /v1 requests at once (429 + Retry-After beyond),
// Options.RequestTimeout per request (a search's Budget becomes
// min(budget_ms, RequestTimeout): a search past its budget returns a
// partial result, never a silent truncation), Options.MaxBodyBytes per body,
// listing pages of at most MaxListLimit (1000; larger limits are capped).
//
// # Shutdown
//
// Run (and Serve) stop on context cancellation: the listener closes,
// in-flight requests finish within ShutdownTimeout (http.Server.Shutdown),
// running jobs are cancelled and awaited, then Run closes the DB, which
// syncs every collection's WAL.
//
// # Known gaps
//
// Jobs are in memory (a restart forgets them). Idempotency records hold the
// whole response (a search is not mutating and is never stored). Listing
// under tenancy skips foreign ids one Get at a time (O(page + skipped));
// engine.List itself is O(live documents) per page. JSON string escapes of
// lone UTF-16 surrogates ("\ud800") are decoded by encoding/json to U+FFFD
// and are not rejected.
package server
