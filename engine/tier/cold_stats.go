package tier

// TierStats is the storage footprint of one tier.
type TierStats struct {
	// Tier is "hot", "warm" or "cold".
	Tier string
	// Rows counts stored versions (live or not yet compacted away);
	// Vectors those with a vector.
	Rows, Vectors int
	// Bytes is the tier's size: file bytes for warm segments and cold
	// archives; for the hot tier the MemTable's estimate (ids, contents
	// and float32 vectors plus 64 bytes of overhead per version).
	Bytes int64
	// RawTextBytes is the total content length of the rows.
	RawTextBytes int64
}

// BytesPerVector is Bytes / Vectors (0 without vectors): everything the
// tier stores per vector (codes or floats, the index, documents and
// container overhead).
func (t TierStats) BytesPerVector() float64 {
	if t.Vectors == 0 {
		return 0
	}
	return float64(t.Bytes) / float64(t.Vectors)
}

// Alpha is α_storage = tier bytes / raw text bytes (0 without text).
func (t TierStats) Alpha() float64 {
	if t.RawTextBytes == 0 {
		return 0
	}
	return float64(t.Bytes) / float64(t.RawTextBytes)
}

// StorageStats reports the storage amplification of each tier of the
// snapshot's view (hot, warm, cold, in that order).
func (sn *Snapshot) StorageStats() []TierStats {
	hot := TierStats{Tier: "hot", Bytes: sn.v.hotSize()}
	for _, m := range append([]*memTable{sn.v.mem}, sn.v.frozen...) {
		m.mu.RLock()
		for i := range m.versions {
			hot.Rows++
			hot.RawTextBytes += int64(len(m.versions[i].doc.Content))
			if m.versions[i].row >= 0 {
				hot.Vectors++
			}
		}
		m.mu.RUnlock()
	}
	warm := TierStats{Tier: "warm"}
	for _, sg := range sn.v.segs {
		warm.Bytes += int64(sg.meta.SizeBytes)
		for _, d := range sg.docs {
			warm.Rows++
			warm.RawTextBytes += int64(len(d.Content))
			if d.Vector != nil {
				warm.Vectors++
			}
		}
	}
	cold := TierStats{Tier: "cold"}
	for _, a := range sn.v.cold {
		cold.Bytes += int64(a.meta.SizeBytes)
		cold.Vectors += len(a.codeRow)
		for _, d := range a.docs {
			cold.Rows++
			cold.RawTextBytes += int64(len(d.Content))
		}
	}
	return []TierStats{hot, warm, cold}
}
