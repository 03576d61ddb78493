package hnsw

// cand is a (distance, id) pair.
type cand struct {
	d  float32
	id uint32
}

// minHeap is a binary min-heap on d. Its backing array is reused across
// searches (owned by a pooled searchCtx), so steady-state pushes do not
// allocate.
type minHeap struct{ a []cand }

func (h *minHeap) reset()    { h.a = h.a[:0] }
func (h *minHeap) len() int  { return len(h.a) }
func (h *minHeap) top() cand { return h.a[0] }

func (h *minHeap) push(c cand) {
	h.a = append(h.a, c)
	a := h.a
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if a[p].d <= c.d {
			break
		}
		a[i] = a[p]
		i = p
	}
	a[i] = c
}

func (h *minHeap) pop() cand {
	a := h.a
	top := a[0]
	n := len(a) - 1
	last := a[n]
	h.a = a[:n]
	if n > 0 {
		siftDownMin(a[:n], 0, last)
	}
	return top
}

func siftDownMin(a []cand, i int, c cand) {
	n := len(a)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && a[r].d < a[l].d {
			m = r
		}
		if a[m].d >= c.d {
			break
		}
		a[i] = a[m]
		i = m
	}
	a[i] = c
}

// maxHeap is a binary max-heap on d: the current result set, whose top is
// the furthest kept element.
type maxHeap struct{ a []cand }

func (h *maxHeap) reset()    { h.a = h.a[:0] }
func (h *maxHeap) len() int  { return len(h.a) }
func (h *maxHeap) top() cand { return h.a[0] }

func (h *maxHeap) push(c cand) {
	h.a = append(h.a, c)
	a := h.a
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if a[p].d >= c.d {
			break
		}
		a[i] = a[p]
		i = p
	}
	a[i] = c
}

func (h *maxHeap) pop() cand {
	a := h.a
	top := a[0]
	n := len(a) - 1
	last := a[n]
	h.a = a[:n]
	if n > 0 {
		siftDownMax(a[:n], 0, last)
	}
	return top
}

// replaceTop pops the top and pushes c in one sift.
func (h *maxHeap) replaceTop(c cand) { siftDownMax(h.a, 0, c) }

// keepNearest reduces h to its k nearest entries in O(len·log k), using
// buf as scratch; it returns buf for reuse.
func (h *maxHeap) keepNearest(k int, buf []cand) []cand {
	if h.len() <= k {
		return buf
	}
	t := maxHeap{a: buf[:0]}
	for _, c := range h.a {
		switch {
		case t.len() < k:
			t.push(c)
		case c.d < t.top().d:
			t.replaceTop(c)
		}
	}
	h.a = append(h.a[:0], t.a...)
	return t.a
}

func siftDownMax(a []cand, i int, c cand) {
	n := len(a)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && a[r].d > a[l].d {
			m = r
		}
		if a[m].d <= c.d {
			break
		}
		a[i] = a[m]
		i = m
	}
	a[i] = c
}

// visited is a visited set with generation counters (hnswlib's
// VisitedList): mark[i] == gen means i was visited in this search. Bumping
// gen clears the set in O(1); the array is zeroed only when gen wraps
// (every 255 searches). One byte per node (hnswlib uses two) keeps the
// array of a 20k-node graph inside L1.
type visited struct {
	mark []uint8
	gen  uint8
}

// next starts a new search over n ids.
func (v *visited) next(n int) {
	if len(v.mark) < n {
		c := n + n/4 + 64
		v.mark = make([]uint8, c)
		v.gen = 0
	}
	v.gen++
	if v.gen == 0 {
		clear(v.mark)
		v.gen = 1
	}
}

// visit marks i and reports whether it was already marked.
func (v *visited) visit(i uint32) bool {
	if v.mark[i] == v.gen {
		return true
	}
	v.mark[i] = v.gen
	return false
}
