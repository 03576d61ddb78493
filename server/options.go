package server

import (
	"errors"
	"fmt"
	"github.com/stratasearch/strata/engine/graph"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/verify"
)

// Defaults and caps of Options and of the listing endpoint.
const (
	DefaultMaxBodyBytes    = 32 << 20
	DefaultRequestTimeout  = 30 * time.Second
	DefaultMaxConcurrency  = 64
	DefaultIdempotencyTTL  = 24 * time.Hour
	DefaultShutdownTimeout = 15 * time.Second
	DefaultListLimit       = 100
	MaxListLimit           = 1000
	// DefaultJobHistory is how many finished jobs GET /v1/jobs/{id} still
	// answers for (oldest forgotten first).
	DefaultJobHistory = 1000
)

// Options configures a Server. The zero value plus DataDir is a working
// open-mode (no API keys) server with the documented defaults.
type Options struct {
	// DataDir is the store directory (searchd --data). The server keeps its
	// own state under DataDir/server/: idempotency/ (one file per completed
	// Idempotency-Key). Listing cursors are signed with the DB's cursor key
	// (engine.DB.CursorKey). Index jobs keep ingest manifests in
	// DataDir/ingest/<collection>.manifest.json (shared with `searchd index`).
	// Required.
	DataDir string
	// MaxBodyBytes is the largest request body accepted (413 above it).
	// Default DefaultMaxBodyBytes (32 MiB).
	MaxBodyBytes int64
	// RequestTimeout is the deadline of every /v1 request; a search's
	// contract Budget becomes min(budget_ms, RequestTimeout). Default
	// DefaultRequestTimeout (30 s).
	RequestTimeout time.Duration
	// MaxConcurrency is the number of /v1 requests served at once; one more
	// is answered 429 with Retry-After. Default DefaultMaxConcurrency (64).
	MaxConcurrency int
	// IdempotencyTTL is how long a completed Idempotency-Key is remembered
	// (also across restarts). Default DefaultIdempotencyTTL (24 h).
	IdempotencyTTL time.Duration
	// ShutdownTimeout bounds the wait for in-flight requests in Run's
	// graceful shutdown. Default DefaultShutdownTimeout (15 s).
	ShutdownTimeout time.Duration
	// APIKeys enables authentication: every request but /healthz,
	// /metrics and /v1/openapi.json needs "Authorization: Bearer <key>"
	// naming one of them. Nil = open mode (every caller is the trusted
	// embedded principal). Default nil.
	APIKeys []APIKey
	// AllowedHosts are further Host header values (host names or IPs,
	// compared case-insensitively without the port) accepted in open mode,
	// e.g. the name a reverse proxy forwards. In open mode (no APIKeys) a
	// request whose Host is not a loopback name (localhost, 127.0.0.0/8,
	// [::1]) or in AllowedHosts is refused with 403: a DNS-rebinding
	// defence (a web page whose name resolves to 127.0.0.1 cannot drive
	// the trusted open-mode API from a browser). The single entry "*"
	// turns the check off. With APIKeys the Host is not checked. Default
	// none.
	AllowedHosts []string
	// IndexRoots are the absolute directories an "index" job may read (the
	// job's path, after resolving symlinks, must lie under one). Empty
	// disables index jobs. Default none.
	IndexRoots []string
	// VerifyRoots bind directories to namespace prefixes: an API write may
	// name a file:// source_uri only under a root bound to the document's
	// namespace (or under the collection's SourceRoots); others are
	// refused with 400 source_not_permitted, and verification reads no
	// other file for API-written documents (package engine/verify, "Who
	// may have a file read"). Run adds them to Engine.VerifyRoots; with New
	// the DB's own engine.Options.VerifyRoots apply. Documents written by
	// index jobs (ingestion) are verified wherever they lie under
	// IndexRoots. Default none.
	VerifyRoots []verify.Root
	// JobHistory is the number of finished jobs remembered. Default
	// DefaultJobHistory.
	JobHistory int
	// Engine are the options Run opens the DB with (e.g. Embedders, so
	// that text-only queries of collections with an embedding model are
	// embedded); its Logger defaults to Logger. Unused by New. Default zero.
	Engine engine.Options
	// Logger receives the access log (one record per request) and server
	// events. Default slog.Default().
	Logger *slog.Logger
	// Graphs maps a collection name to its code graph (built by
	// ingest/codegraph), which POST /v1/collections/{name}/expand walks. A
	// collection without one answers expand with its search hits alone
	// (graph: false). An "index" job into a collection with a graph
	// updates it for the files the pass rewrote or dropped
	// (codegraph.Updater) and saves it to DataDir/ingest/<name>.graph.
	// Default none.
	Graphs map[string]*graph.Store
}

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.MaxConcurrency == 0 {
		o.MaxConcurrency = DefaultMaxConcurrency
	}
	if o.IdempotencyTTL == 0 {
		o.IdempotencyTTL = DefaultIdempotencyTTL
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.JobHistory == 0 {
		o.JobHistory = DefaultJobHistory
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Validate reports every problem with o (call after EnsureDefaults).
func (o *Options) Validate() error {
	var errs []error
	if o.DataDir == "" {
		errs = append(errs, errors.New("server: option DataDir is required"))
	}
	if o.MaxBodyBytes < 1 {
		errs = append(errs, fmt.Errorf("server: option MaxBodyBytes = %d, want ≥ 1", o.MaxBodyBytes))
	}
	if o.RequestTimeout <= 0 {
		errs = append(errs, fmt.Errorf("server: option RequestTimeout = %v, want > 0", o.RequestTimeout))
	}
	if o.MaxConcurrency < 1 {
		errs = append(errs, fmt.Errorf("server: option MaxConcurrency = %d, want ≥ 1", o.MaxConcurrency))
	}
	if o.IdempotencyTTL <= 0 {
		errs = append(errs, fmt.Errorf("server: option IdempotencyTTL = %v, want > 0", o.IdempotencyTTL))
	}
	if o.ShutdownTimeout <= 0 {
		errs = append(errs, fmt.Errorf("server: option ShutdownTimeout = %v, want > 0", o.ShutdownTimeout))
	}
	if o.JobHistory < 1 {
		errs = append(errs, fmt.Errorf("server: option JobHistory = %d, want ≥ 1", o.JobHistory))
	}
	for _, r := range o.IndexRoots {
		if !filepath.IsAbs(r) || filepath.Clean(r) != r {
			errs = append(errs, fmt.Errorf("server: option IndexRoots entry %q is not a clean absolute path", r))
		}
	}
	if err := verify.ValidateRoots(o.VerifyRoots); err != nil {
		errs = append(errs, fmt.Errorf("server: option VerifyRoots: %w", err))
	}
	for _, h := range o.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/ \t") {
			errs = append(errs, fmt.Errorf("server: option AllowedHosts entry %q is not a host name or IP", h))
		}
	}
	if o.APIKeys != nil {
		if err := validateKeys(o.APIKeys); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
