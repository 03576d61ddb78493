package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier"
	"github.com/stratasearch/strata/engine/verify"
	"github.com/stratasearch/strata/vfs"
)

// Server is the HTTP/JSON front of an engine.DB. It is an http.Handler;
// Serve runs it on a listener with graceful shutdown. Safe for concurrent
// use.
type Server struct {
	db      *engine.DB
	o       Options
	mux     *http.ServeMux
	routes  []Route
	keys    *keyring
	idem    *idemStore
	cursors *cursorSigner
	jobs    *jobRunner
	m       *metrics
	sem     chan struct{}
	graphMu sync.Mutex // serialises saveGraph

	// beforeHandler, when set (tests), runs after authentication, limits,
	// body reading and the idempotency check, right before the route's
	// handler: a hook to hold a request mid-apply.
	beforeHandler func(r *http.Request)
}

// Route is one registered method + path pattern (Go ServeMux syntax; a
// trailing "{id...}" matches the rest of the path).
type Route struct {
	Method, Pattern string
}

// routeFlags say what a route needs.
type routeFlags uint8

const (
	public   routeFlags = 1 << iota // no authentication, no concurrency limit
	mutating                        // body read, Idempotency-Key honoured
	admin                           // the caller must be an admin key
)

// request is what a handler gets.
type request struct {
	r      *http.Request
	ctx    context.Context
	body   []byte
	caller *caller
	header http.Header // response headers to add
}

type handlerFunc func(rq *request) (int, any, error)

// New builds a server over db (which the caller keeps owning: Close does not
// close it; Run does). It creates DataDir/server/ (idempotency records)
// and, if missing, the DB's cursor key (engine.DB.CursorKey).
func New(db *engine.DB, o Options) (*Server, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	s := &Server{db: db, o: o, mux: http.NewServeMux(), sem: make(chan struct{}, o.MaxConcurrency)}
	if o.APIKeys != nil {
		s.keys = newKeyring(o.APIKeys)
	}
	keys, err := db.CursorKeys()
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.cursors = &cursorSigner{keys: keys}
	if s.idem, err = openIdemStore(filepath.Join(o.DataDir, "server", "idempotency"), o.IdempotencyTTL, o.Logger); err != nil {
		return nil, err
	}
	var jr *jobRunner
	s.m = newMetrics(db, func() map[JobState]int { return jr.counts() })
	store, err := openJobStore(vfs.Default, filepath.Join(o.DataDir, "server", "jobs"))
	if err != nil {
		s.idem.close()
		return nil, err
	}
	jr = newJobRunner(db, o.JobHistory, func(kind string, st JobState) {
		s.m.jobsTotal.WithLabelValues(kind, string(st)).Inc()
	}, store, o.Logger)
	s.jobs = jr
	s.registerBuiltinJobs()
	s.registerRoutes()
	return s, nil
}

// RegisterJobKind adds (or replaces) a job kind accepted by POST /v1/jobs.
func (s *Server) RegisterJobKind(kind string, m JobMaker) { s.jobs.register(kind, m) }

// Routes lists the registered routes (for the OpenAPI check).
func (s *Server) Routes() []Route { return append([]Route(nil), s.routes...) }

// Close cancels running jobs and waits for them, and stops the idempotency
// pruner. It does not close the DB. In-flight HTTP requests are the
// http.Server's business (Serve shuts it down first).
func (s *Server) Close() {
	s.jobs.close()
	s.idem.close()
}

// Serve serves HTTP on ln until ctx is done, then shuts down gracefully:
// the listener closes, in-flight requests get up to ShutdownTimeout to
// finish (http.Server.Shutdown), then jobs are cancelled and awaited
// (Close). It does not close the DB. It returns nil after a shutdown
// caused by ctx, or the serving error.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       s.o.RequestTimeout + 10*time.Second,
		WriteTimeout:      s.o.RequestTimeout + 10*time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.o.Logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		s.Close()
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	s.o.Logger.Info("server: shutting down", "timeout", s.o.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), s.o.ShutdownTimeout)
	defer cancel()
	serr := hs.Shutdown(sctx)
	if serr != nil {
		serr = fmt.Errorf("server: shutdown: %w", serr)
		_ = hs.Close()
	}
	<-errc
	s.Close()
	return serr
}

