package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratasearch/strata/bench/lexical"
)

// writeTree writes a small source tree and returns its root and the total
// bytes of the files the ingest walk keeps.
func writeTree(t *testing.T) (string, int, int64) {
	t.Helper()
	root := t.TempDir()
	var total int64
	files := map[string]string{}
	for i := 0; i < 6; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "package p%d\n\n", i%2)
		for j := 0; j < 5; j++ {
			fmt.Fprintf(&b, "// F%d_%d returns %d.\nfunc F%d_%d() int { return %d }\n\n", i, j, i*j, i, j, i*j)
		}
		files[fmt.Sprintf("p%d/f%d.go", i%2, i)] = b.String()
	}
	files["README.md"] = "# Title\n\nSome prose about the tree.\n\n## Section\n\nMore text here.\n"
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		total += int64(len(body))
	}
	return root, len(files), total
}

// TestIngestAndStalenessSuites runs the ingest and staleness suites on a
// tiny tree and checks results.json against the reference counts (files
// and bytes written), the α_storage arithmetic, and E_stale == 0.
func TestIngestAndStalenessSuites(t *testing.T) {
	root, nfiles, nbytes := writeTree(t)
	out := t.TempDir()
	sp := StalenessParams{Docs: 16, Writers: 2, Readers: 2, Duration: time.Second, Edits: 8}
	if testing.Short() {
		sp.Duration, sp.Edits = 300*time.Millisecond, 3
	}
	cfg := Config{OutDir: out, WorkDir: t.TempDir(), IngestRoot: root, Staleness: &sp, Command: "TestIngestAndStalenessSuites"}
	if testing.Verbose() {
		cfg.Log = os.Stderr
	}
	if _, err := Run(context.Background(), cfg, []string{"ingest", "staleness"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "ingest", "staleness", "suite_seconds", "machine"} {
		if _, ok := m[k]; !ok {
			t.Errorf("results.json lacks %q", k)
		}
	}
	var res Results
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		t.Fatal(err)
	}
	if len(res.Ingest) != 1 {
		t.Fatalf("%d ingest runs", len(res.Ingest))
	}
	in := res.Ingest[0]
	if in.Files != nfiles || in.RawBytes != nbytes {
		t.Errorf("ingest: %d files, %d bytes; wrote %d files, %d bytes", in.Files, in.RawBytes, nfiles, nbytes)
	}
	// 6 Go files × 5 funcs (an undocumented package clause is no chunk) + a
	// Markdown file ≥ 1 chunk.
	if in.Chunks < 6*5+1 {
		t.Errorf("ingest: %d chunks, want ≥ %d", in.Chunks, 6*5+1)
	}
	if in.WallS <= 0 || in.FilesS <= 0 || in.MBs <= 0 || math.Abs(in.FilesS-float64(in.Files)/in.WallS) > 1e-9*in.FilesS {
		t.Errorf("ingest rates %+v", in)
	}
	tiers := map[string]TierSize{}
	for _, ts := range in.Tiers {
		tiers[ts.Tier] = ts
	}
	for _, name := range []string{"hot", "warm"} {
		ts := tiers[name]
		if ts.Bytes <= 0 || math.Abs(ts.Alpha-float64(ts.Bytes)/float64(nbytes)) > 1e-12 || ts.Method == "" {
			t.Errorf("%s tier %+v", name, ts)
		}
	}
	if c, ok := tiers["cold"]; !ok || c.Bytes <= 0 || math.Abs(c.Alpha-float64(c.Bytes)/float64(nbytes)) > 1e-12 || c.Skipped != "" {
		t.Errorf("cold tier %+v", c)
	}
	if len(res.Staleness) != 2 {
		t.Fatalf("%d staleness runs", len(res.Staleness))
	}
	for _, s := range res.Staleness {
		if s.EStale != 0 {
			t.Errorf("%s: E_stale %d", s.Mode, s.EStale)
		}
		if s.Writes == 0 || s.Queries == 0 || s.Hits == 0 {
			t.Errorf("%s: nothing measured: %+v", s.Mode, s)
		}
	}
	api, watch := res.Staleness[0], res.Staleness[1]
	if api.Mode != "api" || watch.Mode != "watch" || watch.Writes != int64(sp.Edits) || watch.LagMaxMs <= 0 {
		t.Errorf("runs %+v %+v", api, watch)
	}
	// Every api query returns all Docs documents unless counted missing.
	if api.Missing == 0 && api.Hits != api.Queries*int64(api.Docs) {
		t.Errorf("api: %d hits over %d queries of %d docs", api.Hits, api.Queries, api.Docs)
	}
	rep, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"## Ingest", "α", "## Staleness", "E_stale", "Suite wall times"} {
		if !strings.Contains(string(rep), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

func TestStaleDocRoundTrip(t *testing.T) {
	for _, c := range []struct {
		i int
		v int64
	}{{0, 0}, {7, 123456789}, {63, 1}} {
		i, v, err := parseStaleDoc(staleDoc(c.i, c.v))
		if err != nil || i != c.i || v != c.v {
			t.Errorf("parse(staleDoc(%d, %d)) = %d, %d, %v", c.i, c.v, i, v, err)
		}
	}
	for _, bad := range []string{"", "stalecheck", "stalecheck docX ver1", "stalecheck doc1 verY", "x y z"} {
		if _, _, err := parseStaleDoc(bad); err == nil {
			t.Errorf("parse(%q): no error", bad)
		}
	}
}

func TestCpuinfoMismatch(t *testing.T) {
	x86 := "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse avx512f\n"
	arm := "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\n"
	for _, c := range []struct {
		info, arch string
		want       bool
	}{
		{x86, "arm64", true}, {x86, "amd64", false}, {arm, "arm64", false}, {arm, "amd64", true}, {"", "arm64", false},
	} {
		if got, why := cpuinfoMismatch(c.info, c.arch); got != c.want || got != (why != "") {
			t.Errorf("cpuinfoMismatch(%.20q, %s) = %v %q, want %v", c.info, c.arch, got, why, c.want)
		}
	}
	t.Setenv("STRATA_BENCH_EMULATED", "1")
	if emu, _ := DetectEmulation(); !emu {
		t.Error("STRATA_BENCH_EMULATED=1 not honoured")
	}
	t.Setenv("STRATA_BENCH_EMULATED", "0")
	if emu, _ := DetectEmulation(); emu {
		t.Error("STRATA_BENCH_EMULATED=0 not honoured")
	}
}

type failingSuite struct{}

func (failingSuite) Name() string { return "test-failing" }
func (failingSuite) Run(ctx context.Context, cfg Config, res *Results) error {
	res.Notes = append(res.Notes, "partial")
	return errors.New("boom")
}

func init() { Register(failingSuite{}) }

// TestSuiteFailureWritesResults: a failing suite (e.g. E_stale > 0) still
// leaves results.json and report.md with the error, and Run returns it.
func TestSuiteFailureWritesResults(t *testing.T) {
	out := t.TempDir()
	_, err := Run(context.Background(), Config{OutDir: out, WorkDir: t.TempDir()}, []string{"test-failing"})
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err %v", err)
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res Results
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "boom") || len(res.Notes) == 0 {
		t.Errorf("results %+v", res)
	}
	rep, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(rep), "FAILED") {
		t.Error("report.md does not say the run failed")
	}
	if err := (Config{OutDir: out, NoPeers: true}).Validate(); err == nil || !strings.Contains(err.Error(), "NoPeers") {
		t.Errorf("NoPeers without Emulated: %v", err)
	}
	if err := (Config{OutDir: out, ANNParts: []string{"ivf", "graph"}}).Validate(); err == nil || !strings.Contains(err.Error(), `unknown part "graph"`) {
		t.Errorf("unknown ANN part: %v", err)
	}
	if err := (Config{OutDir: out, ANNParts: []string{"ivf", "flat"}}).Validate(); err != nil {
		t.Errorf("ANN parts ivf, flat: %v", err)
	}
}

