package tier

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// ErrWriteStall: a write waited Options.StallTimeout for flushes and
// compaction to bring the warm segment count (or the MemTable) back under
// the stop bound, and was not applied. Retry later; a server maps it to 503
// with Retry-After.
var ErrWriteStall = errors.New("tier: write stalled by backpressure")

// backpressure counts throttled writes.
type backpressure struct {
	slowdowns  atomic.Int64 // writes delayed by SlowdownDelay
	stalls     atomic.Int64 // writes that blocked at the stop bound
	stallNanos atomic.Int64 // total time blocked
	timeouts   atomic.Int64 // writes that failed with ErrWriteStall
}

// BackpressureStats reports the store's write throttling since Open.
type BackpressureStats struct {
	// Slowdowns counts writes delayed by Options.SlowdownDelay.
	Slowdowns int64 `json:"slowdowns"`
	// Stalls counts writes that blocked at the stop bound; StallTime is
	// their total blocked time.
	Stalls    int64         `json:"stalls"`
	StallTime time.Duration `json:"stall_ns"`
	// Timeouts counts writes that failed with ErrWriteStall.
	Timeouts int64 `json:"timeouts"`
	// Segments is the current warm segment count; SlowdownSegments and
	// StopSegments are the bounds (Options).
	Segments         int `json:"segments"`
	SlowdownSegments int `json:"slowdown_segments"`
	StopSegments     int `json:"stop_segments"`
}

// Backpressure returns the write-throttling counters and bounds.
func (s *Store) Backpressure() BackpressureStats {
	v := s.currentView()
	n := len(v.segs)
	v.unref()
	return BackpressureStats{
		Slowdowns: s.bp.slowdowns.Load(), Stalls: s.bp.stalls.Load(),
		StallTime: time.Duration(s.bp.stallNanos.Load()), Timeouts: s.bp.timeouts.Load(),
		Segments: n, SlowdownSegments: s.o.SlowdownSegments, StopSegments: s.o.StopSegments,
	}
}

// pressure reports whether a write must slow down or stop, and why.
func (s *Store) pressure() (slow, stop bool, why string) {
	if s.o.StopSegments < 0 {
		return false, false, ""
	}
	v := s.currentView()
	n := len(v.segs)
	mem := v.hotSize() // active + frozen MemTables
	v.unref()
	if n >= s.o.StopSegments {
		return true, true, fmt.Sprintf("%d warm segments (stop bound %d)", n, s.o.StopSegments)
	}
	if lim := s.o.MemTableSizeBytes; lim > 0 && mem >= 4*lim {
		return true, true, fmt.Sprintf("MemTable %d bytes (stop bound 4×%d)", mem, lim)
	}
	if n >= s.o.SlowdownSegments {
		return true, false, ""
	}
	if lim := s.o.MemTableSizeBytes; lim > 0 && mem >= 2*lim {
		return true, false, ""
	}
	return false, false, ""
}

// throttle applies backpressure before a write (see Options). It returns
// ErrWriteStall after StallTimeout at the stop bound, ErrClosed if the
// store closes meanwhile, or the store's sticky error.
func (s *Store) throttle() error {
	slow, stop, why := s.pressure()
	if !slow {
		return nil
	}
	if !stop {
		s.bp.slowdowns.Add(1)
		time.Sleep(s.o.SlowdownDelay)
		return nil
	}
	s.bp.stalls.Add(1)
	start := time.Now()
	defer func() { s.bp.stallNanos.Add(int64(time.Since(start))) }()
	logged := false
	for {
		s.kick()        // flush (if needed) in the background
		s.kickCompact() // and merge (AutoCompact)
		if s.closed.Load() {
			return ErrClosed
		}
		if err := s.Err(); err != nil {
			return err
		}
		if time.Since(start) >= s.o.StallTimeout {
			s.bp.timeouts.Add(1)
			return fmt.Errorf("%w: %s for %v", ErrWriteStall, why, s.o.StallTimeout)
		}
		if !logged {
			s.o.Logger.Warn("tier: writes stalled by backpressure", "dir", s.o.Dir, "reason", why)
			logged = true
		}
		time.Sleep(5 * time.Millisecond)
		if _, stop, why2 := s.pressure(); !stop {
			return nil
		} else {
			why = why2
		}
	}
}
