package engine

// RequestWALRotation makes the collection's WAL start a new segment at
// its next write, so the Flush after that write deletes the WAL file that
// held every earlier record (tier.Store.RequestWALRotation). Callers that
// must get deleted bytes off the disk (package engine/memory's Purge) use
// it with a write, Flush and Compact.
func (c *Collection) RequestWALRotation() { c.store.RequestWALRotation() }
