package lexical

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Peer engine names.
const (
	PeerXapian = "xapian"
	PeerFTS5   = "fts5"
	PeerBleve  = "bleve"
)

// Peer driver sources, relative to the module root, and the headers whose
// presence means the Debian -dev packages are installed.
const (
	xapianSource = "bench/peers/xapian/driver.cc"
	fts5Source   = "bench/peers/fts5/driver.c"
	// bleveModule is the Bleve driver's own Go module (so the main go.mod
	// does not depend on Bleve).
	bleveModule  = "bench/peers/bleve"
	xapianHeader = "/usr/include/xapian.h"
	sqliteHeader = "/usr/include/sqlite3.h"
)

// Drivers are the compiled native peer drivers.
type Drivers struct {
	Xapian string // path of the Xapian C++ driver binary
	FTS5   string // path of the SQLite FTS5 C driver binary
	Bleve  string // path of the Bleve v2 Go driver binary
	// Commands are the compiler invocations that built them, with the
	// build directory shown as $WORK and source paths relative to the
	// module root.
	Commands []string
}

// PeersAvailable reports whether the compilers and the peer development
// headers (libxapian-dev, libsqlite3-dev) are installed; the error names
// what is missing (install with
// ./scripts/ensure-apt.sh libxapian-dev libsqlite3-dev g++).
func PeersAvailable() error {
	var missing []string
	for _, tool := range []string{"g++", "gcc", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	for _, h := range []string{xapianHeader, sqliteHeader} {
		if _, err := os.Stat(h); err != nil {
			missing = append(missing, h)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("lexical: peers missing: %s (run ./scripts/ensure-apt.sh libxapian-dev libsqlite3-dev g++)", strings.Join(missing, ", "))
	}
	return nil
}

// BuildDrivers compiles the peer drivers from repoRoot's sources into dir
// with -O2 (g++ for Xapian, gcc for FTS5) and `go build` in the Bleve
// driver's module (GOWORK=off; its dependencies come from the module
// cache, filled by `make peers` or on first use through the proxy).
func BuildDrivers(ctx context.Context, repoRoot, dir string) (*Drivers, error) {
	if err := PeersAvailable(); err != nil {
		return nil, err
	}
	d := &Drivers{Xapian: filepath.Join(dir, "xapian_driver"), FTS5: filepath.Join(dir, "fts5_driver"), Bleve: filepath.Join(dir, "bleve_driver")}
	for _, argv := range [][]string{
		{"g++", "-O2", "-std=c++17", "-o", d.Xapian, filepath.Join(repoRoot, xapianSource), "-lxapian"},
		{"gcc", "-O2", "-o", d.FTS5, filepath.Join(repoRoot, fts5Source), "-lsqlite3"},
		{"go", "build", "-trimpath", "-o", d.Bleve, "."},
	} {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		if argv[0] == "go" {
			cmd.Dir = filepath.Join(repoRoot, bleveModule)
			// The driver is always built for the host: it runs here.
			cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false", "GOOS=", "GOARCH=", "CGO_ENABLED=0")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("lexical: building peer driver (%s): %v: %s", strings.Join(argv, " "), err, out)
		}
		shown := strings.ReplaceAll(strings.Join(argv, " "), dir, "$WORK")
		if argv[0] == "go" {
			shown = "(cd " + bleveModule + " && " + shown + ")"
		}
		d.Commands = append(d.Commands, strings.ReplaceAll(shown, repoRoot+string(filepath.Separator), ""))
	}
	return d, nil
}

// IndexReport is a driver's answer to "index".
type IndexReport struct {
	Engine     string  `json:"engine"`
	Version    string  `json:"version"`
	Docs       int     `json:"docs"`
	IndexWallS float64 `json:"index_wall_s"`
	IndexCPUS  float64 `json:"index_cpu_s"`
	IndexBytes int64   `json:"index_bytes"`
	// UncompactedBytes and CompactWallS: Xapian only, the database size
	// before Database::compact and the compaction's share of the time.
	UncompactedBytes int64   `json:"uncompacted_bytes,omitempty"`
	CompactWallS     float64 `json:"compact_wall_s,omitempty"`
	Error            string  `json:"error,omitempty"`
}

// QueryReport is a driver's answer to "query": the best pass's wall and
// CPU seconds over the whole batch, every pass's times, the total number
// of hits and the per-query results (corpus line ordinals, best first).
type QueryReport struct {
	Engine   string    `json:"engine"`
	Version  string    `json:"version"`
	Op       string    `json:"op"`
	K        int       `json:"k"`
	Passes   int       `json:"passes"`
	WallS    float64   `json:"wall_s"`
	CPUS     float64   `json:"cpu_s"`
	WallSAll []float64 `json:"wall_s_all"`
	CPUSAll  []float64 `json:"cpu_s_all"`
	Hits     int       `json:"hits"`
	Results  [][]int64 `json:"results"`
	Error    string    `json:"error,omitempty"`
}

// runDriver runs argv and decodes its single JSON line into v.
func runDriver(ctx context.Context, argv []string, v interface{ errText() string }) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// Single thread for every peer: the Bleve driver (Go) would otherwise
	// spread its search and background merging over every core.
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if jerr := json.Unmarshal(bytes.TrimSpace(out), v); jerr != nil {
		return fmt.Errorf("lexical: %s: %v (exit %v, stderr %q, stdout %.200q)", strings.Join(argv, " "), jerr, err, stderr.String(), out)
	}
	if e := v.errText(); e != "" {
		return fmt.Errorf("lexical: %s: %s", strings.Join(argv, " "), e)
	}
	if err != nil {
		return fmt.Errorf("lexical: %s: %v (stderr %q)", strings.Join(argv, " "), err, stderr.String())
	}
	return nil
}

func (r *IndexReport) errText() string { return r.Error }
func (r *QueryReport) errText() string { return r.Error }

// peerConfig is one peer configuration: which driver, where its index
// lives and how it analyses text.
type peerConfig struct {
	engine string // PeerXapian, PeerFTS5 or PeerBleve
	bin    string
	index  string // Xapian / Bleve index directory or SQLite file
	// analysis: Xapian and Bleve "none"/"english"; FTS5 tokenizer.
	analysis string
	pretok   bool // Xapian and Bleve: the text is already space-separated tokens
}

func (p peerConfig) mode() string {
	if p.pretok {
		return "pretok"
	}
	return "raw"
}

func (p peerConfig) buildIndex(ctx context.Context, corpus string) (*IndexReport, error) {
	var argv []string
	if p.engine == PeerXapian || p.engine == PeerBleve {
		argv = []string{p.bin, "index", p.index, corpus, p.analysis, p.mode()}
	} else {
		argv = []string{p.bin, "index", p.index, corpus, p.analysis}
	}
	var r IndexReport
	if err := runDriver(ctx, argv, &r); err != nil {
		return nil, err
	}
	if r.Engine != p.engine {
		return nil, fmt.Errorf("lexical: driver %s reported engine %q, want %q", p.bin, r.Engine, p.engine)
	}
	return &r, nil
}

func (p peerConfig) query(ctx context.Context, queries, op string, k, passes int, wantQueries int) (*QueryReport, error) {
	var argv []string
	if p.engine == PeerXapian || p.engine == PeerBleve {
		argv = []string{p.bin, "query", p.index, queries, p.analysis, p.mode(), op, strconv.Itoa(k), strconv.Itoa(passes)}
	} else {
		argv = []string{p.bin, "query", p.index, queries, p.analysis, op, strconv.Itoa(k), strconv.Itoa(passes)}
	}
	var r QueryReport
	if err := runDriver(ctx, argv, &r); err != nil {
		return nil, err
	}
	if r.Engine != p.engine || len(r.Results) != wantQueries || r.Passes != passes || len(r.WallSAll) != passes {
		return nil, fmt.Errorf("lexical: driver %s: engine %q, %d results, %d passes; want %q, %d, %d",
			p.bin, r.Engine, len(r.Results), len(r.WallSAll), p.engine, wantQueries, passes)
	}
	return &r, nil
}

// writeLines writes one line per string (newlines inside replaced by
// spaces) to path.
func writeLines(path string, lines []string) error {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.NewReplacer("\n", " ", "\r", " ").Replace(l))
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("lexical: %w", err)
	}
	return nil
}
