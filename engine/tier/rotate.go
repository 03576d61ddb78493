package tier

// RequestWALRotation makes the WAL start a new segment at its next
// write (wal.WAL.RequestRotation), so the flush after that write deletes
// the segment holding every earlier record: a deleted document's bytes
// then leave the WAL without waiting for SegmentSizeBytes of writes.
func (s *Store) RequestWALRotation() { s.wal.RequestRotation() }
