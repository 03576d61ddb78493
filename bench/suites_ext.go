package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stratasearch/strata/bench/hybrid"
	"github.com/stratasearch/strata/bench/lexical"
)

// The lexical and hybrid suites live in their own packages (bench/lexical,
// bench/hybrid), each with its own command. These adapters run them from
// strata-bench: their full reports go to OUT/lexical and OUT/hybrid, and
// their headline ratios are copied into results.json (StrataRun and
// PeerRun are -1: the runs are in the sub-report, not in Results.ANN).

func init() {
	Register(lexicalSuite{})
	Register(hybridSuite{})
}

type lexicalSuite struct{}

func (lexicalSuite) Name() string { return "lexical" }

func (lexicalSuite) Run(ctx context.Context, cfg Config, res *Results) error {
	o := lexical.Options{Quick: cfg.Quick, RepoRoot: cfg.RepoRoot, Log: cfg.Log, Command: cfg.Command}
	if cfg.WorkDir != "" {
		o.WorkDir = filepath.Join(cfg.WorkDir, "lexical")
	}
	r, err := lexical.Run(ctx, o)
	if err != nil {
		return err
	}
	dir := filepath.Join(cfg.OutDir, "lexical")
	if err := writeSub(dir, r, r.Markdown()); err != nil {
		return err
	}
	plots, err := writeLexicalPlots(dir, r, cfg.Emulated)
	if err != nil {
		return err
	}
	for _, p := range plots {
		res.Notes = append(res.Notes, "lexical suite: bar chart lexical/"+p)
	}
	for _, p := range r.Peers {
		res.Peers = append(res.Peers, PeerInfo{Engine: p.Engine, Version: p.Version, Driver: p.Driver})
	}
	for _, x := range r.Ratios {
		res.Ratios = append(res.Ratios, Ratio{Suite: "lexical", Dataset: "see lexical/report.md", Figure: x.Metric,
			Peer: x.Peer, Strata: x.Strata, PeerVal: x.PeerV, Value: x.Value, StrataRun: -1, PeerRun: -1, Note: x.Goal})
	}
	res.Notes = append(res.Notes, "lexical suite: full report in lexical/report.md")
	return nil
}

type hybridSuite struct{}

func (hybridSuite) Name() string { return "hybrid" }

func (hybridSuite) Run(ctx context.Context, cfg Config, res *Results) error {
	c := hybrid.Config{Log: cfg.Log, Command: cfg.Command}
	if cfg.Quick {
		c.Resamples = 2000
	}
	r, err := hybrid.Run(ctx, c)
	if err != nil {
		return err
	}
	if err := hybrid.WriteFiles(filepath.Join(cfg.OutDir, "hybrid"), r); err != nil {
		return err
	}
	res.Notes = append(res.Notes, "hybrid suite: fusion quality study in hybrid/report.md")
	return nil
}

func writeSub(dir string, v any, md string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.md"), []byte(md), 0o644)
}
