package server

import (
	"context"
	"net/http"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
)

// Mount serves h at pattern (every method; Go ServeMux syntax) behind the
// API keys: a request without a valid key is answered 401 before h runs,
// and h reads the key's principal with CallerOf. Host checks, metrics,
// the access log and panic recovery apply as to every route, and POSTs
// count against MaxConcurrency (429 beyond; a long-lived GET stream does
// not hold a slot). The body limit, deadlines and idempotency are h's
// business. For handlers such as package mcp's HTTP transport (searchd
// serve mounts it at /mcp).
func (s *Server) Mount(pattern string, h http.Handler) {
	s.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := s.authenticate(w, r)
		if !ok {
			return
		}
		if r.Method == http.MethodPost {
			release, ok := s.acquire(w)
			if !ok {
				return
			}
			defer release()
		}
		h.ServeHTTP(w, r.WithContext(withCaller(r.Context(), c)))
	}))
}

// CallerOf returns the principal of a request Mount passed on (nil in
// open mode: the trusted caller) and whether its key is an admin key.
func CallerOf(ctx context.Context) (p *contract.Principal, admin bool) {
	c := callerOf(ctx)
	return c.principal, c.admin
}

// DB returns the database the server serves.
func (s *Server) DB() *engine.DB { return s.db }
