package bench

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The server suite runs `searchd loadtest` (cmd/searchd/load.go: a bounded
// loopback load against an in-process HTTP server over a temporary store;
// seeded synthetic code-like documents; concurrent clients issuing
// searches and, with --write-ratio, upserts) and records its per-operation
// p50 / p99 / max latency, throughput and error count. The command itself
// fails on any error or on goroutines / heap not returning to baseline;
// that failure fails the suite.

const serverSuiteName = "server"

// ServerParams sizes a server run: the load duration, concurrent
// clients, and synthetic documents loaded first.
type ServerParams struct {
	Duration time.Duration
	Clients  int
	Docs     int
	// WriteRatio is loadtest's --write-ratio, the fraction of requests
	// that are upserts of 1–4 documents. Default 0.1 (loadtest's own).
	WriteRatio float64
}

func serverParams(cfg Config) ServerParams {
	if cfg.Server != nil {
		return *cfg.Server
	}
	if cfg.Quick {
		return ServerParams{Duration: 5 * time.Second, Clients: 8, Docs: 2000, WriteRatio: 0.1}
	}
	return ServerParams{Duration: 30 * time.Second, Clients: 8, Docs: 5000, WriteRatio: 0.1}
}

// ServerOp is one operation's line of the loadtest table.
type ServerOp struct {
	Op     string  `json:"op"` // search, upsert, total
	Count  int     `json:"count"`
	OpsS   float64 `json:"ops_per_s"`
	P50Ms  float64 `json:"p50_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
	Errors int     `json:"errors"`
}

// ServerRun is one `searchd loadtest` run.
type ServerRun struct {
	Command string     `json:"command"`
	Params  string     `json:"params"`
	Ops     []ServerOp `json:"ops"`
	// Output is the command's full stdout (its load phase, baseline and
	// after-run goroutine / heap lines).
	Output string `json:"output"`
}

type serverSuite struct{}

func init() { Register(serverSuite{}) }

func (serverSuite) Name() string { return serverSuiteName }

func (serverSuite) Run(ctx context.Context, cfg Config, res *Results) error {
	p := serverParams(cfg)
	bin := filepath.Join(cfg.WorkDir, "searchd")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/searchd")
	build.Dir = cfg.RepoRoot
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("bench: server: building searchd: %v: %s", err, out)
	}
	argv := []string{bin, "loadtest", "--duration", p.Duration.String(), "--clients", strconv.Itoa(p.Clients), "--docs", strconv.Itoa(p.Docs),
		"--write-ratio", strconv.FormatFloat(p.WriteRatio, 'g', -1, 64), "--seed", "1"}
	cfg.logf("server: %s", strings.Join(argv[1:], " "))
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	run := ServerRun{Command: "searchd " + strings.Join(argv[1:], " "),
		Params: fmt.Sprintf("%v, %d clients, %d documents, write ratio %g, in-process server on loopback", p.Duration, p.Clients, p.Docs, p.WriteRatio),
		Output: stdout.String()}
	ops, perr := ParseLoadtest(stdout.String())
	run.Ops = ops
	res.Server = append(res.Server, run)
	if runErr != nil {
		return fmt.Errorf("bench: server: searchd loadtest: %v:\n%s\n%s", runErr, lastLines(stdout.String(), 6), strings.TrimSpace(stderr.String()))
	}
	if perr != nil {
		return perr
	}
	for _, o := range ops {
		cfg.logf("server: %-6s %d ops, %.0f ops/s, p50 %.2f ms, p99 %.2f ms, %d errors", o.Op, o.Count, o.OpsS, o.P50Ms, o.P99Ms, o.Errors)
	}
	return nil
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

// ParseLoadtest reads the operation table of `searchd loadtest`:
//
//	op          count     ops/s       p50       p99       max  errors
//	search       1234      1234    1.2ms     3.4ms     5.6ms       0
//
// (durations in Go syntax, "-" when an operation did not run). It needs a
// "total" line.
func ParseLoadtest(out string) ([]ServerOp, error) {
	var ops []ServerOp
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 7 || (f[0] != "search" && f[0] != "upsert" && f[0] != "total") {
			continue
		}
		o := ServerOp{Op: f[0]}
		var err error
		if o.Count, err = strconv.Atoi(f[1]); err != nil {
			return nil, fmt.Errorf("bench: server: loadtest line %q: %v", line, err)
		}
		if o.Errors, err = strconv.Atoi(f[6]); err != nil {
			return nil, fmt.Errorf("bench: server: loadtest line %q: %v", line, err)
		}
		if f[2] != "-" {
			if o.OpsS, err = strconv.ParseFloat(f[2], 64); err != nil {
				return nil, fmt.Errorf("bench: server: loadtest line %q: %v", line, err)
			}
			for i, dst := range []*float64{&o.P50Ms, &o.P99Ms, &o.MaxMs} {
				d, err := time.ParseDuration(f[3+i])
				if err != nil {
					return nil, fmt.Errorf("bench: server: loadtest line %q: %v", line, err)
				}
				*dst = float64(d) / float64(time.Millisecond)
			}
		}
		ops = append(ops, o)
	}
	for _, o := range ops {
		if o.Op == "total" {
			return ops, nil
		}
	}
	return ops, fmt.Errorf("bench: server: no operation table in the loadtest output:\n%s", lastLines(out, 10))
}
