package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stratasearch/strata/bench/code"
	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/ingest"
)

// The ripgrep suite: the no-index baseline a user would run instead of
// Strata. ripgrep (Debian `ripgrep`, installed by scripts/peers.sh) reads
// the whole tree on every query, so it is always fresh; Strata answers
// from an index built once (`searchd index`'s collection, flushed to warm
// segments) with Query.Verify on.
//
// Queries (bench/code/docsentence/queries.json, 200 declarations of
// GOROOT/src drawn with a fixed seed, each with its resolved file and line
// span; quick mode takes the first 50):
//
//   - identifier: Strata searches the "pkg.Type.Method" text through
//     ingest.Search (definitions first, as the CLI); rg searches the last
//     name as a fixed-string whole word in Go files
//     (rg -F -w -t go NAME ROOT), what a user who knows the name types.
//   - phrase: the first PhraseWords (4) words of the doc-sentence
//     (deterministic, no choice by hand); Strata searches it as a quoted
//     phrase (contract.SyntaxOperators), rg as a case-insensitive fixed
//     string (rg -F -i ROOT).
//
// success@5: Strata's top 5 hits; rg's first 5 matching lines in file
// order (paths sorted, then line numbers: what `rg --sort path` prints
// first). A hit succeeds when its file is the answer's file and its line
// range overlaps the answer's span (code.Match). rg runs with its default
// parallelism and its output is sorted here, so its latency is not that
// of the slower single-threaded `--sort path`.
//
// E_stale: a Strata hit is stale when the BLAKE3 of its source span read
// from disk after the query differs from its VersionHash; an rg match is
// stale when the file's line differs from the line rg printed. The tree
// is not edited during the suite (the staleness suite measures E_stale
// under edits), so both must be 0; a non-zero count fails the suite.
const ripgrepSuiteName = "ripgrep"

// PhraseWords is how many leading words of a doc-sentence form a phrase
// query.
const PhraseWords = 4

// RipgrepQuery is one query of the ripgrep suite: the Strata query text,
// the rg pattern and flags, and the answers (file relative to Root).
type RipgrepQuery struct {
	Set     string        `json:"set"` // identifier or phrase
	Strata  string        `json:"strata"`
	Syntax  string        `json:"syntax,omitempty"`
	Pattern string        `json:"pattern"`
	RgFlags []string      `json:"rg_flags"`
	Answers []code.Answer `json:"answers"`
}

// RipgrepSet is one query set's comparison.
type RipgrepSet struct {
	Set     string `json:"set"`
	Queries int    `json:"queries"`
	// Latency per query in milliseconds: rg = one process over the tree
	// (wall), Strata = one ingest.Search call with Verify (wall).
	RgP50Ms      float64 `json:"rg_p50_ms"`
	RgMeanMs     float64 `json:"rg_mean_ms"`
	StrataP50Ms  float64 `json:"strata_p50_ms"`
	StrataMeanMs float64 `json:"strata_mean_ms"`
	StrataP99Ms  float64 `json:"strata_p99_ms"`
	RgS5         float64 `json:"rg_success_at_5"`
	StrataS5     float64 `json:"strata_success_at_5"`
	// Hits checked for staleness (Strata: all, rg: the first 5 of each
	// query) and the stale ones.
	RgHits       int `json:"rg_hits"`
	RgEStale     int `json:"rg_e_stale"`
	StrataHits   int `json:"strata_hits"`
	StrataEStale int `json:"strata_e_stale"`
	RgNoMatch    int `json:"rg_no_match"` // queries rg found nothing for
}

// RipgrepRun is one run of the ripgrep suite.
type RipgrepRun struct {
	Root      string       `json:"root"`
	RgVersion string       `json:"rg_version"`
	Files     int          `json:"files"` // files Strata indexed
	IndexS    float64      `json:"index_s"`
	Sets      []RipgrepSet `json:"sets"`
	Method    string       `json:"method"`
}

// RipgrepParams replaces the suite's tree and queries (tests).
type RipgrepParams struct {
	Root    string
	Queries []RipgrepQuery
}