// Run opens the DB in o.DataDir, serves on ln until ctx is done (Serve),
// and closes the DB (which syncs every WAL). setup functions run before
// serving (e.g. RegisterJobKind). While it starts serving it prewarms
// the collections (engine.DB.Prewarm, logged with its duration). This is
// `searchd serve`.
func Run(ctx context.Context, ln net.Listener, o Options, setup ...func(*Server) error) error {
	o.EnsureDefaults()
	eo := o.Engine
	eo.VerifyRoots = append(append([]verify.Root(nil), eo.VerifyRoots...), o.VerifyRoots...)
	if eo.Logger == nil {
		eo.Logger = o.Logger
	}
	db, err := engine.Open(o.DataDir, eo)
	if err != nil {
		return err
	}
	s, err := New(db, o)
	if err != nil {
		return errors.Join(err, db.Close())
	}
	for _, f := range setup {
		if err := f(s); err != nil {
			s.Close()
			return errors.Join(err, db.Close())
		}
	}
	if s.keys == nil {
		o.Logger.Warn("server: OPEN MODE: no --api-keys file; every caller is trusted (loopback only)", "addr", ln.Addr().String())
	}
	o.Logger.Info("server: listening", "addr", ln.Addr().String(), "data", o.DataDir)
	// Build the collections' lexical catalogs while the listener starts,
	// so that the first queries do not each wait for them.
	warmCtx, stopWarm := context.WithCancel(ctx)
	warmed := make(chan struct{})
	go func() {
		defer close(warmed)
		t0 := time.Now()
		if err := db.Prewarm(warmCtx); err != nil && warmCtx.Err() == nil {
			o.Logger.Warn("server: prewarm", "err", err)
			return
		}
		o.Logger.Info("server: collections prewarmed", "took", time.Since(t0).Round(time.Millisecond))
	}()
	serr := s.Serve(ctx, ln)
	stopWarm()
	<-warmed
	cerr := db.Close()
	if cerr != nil {
		cerr = fmt.Errorf("server: closing the store: %w", cerr)
	}
	o.Logger.Info("server: stopped")
	return errors.Join(serr, cerr)
}

// cleanPath is net/http's canonical form of a request path (the one its
// ServeMux redirects to): rooted, path.Clean'ed, a trailing slash kept.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// IsLoopback reports whether a listen address (host:port) names only
// loopback interfaces: 127.0.0.0/8, ::1 or "localhost".
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) handle(method, pattern string, f routeFlags, h handlerFunc) {
	s.routes = append(s.routes, Route{Method: method, Pattern: pattern})
	s.mux.Handle(method+" "+pattern, s.wrap(f, h))
}

func (s *Server) registerRoutes() {
	s.mux.Handle("GET /healthz", http.HandlerFunc(s.healthz))
	s.routes = append(s.routes, Route{"GET", "/healthz"})
	s.mux.Handle("GET /metrics", s.adminOnly(promhttp.HandlerFor(s.m.reg, promhttp.HandlerOpts{})))
	s.routes = append(s.routes, Route{"GET", "/metrics"})
	s.mux.Handle("GET /v1/openapi.json", http.HandlerFunc(serveSpec))
	s.routes = append(s.routes, Route{"GET", "/v1/openapi.json"})

	s.handle("GET", "/v1/collections", 0, s.listCollections)
	s.handle("POST", "/v1/collections", mutating|admin, s.createCollection)
	s.handle("GET", "/v1/collections/{name}", 0, s.getCollection)
	s.handle("DELETE", "/v1/collections/{name}", mutating|admin, s.dropCollection)
	s.handle("POST", "/v1/collections/{name}/documents", mutating, s.upsert)
	s.handle("GET", "/v1/collections/{name}/documents", 0, s.listDocuments)
	s.handle("POST", "/v1/collections/{name}/documents/delete", mutating, s.deleteDocuments)
	s.handle("GET", "/v1/collections/{name}/documents/{id...}", 0, s.getDocument)
	s.handle("DELETE", "/v1/collections/{name}/documents/{id...}", mutating, s.deleteDocument)
	s.handle("POST", "/v1/collections/{name}/search", 0, s.search)
	s.handle("POST", "/v1/collections/{name}/expand", 0, s.expand)
	s.handle("POST", "/v1/jobs", mutating|admin, s.submitJob)
	s.handle("GET", "/v1/jobs", admin, s.listJobs)
	s.handle("GET", "/v1/jobs/{id}", admin, s.getJob)
	s.handle("POST", "/v1/jobs/{id}/cancel", mutating|admin, s.cancelJob)
}