const loadtestSample = `searchd loadtest: in-process server on 127.0.0.1:41127, store /tmp/x
loaded 300 docs (dim 32) in 90ms (3346 docs/s)
baseline: goroutines=7 heap=2.9 MiB
op          count     ops/s       p50       p99       max  errors
search       1445       715     340µs   32.44ms    88.1ms       0
upsert          0         -         -         -         -       2
total        1445       715     410µs   55.15ms      1.5s       2
after: goroutines=7 (baseline 7, Δ+0: OK) heap=3.6 MiB (baseline 2.9 MiB, limit 2×+16 MiB: OK)
`

func TestParseLoadtest(t *testing.T) {
	ops, err := ParseLoadtest(loadtestSample)
	if err != nil {
		t.Fatal(err)
	}
	want := []ServerOp{
		{Op: "search", Count: 1445, OpsS: 715, P50Ms: 0.34, P99Ms: 32.44, MaxMs: 88.1},
		{Op: "upsert", Errors: 2},
		{Op: "total", Count: 1445, OpsS: 715, P50Ms: 0.41, P99Ms: 55.15, MaxMs: 1500, Errors: 2},
	}
	if len(ops) != len(want) {
		t.Fatalf("ops %+v", ops)
	}
	for i := range want {
		g, w := ops[i], want[i]
		if g.Op != w.Op || g.Count != w.Count || g.Errors != w.Errors || !near(g.OpsS, w.OpsS) || !near(g.P50Ms, w.P50Ms) || !near(g.P99Ms, w.P99Ms) || !near(g.MaxMs, w.MaxMs) {
			t.Errorf("op %d: %+v, want %+v", i, g, w)
		}
	}
	if _, err := ParseLoadtest("no table here\n"); err == nil {
		t.Error("no error without a table")
	}
	if _, err := ParseLoadtest("search x 1 1ms 1ms 1ms 0\ntotal 1 1 1ms 1ms 1ms 0\n"); err == nil {
		t.Error("no error on a bad count")
	}
}