type ripgrepSuite struct{}

func init() { Register(ripgrepSuite{}) }

func (ripgrepSuite) Name() string { return ripgrepSuiteName }

// RipgrepQueries derives the two query sets from the doc-sentence file
// (bench/code/docsentence/queries.json under repo); n > 0 keeps the first
// n declarations.
func RipgrepQueries(repo string, n int) ([]RipgrepQuery, error) {
	var f struct {
		Queries []struct {
			code.DocDecl
			Answers []code.Answer `json:"answers"`
		} `json:"queries"`
	}
	p := filepath.Join(repo, "bench", "code", "docsentence", "queries.json")
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("bench: ripgrep: %w", err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("bench: ripgrep: %s: %w", p, err)
	}
	qs := f.Queries
	if n > 0 && n < len(qs) {
		qs = qs[:n]
	}
	var id, ph []RipgrepQuery
	for _, q := range qs {
		parts := strings.Split(q.Identifier, ".")
		name := parts[len(parts)-1]
		id = append(id, RipgrepQuery{Set: "identifier", Strata: q.Identifier, Pattern: name,
			RgFlags: []string{"-F", "-w", "-t", "go"}, Answers: q.Answers})
		phrase := PhraseOf(q.Sentence, PhraseWords)
		if phrase == "" {
			continue
		}
		ph = append(ph, RipgrepQuery{Set: "phrase", Strata: `"` + phrase + `"`, Syntax: string(contract.SyntaxOperators),
			Pattern: phrase, RgFlags: []string{"-F", "-i"}, Answers: q.Answers})
	}
	return append(id, ph...), nil
}

// PhraseOf returns the first n words of sentence, without double quotes
// (they would end the quoted phrase) and a trailing period.
func PhraseOf(sentence string, n int) string {
	ws := strings.Fields(strings.ReplaceAll(sentence, `"`, " "))
	if len(ws) > n {
		ws = ws[:n]
	}
	return strings.TrimSuffix(strings.Join(ws, " "), ".")
}

