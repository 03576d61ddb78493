package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/ingest"
)

// jsonResult is one result of search --json: the contract.Result fields
// and "timings".
type jsonResult struct {
	contract.Result
	Timings jsonTimings `json:"timings"`
}

// jsonTimings: opening the store (once per run, the same in every result
// of a --batch) and this query's search, in milliseconds (fractional).
type jsonTimings struct {
	OpenMS   float64 `json:"open_ms"`
	SearchMS float64 `json:"search_ms"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// rate formats a throughput of bytes over d: MB/s from 1 MB/s, else KB/s
// from 1 KB/s, else B/s (a slow run, such as one embedding with a remote
// model, does not print "0.0 MB/s").
func rate(bytes int64, d time.Duration) string {
	r := float64(bytes) / max(d.Seconds(), 1e-9)
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.1f MB/s", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.1f KB/s", r/1e3)
	}
	return fmt.Sprintf("%.0f B/s", r)
}

// searchOptions maps the search flags --definitions and --priors to
// ingest.SearchOptions.
func searchOptions(defs string, priors bool) (ingest.SearchOptions, error) {
	o := ingest.SearchOptions{NoPriors: !priors}
	switch defs {
	case "auto":
		o.Definitions = ingest.DefsAuto
	case "always":
		o.Definitions = ingest.DefsAlways
	case "off":
		o.Definitions = ingest.DefsOff
	default:
		return o, fmt.Errorf("search: --definitions %q: want auto, always or off", defs)
	}
	return o, nil
}

// indexRoots makes every index PATH absolute and checks that it exists.
func indexRoots(pos []string) ([]string, error) {
	out := make([]string, 0, len(pos))
	for _, p := range pos {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		out = append(out, abs)
	}
	return out, nil
}

// addStats sums the counters of two index runs (one per PATH).
func addStats(a, b ingest.Stats) ingest.Stats {
	if a.Skips == nil {
		a.Skips = ingest.Skips{}
	}
	for k, v := range b.Skips {
		a.Skips[k] += v
	}
	a.Files += b.Files
	a.Read += b.Read
	a.Indexed += b.Indexed
	a.Unchanged += b.Unchanged
	a.Removed += b.Removed
	a.Chunks += b.Chunks
	a.Generated += b.Generated
	a.Deleted += b.Deleted
	a.Bytes += b.Bytes
	a.Batches += b.Batches
	a.Elapsed += b.Elapsed
	a.WalkTime += b.WalkTime
	a.WriteTime += b.WriteTime
	a.Embedded += b.Embedded
	a.EmbedBytes += b.EmbedBytes
	a.EmbedTime += b.EmbedTime
	return a
}

// bridgePath is where index keeps a collection's vocabulary bridge.
func bridgePath(dir, col string) string {
	return filepath.Join(dir, "ingest", col+".bridge")
}

// buildBridge learns the collection's vocabulary bridge and saves it.
func buildBridge(ctx context.Context, w io.Writer, col *engine.Collection, path string) error {
	t0 := time.Now()
	b, st, err := ingest.BuildBridge(ctx, col)
	if err != nil {
		return err
	}
	if err := ingest.SaveBridge(path, b); err != nil {
		return err
	}
	size := int64(0)
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	fmt.Fprintf(w, "bridge:  %d words, %d associations from %d documented declarations (%.1f KiB) in %v (search --expand)\n",
		st.Words, st.Assocs, st.Decls, float64(size)/1024, time.Since(t0).Round(time.Millisecond))
	return nil
}

// loadBridge reads the collection's vocabulary bridge for search --expand.
func loadBridge(dir, col string) (*ingest.Bridge, error) {
	b, err := ingest.LoadBridge(bridgePath(dir, col))
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, fmt.Errorf("search --expand: no vocabulary bridge for collection %q in %s (run 'searchd index PATH --data %s')", col, dir, dir)
	}
	return b, nil
}