// statusWriter remembers the status code for metrics and the access log.
type statusWriter struct {
	http.ResponseWriter
	code  int
	bytes int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += n
	return n, err
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// ServeHTTP is the outermost layer: metrics, access log, panic recovery,
// and the error shape for unmatched paths (404) and methods (405).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	h, pattern := s.mux.Handler(r)
	route := pattern
	if route == "" {
		route = "unmatched"
	}
	sw := &statusWriter{ResponseWriter: w}
	info := &reqInfo{}
	r = r.WithContext(context.WithValue(r.Context(), reqInfoKey{}, info))
	s.m.inFlight.Inc()
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.o.Logger.Error("server: handler panicked", "route", route, "panic", fmt.Sprint(p))
			if sw.code == 0 {
				writeAPIError(sw, newErr(http.StatusInternalServerError, StatusInternal, "panic", "internal error", nil, nil, ""))
			}
		}
		s.m.inFlight.Dec()
		code := sw.code
		if code == 0 {
			code = http.StatusOK
		}
		el := time.Since(start)
		cs := strconv.Itoa(code)
		s.m.requests.WithLabelValues(route, cs).Inc()
		s.m.latency.WithLabelValues(route, cs).Observe(el.Seconds())
		s.o.Logger.LogAttrs(r.Context(), slog.LevelInfo, "http",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("route", route),
			slog.Int("status", code), slog.Int("bytes", sw.bytes), slog.Duration("duration", el),
			slog.String("principal", info.principal), slog.String("remote", r.RemoteAddr),
			slog.String("idempotency_key", r.Header.Get(idemHeader)))
	}()
	if !s.hostAllowed(r) {
		writeAPIError(sw, newErr(http.StatusForbidden, StatusForbidden, "host_not_allowed",
			"open mode (no API keys) serves loopback Host names only (DNS-rebinding defence); add the name with --allowed-hosts",
			[]any{"header", "Host"}, clip(r.Host), "localhost, 127.0.0.1, [::1] (any port) or an --allowed-hosts entry"))
		return
	}
	if ep := r.URL.EscapedPath(); r.Method != http.MethodConnect && cleanPath(ep) != ep {
		// net/http's ServeMux would redirect (307, HTML body) to the
		// cleaned path; the API answers in its own error shape instead.
		writeAPIError(sw, newErr(http.StatusBadRequest, StatusValidation, contract.ErrTypeInvalidFormat,
			"the path is not clean (\".\" or \"..\" segments or doubled slashes); percent-encode such characters inside an id",
			[]any{"path"}, clip(ep), "a clean path of the API (GET /v1/openapi.json)"))
		return
	}
	if pattern != "" {
		s.mux.ServeHTTP(sw, r) // (again) so that PathValue is set
		return
	}
	rec := newRecorder()
	h.ServeHTTP(rec, r)
	switch {
	case rec.code == http.StatusMethodNotAllowed:
		if allow := rec.header.Get("Allow"); allow != "" {
			sw.Header().Set("Allow", allow)
		}
		writeAPIError(sw, newErr(http.StatusMethodNotAllowed, StatusMethodNotAllowed, "method_not_allowed",
			"method "+r.Method+" is not allowed on this resource", []any{"method"}, r.Method, rec.header.Get("Allow")))
	case rec.code >= 300 && rec.code < 400:
		rec.copyTo(sw)
	default:
		writeAPIError(sw, newErr(http.StatusNotFound, StatusNotFound, "not_found", "no such resource", []any{"path"}, r.URL.Path, "a path of the API (GET /v1/openapi.json)"))
	}
}

