package tier

import (
	"errors"
	"testing"
	"time"

	"github.com/stratasearch/strata/vfs"
)

// TestBackpressureBoundsSegments: with flushes after every write and
// compaction off, writes slow down past SlowdownSegments and, at
// StopSegments, fail with ErrWriteStall after StallTimeout without being
// applied; with AutoCompact the same workload blocks briefly instead,
// compaction merges the segments, and the segment count never exceeds
// StopSegments + 1 (the flush of the writes already admitted).
func TestBackpressureBoundsSegments(t *testing.T) {
	for _, auto := range []bool{false, true} {
		name := "manual"
		if auto {
			name = "autocompact"
		}
		t.Run(name, func(t *testing.T) {
			o := testOptions(vfs.NewCrashableMem())
			o.CompactMaxSegments = 2
			o.SlowdownSegments = 2
			o.StopSegments = 3
			o.StallTimeout = 200 * time.Millisecond
			o.AutoCompact = auto
			s := mustOpen(t, o)
			maxSegs, stalled := 0, false
			for i := uint64(1); i <= 12; i++ {
				epoch0 := s.Epoch()
				_, err := s.Apply(genBatch(5, i))
				if errors.Is(err, ErrWriteStall) {
					if auto {
						t.Fatalf("write %d stalled out with AutoCompact: %v", i, err)
					}
					if s.Epoch() != epoch0 {
						t.Fatal("a stalled write was applied")
					}
					stalled = true
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Flush(bg); err != nil {
					t.Fatal(err)
				}
				maxSegs = max(maxSegs, len(s.WarmSegments()))
			}
			bp := s.Backpressure()
			t.Logf("%s: max %d segments, %+v", name, maxSegs, bp)
			if maxSegs > o.StopSegments+1 {
				t.Fatalf("segment count reached %d, stop bound %d", maxSegs, o.StopSegments)
			}
			if bp.Slowdowns == 0 || bp.Stalls == 0 {
				t.Fatalf("no slowdowns/stalls recorded: %+v", bp)
			}
			if !auto && (!stalled || bp.Timeouts != 1) {
				t.Fatalf("manual compaction: want one ErrWriteStall, got stalled=%v %+v", stalled, bp)
			}
			if auto && s.Compactions() == 0 {
				t.Fatal("no compaction ran")
			}
		})
	}
}

func TestBackpressureOff(t *testing.T) {
	o := testOptions(vfs.NewCrashableMem())
	o.CompactMaxSegments = 1
	o.StopSegments = -1
	s := mustOpen(t, o)
	for i := uint64(1); i <= 5; i++ {
		if _, err := s.Apply(genBatch(6, i)); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(bg); err != nil {
			t.Fatal(err)
		}
	}
	if bp := s.Backpressure(); bp.Slowdowns+bp.Stalls != 0 || len(s.WarmSegments()) != 5 {
		t.Fatalf("backpressure off: %+v, %d segments", bp, len(s.WarmSegments()))
	}
}
