package bm25

import "sync"

// prefetchParallel bounds the concurrent Fetch calls of one query.
const prefetchParallel = 8

// prefetch makes the blobs of pl's terms present in every view whose
// segment has a Fetcher, up to prefetchParallel fetches at a time, so a
// query over many segments waits for about one round trip instead of one
// per term and segment. Excluded terms are fetched too. Without a
// Fetcher, or once every blob is present, it costs one bit test per term
// and view.
func prefetch(views []View, pl *plan) error {
	type want struct {
		s *Segment
		i int
		r termRec
	}
	var todo []want
	for vi, v := range views {
		s := v.Seg
		if s.fetch == nil {
			continue
		}
		for qi := range pl.terms {
			ref := pl.ref(qi, vi, s)
			if ref.idx >= 0 && !s.present(int(ref.idx)) && !s.hasRange(int(ref.idx), ref.rec) {
				todo = append(todo, want{s, int(ref.idx), ref.rec})
			}
		}
		for _, t := range pl.exclude {
			if i, ok := s.lookup(t); ok && !s.present(i) && !s.hasRange(i, s.rec(i)) {
				todo = append(todo, want{s, i, s.rec(i)})
			}
		}
	}
	switch len(todo) {
	case 0:
		return nil
	case 1:
		return todo[0].s.need(todo[0].i, todo[0].r)
	}
	errs := make([]error, len(todo))
	sem := make(chan struct{}, prefetchParallel)
	var wg sync.WaitGroup
	for k, w := range todo {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[k] = w.s.need(w.i, w.r)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
