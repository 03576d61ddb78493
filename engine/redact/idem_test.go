package redact

import "testing"

// TestRedactURIPortQueryAt: an authority with a port and no path,
// followed by a query or fragment holding '@', has no userinfo (RFC 3986
// §3.2: the authority ends at the first '/', '?' or '#'), so a clean URI
// must come back byte-identical. userinfoEnd only cuts at '/', and its
// "user name holds '?' or '#'" guard does not see the '?' after the ':'
// of the port, so the port and the query up to the '@' are dropped as a
// "password".
func TestRedactURIPortQueryAt(t *testing.T) {
	for _, uri := range []string{
		"https://example.com:8443?email=bob@example.com",
		"https://example.com:8443#contact=bob@example.com",
		"http://localhost:3000?next=/login&user=a@b.org",
	} {
		if got, n, rules := URI(uri); got != uri || n != 0 {
			t.Errorf("URI(%q) = %q, %d %v; want it unchanged", uri, got, n, rules)
		}
	}
}

// TestRedactURIIdempotent: a stored (already redacted) SourceURI
// written back — an update that copies a hit's SourceURI — must not be
// rewritten again. A token user name is replaced by "[REDACTED:rule]",
// whose ':' a second pass reads as a user:password separator, dropping
// ":rule]" as a password: https://[REDACTED@github.com/….
func TestRedactURIIdempotent(t *testing.T) {
	uri := "https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x/y.git"
	r1, n1, _ := URI(uri)
	if n1 == 0 {
		t.Fatalf("URI(%q): nothing redacted", uri)
	}
	if r2, n2, rules := URI(r1); r2 != r1 || n2 != 0 {
		t.Errorf("URI(%q) = %q, %d %v; want the redacted form unchanged", r1, r2, n2, rules)
	}
}
