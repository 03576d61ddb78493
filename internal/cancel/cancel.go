// Package cancel holds the cancellation test the search loops of the
// index packages (hnsw, ivfpq, bm25), the tier and the engine share.
//
// A loop takes its context's Done channel once (ctx.Done()) and calls
// Done every few hundred units of work: one non-blocking receive, a few
// nanoseconds, or a single nil test for context.Background, whose channel
// is nil. Done inlines.
package cancel

// Done reports whether done is closed; a nil done never is.
func Done(done <-chan struct{}) bool {
	if done == nil {
		return false
	}
	select {
	case <-done:
		return true
	default:
		return false
	}
}