// TestServerSuite runs `searchd loadtest` for one second (not in -short:
// it builds cmd/searchd). Searches only: loadtest's upsert batches draw
// their 1–4 document ids with replacement, so a batch can repeat an id and
// be rejected (a 400, counted as an error) — with 200 documents that
// would make this test flaky.
func TestServerSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs searchd; covered by the full run")
	}
	out := t.TempDir()
	cfg := Config{OutDir: out, WorkDir: t.TempDir(), Server: &ServerParams{Duration: time.Second, Clients: 2, Docs: 200, WriteRatio: 0}}
	res, err := Run(context.Background(), cfg, []string{"server"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Server) != 1 {
		t.Fatalf("%d server runs", len(res.Server))
	}
	var total *ServerOp
	for i, o := range res.Server[0].Ops {
		if o.Op == "total" {
			total = &res.Server[0].Ops[i]
		}
	}
	if total == nil || total.Count == 0 || total.Errors != 0 || total.P50Ms <= 0 || total.P99Ms < total.P50Ms || total.OpsS <= 0 {
		t.Errorf("total %+v", total)
	}
	rep, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(rep), "## Server") {
		t.Error("report.md lacks the server section")
	}
}

// TestLexicalPlots draws the lexical bar charts from a hand-made result.
func TestLexicalPlots(t *testing.T) {
	r := &lexical.Result{
		Corpus: &lexical.CorpusInfo{Files: 10},
		Speed: []lexical.SpeedRow{
			{Engine: "strata", Version: "dev", OR: lexical.OpResult{QPSCPU: 40000}, AND: lexical.OpResult{QPSCPU: 60000}, Phrase: lexical.OpResult{QPSCPU: 350}},
			{Engine: lexical.PeerBleve, Version: "v2.6.3", OR: lexical.OpResult{QPSCPU: 8000}, AND: lexical.OpResult{QPSCPU: 20000}, Phrase: lexical.OpResult{QPSCPU: 50}},
		},
		Quality: []lexical.QualityRow{
			{Collection: "cranfield", Engine: "strata", Config: "oracle", NDCG10: 0.36},
			{Collection: "vaswani", Engine: lexical.PeerBleve, Config: "english", NDCG10: 0.28},
		},
	}
	dir := t.TempDir()
	files, err := writeLexicalPlots(dir, r, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("files %v", files)
	}
	for _, f := range files {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestCheckKernel: the kernels suite's level-vs-generic comparison accepts
// float rounding differences and rejects wrong outputs.
func TestCheckKernel(t *testing.T) {
	f := kernelCase{name: "Dot", shape: "d=4", relTol: 1e-3, scale: 1}
	if err := checkKernel(f, "avx2", []float64{100.05, -2}, []float64{100, -2.0005}); err != nil {
		t.Errorf("rounding rejected: %v", err)
	}
	if err := checkKernel(f, "avx2", []float64{101, -2}, []float64{100, -2}); err == nil {
		t.Error("wrong output accepted")
	}
	if err := checkKernel(f, "avx2", []float64{1}, []float64{1, 2}); err == nil {
		t.Error("length mismatch accepted")
	}
	if err := checkKernel(f, "avx2", []float64{math.NaN()}, []float64{1}); err == nil {
		t.Error("NaN accepted")
	}
	u := kernelCase{name: "DotU8", shape: "d=4"}
	if err := checkKernel(u, "avx512", []float64{7}, []float64{8}); err == nil {
		t.Error("integer kernel off by one accepted")
	}
}