func (ripgrepSuite) Run(ctx context.Context, cfg Config, res *Results) error {
	root := filepath.Join(runtime.GOROOT(), "src")
	var qs []RipgrepQuery
	if p := cfg.Ripgrep; p != nil {
		root, qs = p.Root, p.Queries
	} else {
		n := 0
		if cfg.Quick {
			n = 50
		}
		var err error
		if qs, err = RipgrepQueries(cfg.RepoRoot, n); err != nil {
			return err
		}
	}
	ver, err := exec.CommandContext(ctx, "rg", "--version").Output()
	if err != nil {
		return fmt.Errorf("bench: ripgrep: rg missing or not runnable (install: scripts/peers.sh): %w", err)
	}
	run := RipgrepRun{Root: root, RgVersion: strings.SplitN(strings.TrimSpace(string(ver)), "\n", 2)[0],
		Method: fmt.Sprintf("identifier: Strata ingest.Search(\"pkg.Type.Method\", lexical, k=10, Verify) vs rg -F -w -t go NAME; phrase: first %d words of the doc-sentence, Strata quoted phrase (operators syntax) vs rg -F -i; success@5 = answer span among Strata's top 5 / rg's first 5 matching lines in path order; latency = wall per query (rg: one process, default threads)", PhraseWords)}
	res.Peers = append(res.Peers, PeerInfo{Engine: "ripgrep", Version: run.RgVersion, Driver: "rg (Debian ripgrep)"})

	work := filepath.Join(cfg.WorkDir, "ripgrep")
	if err := os.RemoveAll(work); err != nil {
		return fmt.Errorf("bench: ripgrep: %w", err)
	}
	db, col, err := newCodeCollection(filepath.Join(work, "data"), 0)
	if err != nil {
		return err
	}
	defer db.Close()
	t0 := time.Now()
	st, err := ingest.Index(ctx, col, filepath.Join(work, "code.manifest.json"), root, ingest.Options{ExcludePaths: []string{work}}, ingest.Progress{})
	if err != nil {
		return fmt.Errorf("bench: ripgrep: index %s: %w", root, err)
	}
	if err := col.Flush(ctx); err != nil {
		return fmt.Errorf("bench: ripgrep: %w", err)
	}
	run.Files, run.IndexS = st.Indexed, time.Since(t0).Seconds()
	cfg.logf("ripgrep: indexed %d files of %s in %.1f s", run.Files, root, run.IndexS)

	sets := map[string]*ripgrepAcc{}
	var order []string
	for _, q := range qs {
		a := sets[q.Set]
		if a == nil {
			a = &ripgrepAcc{}
			sets[q.Set] = a
			order = append(order, q.Set)
		}
		// Alternate engines query by query, so load from other processes
		// falls on both alike.
		rgHits, d, stale, err := runRg(ctx, root, q)
		if err != nil {
			return err
		}
		a.rg = append(a.rg, d)
		a.rgHits += min(5, len(rgHits))
		a.rgStale += stale
		if len(rgHits) == 0 {
			a.rgNoMatch++
		}
		if k := code.Match(q.Answers, rgHits[:min(5, len(rgHits))]); k > 0 {
			a.rgS5++
		}
		sq := contract.Query{Text: q.Strata, TopK: 10, Mode: contract.Lexical, Verify: true, Syntax: contract.Syntax(q.Syntax)}
		s0 := time.Now()
		r, err := ingest.Search(ctx, col, sq)
		sd := time.Since(s0)
		if err != nil {
			return fmt.Errorf("bench: ripgrep: strata %q: %w", q.Strata, err)
		}
		a.strata = append(a.strata, sd)
		var hs []code.HitSpan
		for _, h := range r.Hits {
			a.strataHits++
			p, from, to, err := engine.ParseFileURI(h.SourceURI)
			if err != nil {
				return fmt.Errorf("bench: ripgrep: strata hit %q: %w", h.SourceURI, err)
			}
			if strataHitStale(h) {
				a.strataStale++
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return fmt.Errorf("bench: ripgrep: %w", err)
			}
			hs = append(hs, code.HitSpan{File: filepath.ToSlash(rel), From: from, To: to})
		}
		if k := code.Match(q.Answers, hs); k >= 1 && k <= 5 {
			a.strataS5++
		}
	}
	for _, name := range order {
		a := sets[name]
		n := float64(len(a.rg))
		s := RipgrepSet{Set: name, Queries: len(a.rg),
			RgP50Ms: msQuantile(a.rg, 0.5), RgMeanMs: msMean(a.rg),
			StrataP50Ms: msQuantile(a.strata, 0.5), StrataMeanMs: msMean(a.strata), StrataP99Ms: msQuantile(a.strata, 0.99),
			RgS5: float64(a.rgS5) / n, StrataS5: float64(a.strataS5) / n,
			RgHits: a.rgHits, RgEStale: a.rgStale, StrataHits: a.strataHits, StrataEStale: a.strataStale, RgNoMatch: a.rgNoMatch}
		run.Sets = append(run.Sets, s)
		cfg.logf("ripgrep %s (%d queries): rg p50 %.1f ms, success@5 %.3f; strata p50 %.2f ms p99 %.2f ms, success@5 %.3f; E_stale rg %d strata %d",
			name, s.Queries, s.RgP50Ms, s.RgS5, s.StrataP50Ms, s.StrataP99Ms, s.StrataS5, s.RgEStale, s.StrataEStale)
		ds := "$(go env GOROOT)/src"
		if cfg.Ripgrep != nil {
			ds = root
		}
		res.Ratios = append(res.Ratios,
			Ratio{Suite: ripgrepSuiteName, Dataset: ds, Figure: name + " latency p50 (rg / strata, goal ≥ 50)", Peer: "ripgrep",
				Strata: s.StrataP50Ms, PeerVal: s.RgP50Ms, Value: s.RgP50Ms / s.StrataP50Ms, StrataRun: -1, PeerRun: -1},
			Ratio{Suite: ripgrepSuiteName, Dataset: ds, Figure: name + " latency mean (rg / strata)", Peer: "ripgrep",
				Strata: s.StrataMeanMs, PeerVal: s.RgMeanMs, Value: s.RgMeanMs / s.StrataMeanMs, StrataRun: -1, PeerRun: -1},
			Ratio{Suite: ripgrepSuiteName, Dataset: ds, Figure: name + " success@5 (strata / rg, goal > 1)", Peer: "ripgrep",
				Strata: s.StrataS5, PeerVal: s.RgS5, Value: ratioOrInf(s.StrataS5, s.RgS5), StrataRun: -1, PeerRun: -1,
				Note: fmt.Sprintf("E_stale strata %d of %d hits, rg %d of %d", s.StrataEStale, s.StrataHits, s.RgEStale, s.RgHits)})
	}
	res.Ripgrep = append(res.Ripgrep, run)
	for _, s := range run.Sets {
		if s.RgEStale > 0 || s.StrataEStale > 0 {
			return fmt.Errorf("bench: ripgrep: %s: E_stale = %d (strata) + %d (rg), want 0", s.Set, s.StrataEStale, s.RgEStale)
		}
	}
	return nil
}

