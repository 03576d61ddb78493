package wal

// RequestRotation makes the next write that finds records in the active
// segment start a new segment first, so that a later TruncateBefore
// covering every record up to now removes the file that held them (the
// active segment otherwise rotates only at SegmentSizeBytes). Records
// already written stay where they are until then.
func (w *WAL) RequestRotation() { w.rotateReq.Store(true) }

// RetireThrough deletes every segment file whose records all have
// sequence numbers ≤ seq — the caller's proof that they are durable
// elsewhere (the tier: a manifest edit with DurableEpoch ≥ seq) — the
// active one included: when every record appended so far is ≤ seq and
// written, and the active segment holds any, it starts a new, empty
// segment for the next sequence number first (fsyncing and closing the
// old one, as a rotation does, OnRotate included), then deletes the older
// files as TruncateBefore(seq+1) does. Otherwise it is TruncateBefore(seq
// + 1). Appends wait while the rotation runs. A failed rotation fails the
// WAL (ErrFailed), as a failed rotation during a write does; a failed
// removal is returned without failing it.
func (w *WAL) RetireThrough(seq uint64) error {
	w.ioMu.Lock()
	w.mu.Lock()
	if w.closed || w.err != nil {
		err := w.err
		if err == nil {
			err = ErrClosed
		}
		w.mu.Unlock()
		w.ioMu.Unlock()
		return err
	}
	last := w.nextSeq - 1
	idle := w.written == last && len(w.pending) == 0
	w.mu.Unlock()
	if idle && last <= seq && w.segSize > 0 {
		if err := w.newSegment(last + 1); err != nil {
			w.mu.Lock()
			w.fail(err)
			w.mu.Unlock()
			w.ioMu.Unlock()
			return err
		}
	}
	w.ioMu.Unlock()
	return w.TruncateBefore(seq + 1)
}
