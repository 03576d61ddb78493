package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/stratasearch/strata/datasets"
)

// Run runs the named suites in order and writes cfg.OutDir/results.json,
// report.md and the PNG plots. It returns the results also on a suite
// error (partial, not written).
func Run(ctx context.Context, cfg Config, suites []string) (*Results, error) {
	cfg = cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ss, err := lookup(suites)
	if err != nil {
		return nil, err
	}
	if cfg.RepoRoot == "" {
		if cfg.RepoRoot, err = datasets.ModuleRoot(); err != nil {
			return nil, fmt.Errorf("bench: finding the module root: %w", err)
		}
	}
	if cfg.WorkDir == "" {
		dir, err := os.MkdirTemp("", "strata-bench-")
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		defer os.RemoveAll(dir)
		cfg.WorkDir = dir
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	res := &Results{
		Schema:  SchemaVersion,
		Command: cfg.Command,
		Started: time.Now().UTC().Format(time.RFC3339),
		Suites:  suites,
		Quick:   cfg.Quick,
		Threads: cfg.Threads,
		Machine: probeMachine(),
		Peers:   []PeerInfo{},
		Ratios:  []Ratio{},
	}
	for _, s := range ss {
		cfg.logf("== suite %s", s.Name())
		if err := s.Run(ctx, cfg, res); err != nil {
			return res, fmt.Errorf("bench: suite %s: %w", s.Name(), err)
		}
	}
	res.Finished = time.Now().UTC().Format(time.RFC3339)
	if err := WriteOutputs(cfg.OutDir, res); err != nil {
		return res, err
	}
	return res, nil
}

// Rewrite reads dir/results.json and rewrites report.md and the plots from
// it (after a change to the report or plot code; nothing is re-measured).
func Rewrite(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	var res Results
	if err := json.Unmarshal(b, &res); err != nil {
		return fmt.Errorf("bench: %s: %w", filepath.Join(dir, "results.json"), err)
	}
	if res.Schema != SchemaVersion {
		return fmt.Errorf("bench: %s: schema %q, want %q", dir, res.Schema, SchemaVersion)
	}
	return WriteOutputs(dir, &res)
}

// WriteOutputs writes results.json, report.md and the plots into dir.
func WriteOutputs(dir string, res *Results) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	plots, err := writePlots(dir, res)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(Report(res, plots)), 0o644); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}
