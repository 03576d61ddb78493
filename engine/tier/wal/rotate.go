package wal

// RequestRotation makes the next write that finds records in the active
// segment start a new segment first, so that a later TruncateBefore
// covering every record up to now removes the file that held them (the
// active segment otherwise rotates only at SegmentSizeBytes). Records
// already written stay where they are until then.
func (w *WAL) RequestRotation() { w.rotateReq.Store(true) }
