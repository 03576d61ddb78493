package base

// GrowMap returns m ready for n more keys: m itself when n is small (under
// 64) or smaller than len(m), since m then grows at most once; otherwise
// a copy of m made with room for len(m)+n keys, so that a batch of n
// inserts costs one table of the final size, not the chain of doubled
// tables (each one garbage after the next) that growing by insertion
// leaves. The caller replaces its reference to m with the result.
func GrowMap[K comparable, V any](m map[K]V, n int) map[K]V {
	if n < 64 || n < len(m) {
		return m
	}
	out := make(map[K]V, len(m)+n)
	for k, v := range m {
		out[k] = v
	}
	return out
}
