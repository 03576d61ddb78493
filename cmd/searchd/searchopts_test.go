package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratasearch/strata/ingest"
)

// TestCLIHelpIsNotAnError runs `searchd search -h` as a process (this test
// binary re-executed into main): the usage is printed, the exit status is
// 0, and no "flag: help requested" error follows it.
func TestCLIHelpIsNotAnError(t *testing.T) {
	if os.Getenv("STRATA_TEST_HELP") != "" {
		os.Args = []string{"searchd", "search", "-h"}
		main()
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCLIHelpIsNotAnError$")
	cmd.Env = append(os.Environ(), "STRATA_TEST_HELP=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("exit status %d:\n%s", ee.ExitCode(), out)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "usage: searchd search") || strings.Contains(string(out), "help requested") {
		t.Errorf("output:\n%s", out)
	}
}

// TestCLISearchJSONTimingsAndSyntax: search --json carries the store-open
// and search times; a quoted sentence is matched as text by default and
// as a phrase with --syntax operators.
func TestCLISearchJSONTimingsAndSyntax(t *testing.T) {
	root, data := t.TempDir(), filepath.Join(t.TempDir(), "d")
	src := "package p\n\n// Frobnicate turns widgets blue.\nfunc Frobnicate() {}\n"
	if err := os.WriteFile(filepath.Join(root, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := capture(t, func() error { return runIndex([]string{root, "--data", data}) }); err != nil {
		t.Fatal(err)
	}
	hits := func(args ...string) int {
		t.Helper()
		out, err := capture(t, func() error { return runSearch(append(args, "--data", data, "--json")) })
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Hits    []json.RawMessage `json:"hits"`
			Timings *struct {
				OpenMS   *float64 `json:"open_ms"`
				SearchMS *float64 `json:"search_ms"`
			} `json:"timings"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("json: %v\n%s", err, out)
		}
		if r.Timings == nil || r.Timings.OpenMS == nil || r.Timings.SearchMS == nil || *r.Timings.SearchMS < 0 {
			t.Fatalf("no timings in:\n%s", out)
		}
		return len(r.Hits)
	}
	if n := hits(`"blue widgets turns"`); n != 1 {
		t.Errorf("quoted sentence as text: %d hits, want 1", n)
	}
	// The phrase operator is lexical: the default hybrid search would add
	// the dense neighbour.
	if n := hits(`"blue widgets turns"`, "--syntax", "operators", "--mode", "lexical"); n != 0 {
		t.Errorf("quoted sentence as a phrase: %d hits, want 0", n)
	}
}

// TestIndexSummaryRate: a slow run prints its byte rate in KB/s or B/s,
// not "0.0 MB/s".
func TestIndexSummaryRate(t *testing.T) {
	var b strings.Builder
	printIndexSummary(&b, ingest.Stats{Files: 1, Read: 1, Indexed: 1, Bytes: 84 << 20, Elapsed: 161 * time.Minute}, 0, 0, 0)
	if strings.Contains(b.String(), "0.0 MB/s") || !strings.Contains(b.String(), "9.1 KB/s") {
		t.Errorf("summary:\n%s", b.String())
	}
	for _, c := range []struct {
		n    int64
		d    time.Duration
		want string
	}{{2e6, time.Second, "2.0 MB/s"}, {1500, time.Second, "1.5 KB/s"}, {10, time.Second, "10 B/s"}, {0, 0, "0 B/s"}} {
		if got := rate(c.n, c.d); got != c.want {
			t.Errorf("rate(%d, %v) = %q, want %q", c.n, c.d, got, c.want)
		}
	}
}

// TestCLIIndexSeveralPaths: index takes several PATHs into one collection;
// the summary counts the files of all of them and each is searchable.
func TestCLIIndexSeveralPaths(t *testing.T) {
	a, b, data := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "d")
	os.WriteFile(filepath.Join(a, "a.go"), []byte("package a\n\n// Alpha wombat.\nfunc Alpha() {}\n"), 0o644)
	os.WriteFile(filepath.Join(b, "b.go"), []byte("package b\n\n// Beta quokka.\nfunc Beta() {}\n"), 0o644)
	out, err := capture(t, func() error { return runIndex([]string{a, b, "--data", data}) })
	if err != nil || !strings.Contains(out, "2 indexed") {
		t.Fatalf("index (%v):\n%s", err, out)
	}
	for _, q := range []string{"wombat", "quokka"} {
		out, err := capture(t, func() error { return runSearch([]string{q, "--data", data}) })
		if err != nil || strings.Contains(out, "no hits") {
			t.Errorf("search %q (%v):\n%s", q, err, out)
		}
	}
	if _, err := capture(t, func() error { return runIndex([]string{a, b, "--data", data, "--watch"}) }); err == nil {
		t.Error("--watch with two PATHs accepted")
	}
}

// TestCLIExpand: index learns the vocabulary bridge; search --expand adds
// its terms (shown by --explain and in the JSON explain), plain search
// does not; a damaged bridge file is reported with its path and offset.
func TestCLIExpand(t *testing.T) {
	root, data := t.TempDir(), filepath.Join(t.TempDir(), "d")
	src := "package p\n"
	for i := range 6 {
		x := string(rune('A' + i))
		src += "\n// ToUpper" + x + " maps letters to capital form.\nfunc ToUpper" + x + "() {}\n"
		src += "\n// Filler" + x + " counts apples and pears.\nfunc Filler" + x + "() {}\n"
	}
	if err := os.WriteFile(filepath.Join(root, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := capture(t, func() error { return runIndex([]string{root, "--data", data}) })
	if err != nil || !strings.Contains(out, "bridge:") {
		t.Fatalf("index (%v):\n%s", err, out)
	}
	out, err = capture(t, func() error { return runSearch([]string{"capital", "--data", data, "--expand", "--explain"}) })
	if err != nil || !strings.Contains(out, "expansion (term^weight): ") || !strings.Contains(out, "upper^") {
		t.Fatalf("search --expand (%v):\n%s", err, out)
	}
	out, err = capture(t, func() error { return runSearch([]string{"capital", "--data", data, "--json"}) })
	if err != nil || strings.Contains(out, `"expansion"`) {
		t.Fatalf("search without --expand (%v):\n%s", err, out)
	}
	p := bridgePath(data, "code")
	b, _ := os.ReadFile(p)
	b[len(b)-1] ^= 0xff
	os.WriteFile(p, b, 0o644)
	_, err = capture(t, func() error { return runSearch([]string{"capital", "--data", data, "--expand"}) })
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "corrupt at byte offset 28") {
		t.Fatalf("damaged bridge: %v", err)
	}
}