// strataHitStale reports whether h's source span, read from disk now,
// no longer hashes to its VersionHash (or cannot be read).
func strataHitStale(h contract.Envelope) bool {
	src, err := engine.ReadSpan(h.SourceURI)
	return err != nil || engine.VersionHash(src) != h.VersionHash
}

type ripgrepAcc struct {
	rg, strata                 []time.Duration
	rgS5, strataS5             int
	rgHits, rgStale, rgNoMatch int
	strataHits, strataStale    int
}

// ratioOrInf is a/b, or a large finite stand-in (1e9) when b is 0 and a
// is not (JSON has no infinity).
func ratioOrInf(a, b float64) float64 {
	if b == 0 {
		if a == 0 {
			return 1
		}
		return 1e9
	}
	return a / b
}

// runRg runs one rg query over root and returns its matches in file
// order (path, then line), the wall time, and how many printed lines no
// longer read the same in the file.
func runRg(ctx context.Context, root string, q RipgrepQuery) ([]code.HitSpan, time.Duration, int, error) {
	args := append([]string{"--no-heading", "--line-number", "--with-filename", "--no-messages", "--color", "never"}, q.RgFlags...)
	args = append(args, "--", q.Pattern, ".")
	cmd := exec.CommandContext(ctx, "rg", args...)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout = &out
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	if err != nil {
		// Exit status 1 is "no match".
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			return nil, d, 0, fmt.Errorf("bench: ripgrep: rg %s: %w", strings.Join(args, " "), err)
		}
	}
	type m struct {
		file string
		line int
		text string
	}
	var ms []m
	for _, l := range strings.Split(out.String(), "\n") {
		if l == "" {
			continue
		}
		f, rest, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		ln, text, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(ln)
		if err != nil {
			continue
		}
		ms = append(ms, m{file: filepath.ToSlash(strings.TrimPrefix(f, "./")), line: n, text: text})
	}
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].file != ms[j].file {
			return ms[i].file < ms[j].file
		}
		return ms[i].line < ms[j].line
	})
	hs := make([]code.HitSpan, len(ms))
	stale := 0
	lines := map[string][]string{}
	for i, x := range ms {
		hs[i] = code.HitSpan{File: x.file, From: x.line, To: x.line}
		if i >= 5 { // the staleness check reads the files of the first 5
			continue
		}
		ls, ok := lines[x.file]
		if !ok {
			b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(x.file)))
			if err == nil {
				ls = strings.Split(string(b), "\n")
			}
			lines[x.file] = ls
		}
		if x.line < 1 || x.line > len(ls) || strings.TrimSuffix(ls[x.line-1], "\r") != x.text {
			stale++
		}
	}
	return hs, d, stale, nil
}

func msQuantile(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q*float64(len(s)-1) + 0.5)
	return float64(s[i].Nanoseconds()) / 1e6
}

func msMean(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return float64(t.Nanoseconds()) / 1e6 / float64(len(ds))
}