// reqInfo carries what inner layers learn back to the access log.
type reqInfo struct{ principal string }

type reqInfoKey struct{}

func infoOf(r *http.Request) *reqInfo {
	if i, ok := r.Context().Value(reqInfoKey{}).(*reqInfo); ok {
		return i
	}
	return &reqInfo{}
}

// authenticate resolves the request's Bearer key; ok is false (and the 401
// is written) when keys are configured and it names none. In open mode the
// caller is the trusted admin.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*caller, bool) {
	if s.keys == nil {
		return &caller{admin: true}, true
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	var found *caller
	if ok {
		found, ok = s.keys.lookup(strings.TrimSpace(tok))
	}
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="strata"`)
		writeAPIError(w, newErr(http.StatusUnauthorized, StatusUnauthorized, "unauthorized", "a valid API key is required (Authorization: Bearer <key>)", []any{"header", "Authorization"}, nil, "Bearer <key>"))
		return nil, false
	}
	infoOf(r).principal = found.name
	return found, true
}

// adminOnly guards a non-/v1 handler (/metrics): with API keys it needs an
// admin key (401 without a valid key, 403 for a non-admin one); open mode
// is unchanged. No concurrency limit applies.
func (s *Server) adminOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := s.authenticate(w, r)
		if !ok {
			return
		}
		if !c.admin {
			writeAPIError(w, newErr(http.StatusForbidden, StatusForbidden, "forbidden", "this operation needs an admin key", []any{"header", "Authorization"}, nil, "an admin key"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// wrap adds authentication, the concurrency limit, the request deadline,
// body reading and idempotency around a handler.
func (s *Server) wrap(f routeFlags, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &caller{admin: true}
		if f&public == 0 {
			var ok bool
			if c, ok = s.authenticate(w, r); !ok {
				return
			}
		}
		if f&admin != 0 && !c.admin {
			writeAPIError(w, newErr(http.StatusForbidden, StatusForbidden, "forbidden", "this operation needs an admin key", []any{"header", "Authorization"}, nil, "an admin key"))
			return
		}
		if f&public == 0 {
			release, ok := s.acquire(w)
			if !ok {
				return
			}
			defer release()
		}
		base := r.Context()
		if f&mutating != 0 {
			// A write the server accepted completes even if the client goes
			// away (its response is then kept for an idempotent retry).
			base = context.WithoutCancel(base)
		}
		ctx, cancel := context.WithTimeout(base, s.o.RequestTimeout)
		defer cancel()
		ctx = withCaller(ctx, c)
		r = r.WithContext(ctx)
		rq := &request{r: r, ctx: ctx, caller: c, header: http.Header{}}
		var body []byte
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			var ae *apiError
			body, ae = readBody(r, w, s.o.MaxBodyBytes)
			if ae != nil {
				if ae.code == http.StatusRequestEntityTooLarge {
					s.m.rejected.WithLabelValues("body_size").Inc()
					w.Header().Set("Connection", "close")
				}
				writeAPIError(w, ae)
				return
			}
		}
		rq.body = body
		key := r.Header.Get(idemHeader)
		if f&mutating == 0 || key == "" {
			if s.beforeHandler != nil {
				s.beforeHandler(r)
			}
			s.respond(w, rq, h)
			return
		}
		if !validIdemKey(key) {
			writeAPIError(w, newErr(http.StatusBadRequest, StatusValidation, contract.ErrTypeInvalidFormat, "Idempotency-Key must be 1..255 printable ASCII characters", []any{"header", idemHeader}, clip(key), "1..255 printable ASCII characters"))
			return
		}
		name := idemName(c.name, key)
		sum := sha256.Sum256(body)
		bodyHash := hex.EncodeToString(sum[:])
		headersHash := headersFingerprint(r.Header)
		rec, inflight, err := s.idem.begin(name)
		switch {
		case err != nil:
			writeAPIError(w, newErr(http.StatusInternalServerError, StatusInternal, "idempotency_store", err.Error(), nil, nil, ""))
			return
		case inflight:
			w.Header().Set("Retry-After", "1")
			writeAPIError(w, newErr(http.StatusConflict, StatusConflict, "idempotency_in_flight", "a request with this Idempotency-Key is still being processed", []any{"header", idemHeader}, key, "a key not in flight"))
			return
		case rec != nil:
			if rec.Method != r.Method || rec.Path != r.URL.RequestURI() || rec.BodySHA256 != bodyHash || rec.HeadersSHA256 != headersHash {
				writeAPIError(w, newErr(http.StatusUnprocessableEntity, StatusIdempotencyReused, "idempotency_key_reused",
					"this Idempotency-Key was used with a different request (method, path, body or If-Match)", []any{"header", idemHeader}, key, "a fresh key for a different request"))
				return
			}
			s.m.replays.Inc()
			for _, name := range replayHeaders {
				for _, v := range rec.Headers[name] {
					w.Header().Add(name, v)
				}
			}
			w.Header().Set("Content-Type", rec.ContentType)
			w.Header().Set("Content-Length", strconv.Itoa(len(rec.Body)))
			w.Header().Set("Idempotent-Replayed", "true")
			w.WriteHeader(rec.Status)
			_, _ = w.Write(rec.Body)
			return
		}
		if s.beforeHandler != nil {
			s.beforeHandler(r)
		}
		recw := newRecorder()
		func() {
			defer func() {
				if p := recover(); p != nil {
					_ = s.idem.finish(name, nil)
					panic(p)
				}
			}()
			s.respond(recw, rq, h)
		}()
		var store *idemRecord
		if storable(recw.code) {
			store = &idemRecord{Principal: c.name, Key: key, Method: r.Method, Path: r.URL.RequestURI(),
				BodySHA256: bodyHash, HeadersSHA256: headersHash, Headers: savedHeaders(recw.header), Status: recw.code, ContentType: recw.header.Get("Content-Type"), Body: recw.body.Bytes()}
		}
		if err := s.idem.finish(name, store); err != nil {
			s.o.Logger.Error("server: storing an idempotency record failed; a retry may apply the request again", "err", err)
		}
		recw.copyTo(w)
	})
}

// respond runs a handler and writes its result or error.
func (s *Server) respond(w http.ResponseWriter, rq *request, h handlerFunc) {
	code, v, err := h(rq)
	for k, vs := range rq.header {
		w.Header()[k] = vs
	}
	if err != nil {
		writeAPIError(w, s.mapErr(err))
		return
	}
	writeJSON(w, code, v)
}

// mapErr turns an error into its HTTP status and body.
func (s *Server) mapErr(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	if v, ok := asValidation(err); ok {
		return v
	}
	var re *RequestError
	if errors.As(err, &re) {
		return newErr(http.StatusBadRequest, StatusValidation, contract.ErrTypeInvalidFormat, re.Message, []any{"body", re.Field}, nil, "")
	}
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return newErr(http.StatusNotFound, StatusNotFound, "not_found", err.Error(), nil, nil, "")
	case errors.Is(err, engine.ErrExists):
		return newErr(http.StatusConflict, StatusConflict, "exists", err.Error(), nil, nil, "")
	case errors.Is(err, engine.ErrConflict):
		// Not err.Error(): the engine's text names stored state.
		return newErr(http.StatusPreconditionFailed, StatusPrecondition, contract.ErrTypeConflict, "version mismatch", []any{"header", "If-Match"}, nil, "the stored version hash")
	case errors.Is(err, engine.ErrBatchTooLarge):
		return newErr(http.StatusRequestEntityTooLarge, StatusTooLarge, "too_large", err.Error(), []any{"documents"}, nil,
			"a batch of at most "+strconv.Itoa(engine.MaxBatchBytes)+" bytes as stored (one WAL record)")
	case errors.Is(err, engine.ErrBadName):
		return newErr(http.StatusBadRequest, StatusValidation, contract.ErrTypeInvalidFormat, err.Error(), []any{"path", "name"}, nil, "1..128 of [A-Za-z0-9_.-]")
	case errors.Is(err, engine.ErrUnavailable):
		// The collection's data could not be opened: the reason, with
		// paths relative to the data directory.
		return newErr(http.StatusServiceUnavailable, StatusUnavailable, "collection_unavailable", s.relPaths(err.Error()), nil, nil, "an openable collection")
	case errors.Is(err, tier.ErrWriteStall):
		return newErr(http.StatusServiceUnavailable, StatusUnavailable, "write_stall", err.Error(), nil, nil, "")
	case errors.Is(err, tier.ErrReadOnly), errors.Is(err, engine.ErrClosed):
		return newErr(http.StatusServiceUnavailable, StatusUnavailable, "unavailable", err.Error(), nil, nil, "")
	case errors.Is(err, context.DeadlineExceeded):
		return newErr(http.StatusGatewayTimeout, StatusTimeout, "timeout", "the request deadline passed", nil, nil, "")
	case errors.Is(err, context.Canceled):
		return newErr(http.StatusServiceUnavailable, StatusUnavailable, "cancelled", "the request was cancelled", nil, nil, "")
	}
	s.o.Logger.Error("server: internal error", "err", err)
	return newErr(http.StatusInternalServerError, StatusInternal, "internal", err.Error(), nil, nil, "")
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	if err := s.db.Err(); err != nil {
		// No detail: /healthz is unauthenticated and the error names a
		// collection and its files (the log and /metrics have them).
		s.o.Logger.Warn("server: healthz: store unavailable", "err", err)
		writeAPIError(w, newErr(http.StatusServiceUnavailable, StatusUnavailable, "read_only",
			"a collection store is read-only after an I/O failure (see the server log)", nil, nil, "a writable store"))
		return
	}
	if bad := s.db.Unavailable(); len(bad) > 0 {
		// Degraded: the other collections serve. With API keys only an
		// admin key sees which collections and why (/healthz is
		// unauthenticated); others get the count.
		detail := s.keys == nil
		if !detail {
			if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
				c, ok := s.keys.lookup(strings.TrimSpace(tok))
				detail = ok && c.admin
			}
		}
		type unavailable struct {
			Collection string `json:"collection"`
			Reason     string `json:"reason"`
		}
		body := struct {
			Status      string        `json:"status"`
			Count       int           `json:"unavailable_collections"`
			Unavailable []unavailable `json:"unavailable,omitempty"`
		}{Status: "degraded", Count: len(bad)}
		if detail {
			for _, n := range sortedKeysOf(bad) {
				body.Unavailable = append(body.Unavailable, unavailable{n, s.relPaths(bad[n].Error())})
			}
		}
		writeJSON(w, http.StatusOK, body)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// relPaths shortens the data directory out of an error text.
func (s *Server) relPaths(msg string) string {
	if s.o.DataDir == "" {
		return msg
	}
	return strings.ReplaceAll(msg, filepath.Clean(s.o.DataDir)+string(filepath.Separator), "")
}

func sortedKeysOf(m map[string]error) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedStrings(ss []string) []string {
	sort.Strings(ss)
	return ss
}

// acquire takes one of the MaxConcurrency request slots, or answers 429
// (Retry-After: 1) and reports false when none is free. The caller runs
// release when the request is done.
func (s *Server) acquire(w http.ResponseWriter) (release func(), ok bool) {
	select {
	case s.sem <- struct{}{}:
		return func() { <-s.sem }, true
	default:
		s.m.rejected.WithLabelValues("concurrency").Inc()
		w.Header().Set("Retry-After", "1")
		writeAPIError(w, newErr(http.StatusTooManyRequests, StatusTooMany, "concurrency_limit", "too many concurrent requests", nil, nil, "at most "+strconv.Itoa(s.o.MaxConcurrency)+" at once"))
		return nil, false
	}
}
