package server

import (
	"net"
	"net/http"
	"strings"
)

// hostAllowed reports whether an open-mode request may be served: its Host
// header names a loopback host (localhost, 127.0.0.0/8, ::1, with or
// without a port) or one of Options.AllowedHosts. See Options.AllowedHosts.
func (s *Server) hostAllowed(r *http.Request) bool {
	if s.keys != nil {
		return true
	}
	host := hostOnly(r.Host)
	if host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, a := range s.o.AllowedHosts {
		if a == "*" || strings.EqualFold(hostOnly(a), host) {
			return true
		}
	}
	return false
}

// hostOnly strips the port and IPv6 brackets of a Host value and one
// trailing dot of a name ("localhost." is "localhost").
func hostOnly(h string) string {
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	} else if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	return strings.TrimSuffix(h, ".")
}
