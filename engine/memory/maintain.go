package memory

import (
	"context"
	"errors"
	"time"
)

// MaintainOptions configures Maintain, the background job.
type MaintainOptions struct {
	// Interval is the time between passes. Default 10 minutes.
	Interval time.Duration
	// Sources resolves provenance URIs for CheckSources. Default
	// FileSources (file:// spans; other schemes are kept).
	Sources SourceResolver
	// Report receives each pass's report and error (nil: none).
	Report func(MaintainReport, error)
}

// MaintainReport is what one maintenance pass did.
type MaintainReport struct {
	Consolidated  ConsolidateReport `json:"consolidated"`
	Expired       RollbackReport    `json:"expired"`
	SourceChanged RollbackReport    `json:"source_changed"`
	Purged        PurgeReport       `json:"purged"`
}

// MaintainOnce runs one maintenance pass: Consolidate over every subject,
// Expire (the retention policy), CheckSources with sources (nil:
// FileSources), then Purge, which does nothing unless records were
// deleted since the last Purge (by this pass or by any delete). Each step
// runs even if an earlier one failed; the errors are joined.
func (s *Store) MaintainOnce(ctx context.Context, sources SourceResolver) (MaintainReport, error) {
	if sources == nil {
		sources = FileSources
	}
	var rep MaintainReport
	var errs []error
	var err error
	if rep.Consolidated, err = s.Consolidate(ctx, ""); err != nil {
		errs = append(errs, err)
	}
	if rep.Expired, err = s.Expire(ctx); err != nil {
		errs = append(errs, err)
	}
	if rep.SourceChanged, err = s.CheckSources(ctx, sources); err != nil {
		errs = append(errs, err)
	}
	if rep.Purged, err = s.Purge(ctx); err != nil {
		errs = append(errs, err)
	}
	return rep, errors.Join(errs...)
}

// Maintain runs MaintainOnce every o.Interval until ctx is done, and
// returns ctx's error. A failed pass is reported (o.Report) and the next
// one runs on schedule.
func (s *Store) Maintain(ctx context.Context, o MaintainOptions) error {
	if o.Interval <= 0 {
		o.Interval = 10 * time.Minute
	}
	t := time.NewTicker(o.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if err := ctx.Err(); err != nil {
			return err // both were ready: cancellation wins
		}
		rep, err := s.MaintainOnce(ctx, o.Sources)
		if o.Report != nil {
			o.Report(rep, err)
		}
	}
}
