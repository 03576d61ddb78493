//go:build !linux

package engine

// throughLinkResolve has no single-call form here: ok is false, and the
// caller walks the components.
func throughLinkResolve(p string) (link, ok bool) { return false, false }
