package mcp

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Protocol revisions served over HTTP.
const (
	// StatefulRevision is the newest revision with the initialize
	// handshake and sessions (Mcp-Session-Id); older ones are negotiated
	// down by the SDK.
	StatefulRevision = "2025-11-25"
	// StatelessRevision has no handshake: every request carries its
	// revision (the Mcp-Protocol-Version header and _meta) and stands
	// alone. The SDK serves it only in its stateless mode.
	StatelessRevision = "2026-07-28"
)

// sessionTimeout closes idle stateful sessions.
const sessionTimeout = 30 * time.Minute

// HTTPOptions configures HTTPHandler.
type HTTPOptions struct {
	// Authenticate returns the caller of a request, or ok = false to
	// answer it 401. Required. Behind server.Mount it reads the principal
	// the API key mapped to (the JSON API's keys).
	Authenticate func(r *http.Request) (c Caller, ok bool)
	// HostCheckedUpstream turns off the SDK's DNS-rebinding check (a
	// loopback listener refusing non-loopback Host headers) because the
	// enclosing server applies its own (server.Options.AllowedHosts).
	// Default false.
	HostCheckedUpstream bool
}

// HTTPHandler serves the tools over MCP's streamable HTTP transport.
// A request whose Mcp-Protocol-Version is StatelessRevision or newer goes
// to the SDK's stateless handler (each POST is a whole request; closing it
// cancels the call); every other request to the stateful one
// (StatefulRevision and older: initialize, Mcp-Session-Id, a
// notifications/cancelled cancels the call's context). Each principal gets
// its own MCP server whose tools run as it, and a session stays bound to
// the principal that opened it: a request naming another principal's
// session is answered 404 like an unknown one (so is a request by the
// principal's non-admin key naming a session its admin key opened).
func (s *Server) HTTPHandler(o HTTPOptions) http.Handler {
	h := &httpHandler{s: s, o: o, owner: map[string]sessionOwner{}}
	get := func(r *http.Request) *sdk.Server {
		c, ok := o.Authenticate(r)
		if !ok {
			return nil
		}
		return s.sdkFor(c)
	}
	h.stateful = sdk.NewStreamableHTTPHandler(get, &sdk.StreamableHTTPOptions{
		SessionTimeout: sessionTimeout, DisableLocalhostProtection: o.HostCheckedUpstream, Logger: s.log})
	h.stateless = sdk.NewStreamableHTTPHandler(get, &sdk.StreamableHTTPOptions{
		Stateless: true, PropagateRequestCancellation: true, DisableLocalhostProtection: o.HostCheckedUpstream, Logger: s.log})
	return h
}

// callerKey names the MCP server a caller gets: its principal key, and
// whether it has the job tools. Two API keys of one principal, one of
// them an admin's, get different servers, and neither may use a session
// the other opened.
func (s *Server) callerKey(c Caller) string {
	key := principalKey(c.Principal, s.o.Namespace)
	if s.jobTools(c) {
		key += "\x00admin"
	}
	return key
}

// sdkFor returns the MCP server of c's principal, building it once.
func (s *Server) sdkFor(c Caller) *sdk.Server {
	key := s.callerKey(c)
	s.mu.Lock()
	defer s.mu.Unlock()
	if srv := s.sdks[key]; srv != nil {
		return srv
	}
	srv := s.SDKServer(c)
	s.sdks[key] = srv
	return srv
}

type sessionOwner struct {
	principal string
	seen      time.Time
}

type httpHandler struct {
	s                   *Server
	o                   HTTPOptions
	stateful, stateless http.Handler

	mu    sync.Mutex
	owner map[string]sessionOwner // Mcp-Session-Id → principal key
}

const (
	sessionHeader  = "Mcp-Session-Id"
	protocolHeader = "Mcp-Protocol-Version"
)

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, ok := h.o.Authenticate(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="strata"`)
		http.Error(w, "a valid API key is required (Authorization: Bearer <key>)", http.StatusUnauthorized)
		return
	}
	if r.Method == http.MethodPost {
		// A body that is not JSON, or nests deeper than the SDK decodes,
		// gets a JSON-RPC error (inboundReply; the SDK answers it with a
		// plain-text 400).
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, sdk.DefaultMaxRequestBodyBytes))
		if err != nil {
			http.Error(w, "request body too large or unreadable", http.StatusRequestEntityTooLarge)
			return
		}
		if reply := inboundReply(body); reply != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(reply)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	if v := r.Header.Get(protocolHeader); v >= StatelessRevision {
		h.stateless.ServeHTTP(w, r)
		return
	}
	who := h.s.callerKey(c)
	if id := r.Header.Get(sessionHeader); id != "" {
		h.mu.Lock()
		own, known := h.owner[id]
		if known && own.principal == who {
			own.seen = time.Now()
			h.owner[id] = own
		}
		h.mu.Unlock()
		if known && own.principal != who {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		if r.Method == http.MethodDelete {
			defer func() {
				h.mu.Lock()
				delete(h.owner, id)
				h.mu.Unlock()
			}()
		}
	}
	h.stateful.ServeHTTP(&sessionRecorder{ResponseWriter: w, h: h, who: who}, r)
}

// sessionRecorder records the owner of a session the response opens.
type sessionRecorder struct {
	http.ResponseWriter
	h     *httpHandler
	who   string
	wrote bool
}

func (sr *sessionRecorder) WriteHeader(code int) {
	if !sr.wrote {
		sr.wrote = true
		if id := sr.Header().Get(sessionHeader); id != "" {
			sr.h.mu.Lock()
			now := time.Now()
			if _, ok := sr.h.owner[id]; !ok {
				for k, o := range sr.h.owner { // forget sessions the SDK has timed out
					if now.Sub(o.seen) > sessionTimeout {
						delete(sr.h.owner, k)
					}
				}
				sr.h.owner[id] = sessionOwner{principal: sr.who, seen: now}
			}
			sr.h.mu.Unlock()
		}
	}
	sr.ResponseWriter.WriteHeader(code)
}

func (sr *sessionRecorder) Write(p []byte) (int, error) {
	if !sr.wrote {
		sr.WriteHeader(http.StatusOK)
	}
	return sr.ResponseWriter.Write(p)
}

func (sr *sessionRecorder) Flush() {
	if f, ok := sr.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (sr *sessionRecorder) Unwrap() http.ResponseWriter { return sr.ResponseWriter }
