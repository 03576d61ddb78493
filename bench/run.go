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
// report.md and the PNG plots. A suite error stops the run: what was
// measured so far is still written, with the error in Results.Errors, and
// the error is returned (the command exits non-zero).
func Run(ctx context.Context, cfg Config, suites []string) (*Results, error) {
	cfg = cfg.EnsureDefaults()
	if !cfg.Emulated {
		if emu, why := DetectEmulation(); emu {
			cfg.Emulated = true
			cfg.logf("emulation detected (%s): timings are %s", why, EmulatedLabel)
		}
	}
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
		Schema:   SchemaVersion,
		Command:  cfg.Command,
		Started:  time.Now().UTC().Format(time.RFC3339),
		Suites:   suites,
		Quick:    cfg.Quick,
		Threads:  cfg.Threads,
		Machine:  probeMachine(),
		Peers:    []PeerInfo{},
		Ratios:   []Ratio{},
		Emulated: cfg.Emulated,
	}
	if cfg.Emulated {
		res.Notes = append(res.Notes, "Every timing in this run is "+EmulatedLabel+" (user-mode emulation): the run checks that the suites work on this architecture.")
	}
	if cfg.NoPeers {
		res.Notes = append(res.Notes, "Peers disabled (--no-peers, emulated run): peer engines are not available emulated, so no ratios were computed.")
	}
	for _, s := range ss {
		cfg.logf("== suite %s", s.Name())
		t0 := time.Now()
		if err := s.Run(ctx, cfg, res); err != nil {
			err = fmt.Errorf("bench: suite %s: %w", s.Name(), err)
			res.Errors = append(res.Errors, err.Error())
			res.Finished = time.Now().UTC().Format(time.RFC3339)
			if werr := WriteOutputs(cfg.OutDir, res); werr != nil {
				cfg.logf("writing partial results: %v", werr)
			}
			return res, err
		}
		res.SuiteSeconds = append(res.SuiteSeconds, SuiteTime{Suite: s.Name(), Seconds: time.Since(t0).Seconds()})
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
