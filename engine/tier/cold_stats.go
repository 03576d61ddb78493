package tier

import (
	"slices"
	"strings"
)

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
	// VectorIndex names the warm tier's vector-index kinds: "hnsw",
	// "ivfpq", "flat" (exact scan of small IVF-PQ-configured segments),
	// or several joined by "+" for a mixed store ("" for hot and cold,
	// and without vectors).
	VectorIndex string
	// VectorIndexBytes is the warm tier's vector-index section bytes:
	// the HNSW sections (graph plus its float32 vectors) and the IVF-PQ
	// sections (coarse centroids, PQ codebooks, list directory, ids and
	// codes). The exact float32 vectors an IVF-PQ segment refines with
	// live in the doc store (zstd) and are counted in Bytes only.
	VectorIndexBytes int64
	// FloatVectorBytes is 4·Dim·Vectors: what the tier's vectors take as
	// plain float32 (the hot tier's representation), for comparison.
	FloatVectorBytes int64
}

// IndexBytesPerVector is VectorIndexBytes / Vectors (0 without vectors):
// for warm IVF-PQ segments ≈ M·nbits/8 code bytes + 4 id bytes + the
// per-segment centroid and codebook tables spread over the vectors; for
// HNSW the graph links plus 4·Dim float bytes.
func (t TierStats) IndexBytesPerVector() float64 {
	if t.Vectors == 0 {
		return 0
	}
	return float64(t.VectorIndexBytes) / float64(t.Vectors)
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
	var kinds []string
	for _, sg := range sn.v.segs {
		warm.Bytes += int64(sg.meta.SizeBytes)
		warm.VectorIndexBytes += sg.idxBytes
		if k := string(sg.indexKind); k != "" && !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
		// Lazily loaded text counts its blocks' decoded size (content
		// plus a length prefix per row).
		warm.RawTextBytes += sg.textRaw
		for _, d := range sg.docs {
			warm.Rows++
			warm.RawTextBytes += int64(len(d.Content))
			if d.Vector != nil {
				warm.Vectors++
			}
		}
	}
	slices.Sort(kinds)
	warm.VectorIndex = strings.Join(kinds, "+")
	dim := int64(sn.s.o.Dim)
	hot.FloatVectorBytes = 4 * dim * int64(hot.Vectors)
	warm.FloatVectorBytes = 4 * dim * int64(warm.Vectors)
	cold := TierStats{Tier: "cold"}
	for _, a := range sn.v.cold {
		cold.Bytes += int64(a.meta.SizeBytes)
		cold.Vectors += len(a.codeRow)
		for _, d := range a.docs {
			cold.Rows++
			cold.RawTextBytes += int64(len(d.Content))
		}
	}
	cold.FloatVectorBytes = 4 * dim * int64(cold.Vectors)
	return []TierStats{hot, warm, cold}
}
