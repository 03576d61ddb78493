package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier"
	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/internal/inspect"
)

// inspectStore writes a store with the engine: one collection, two flushed
// warm segments (HNSW + BM25 sections), an upsert and a delete after them
// in the WAL. It returns the data directory.
func inspectStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	col, err := db.CreateCollection("c", engine.CollectionOptions{Dim: 8, Metric: "cosine"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	doc := func(i int) contract.Document {
		v := make([]float32, 8)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		return contract.Document{ID: fmt.Sprintf("d%03d", i), Content: fmt.Sprintf("alpha beta %d gamma", i),
			Vector: v, Trust: contract.Authoritative}
	}
	for round := 0; round < 2; round++ {
		var docs []contract.Document
		for i := 0; i < 40; i++ {
			docs = append(docs, doc(round*40+i))
		}
		if _, err := col.Upsert(ctx, docs); err != nil {
			t.Fatal(err)
		}
		if err := col.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := col.Upsert(ctx, []contract.Document{doc(3)}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCLIInspect(t *testing.T) {
	dir := inspectStore(t)
	infos := inspectJSONOut(t, dir)
	formats := map[string]int{}
	var seg string
	for _, in := range infos {
		formats[in.Format]++
		if !in.OK() {
			t.Errorf("%s: problems %v", in.Path, in.Problems)
		}
		if in.Format == "STRATSEG" {
			seg = in.Path
			if len(in.Children) != 2 || in.Children[0].Format != "STRHNSW" || in.Children[1].Format != "STRBM25" {
				t.Errorf("%s children %+v", in.Path, in.Children)
			}
		}
	}
	want := map[string]int{"STRATSEG": 2, "MANIFEST": 1, "CURRENT": 1, "LOCK": 1, "wal": 1, "collection.json": 1, "store": 1}
	for f, n := range want {
		if formats[f] != n {
			t.Errorf("%d %s files, want %d (all: %v)", formats[f], f, n, formats)
		}
	}
	if formats[formatUnknown] != 0 {
		t.Errorf("unrecognised files: %v", formats)
	}

	// The human form names the sections and ends with the summary.
	out, err := capture(t, func() error { return runInspect([]string{seg}) })
	if err != nil || !strings.Contains(out, "section hnsw") || !strings.Contains(out, "1 files: 1 OK") {
		t.Fatalf("text (%v):\n%s", err, out)
	}

	// One flipped byte in a segment's doc store: exit status 1 (an
	// error), the damaged section named at its offset; the segment and
	// the store (which would not open) have problems.
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	sin, err := tier.Inspect(b)
	if err != nil {
		t.Fatal(err)
	}
	var docs inspect.Section
	for _, s := range sin.Sections {
		if s.Name == "docs" {
			docs = s
		}
	}
	if docs.Length == 0 {
		t.Fatalf("no docs section in %+v", sin.Sections)
	}
	b[docs.Offset+docs.Length/2] ^= 0x40
	if err := os.WriteFile(seg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = capture(t, func() error { return runInspect([]string{dir}) })
	if err == nil || !strings.Contains(err.Error(), "2 of") {
		t.Fatalf("corrupt segment: err %v\n%s", err, out)
	}
	if !strings.Contains(out, "MISMATCH") || !strings.Contains(out, fmt.Sprintf("at byte %d: section docs CRC32C mismatch", docs.Offset)) {
		t.Fatalf("corrupt segment output:\n%s", out)
	}
}

func TestCLIInspectErrors(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "notes.txt")
	os.WriteFile(other, []byte("hello"), 0o644)
	if _, err := capture(t, func() error { return runInspect([]string{other}) }); err == nil || !strings.Contains(err.Error(), "not a Strata file") {
		t.Fatalf("plain file: %v", err)
	}
	// Under a directory it is skipped, not a failure.
	out, err := capture(t, func() error { return runInspect([]string{dir}) })
	if err != nil || !strings.Contains(out, "1 skipped") {
		t.Fatalf("dir: %v\n%s", err, out)
	}
	if _, err := capture(t, func() error { return runInspect(nil) }); err == nil {
		t.Fatal("no arguments accepted")
	}
	// A truncated HNSW file named explicitly: inspected, and it fails.
	trunc := filepath.Join(dir, "x.hnsw")
	os.WriteFile(trunc, []byte("STRHNSW\x00\x01\x00\x00\x00"), 0o644)
	out, err = capture(t, func() error { return runInspect([]string{trunc}) })
	if err == nil || !strings.Contains(out, "truncated") {
		t.Fatalf("truncated: %v\n%s", err, out)
	}
}

// TestCLIInspectExitStatus runs `searchd inspect DIR` as a process (this
// test binary re-executed into main): exit status 0 on a sound store, 1
// after one segment byte is flipped.
func TestCLIInspectExitStatus(t *testing.T) {
	if dir := os.Getenv("STRATA_TEST_INSPECT_DIR"); dir != "" {
		os.Args = []string{"searchd", "inspect", dir}
		main()
		os.Exit(0)
	}
	dir := inspectStore(t)
	run := func() int {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCLIInspectExitStatus$")
		cmd.Env = append(os.Environ(), "STRATA_TEST_INSPECT_DIR="+dir)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return 0
	}
	if code := run(); code != 0 {
		t.Fatalf("sound store: exit status %d", code)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "collections", "c", "store", "seg-*.sst"))
	if len(segs) == 0 {
		t.Fatal("no segment")
	}
	b, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	os.WriteFile(segs[0], b, 0o644)
	if code := run(); code != 1 {
		t.Fatalf("corrupt segment: exit status %d, want 1", code)
	}
}

// FuzzInspectJSON: the collection-config / ingest-manifest describer never
// panics, and a format_version it reports is the one in the document.
func FuzzInspectJSON(f *testing.F) {
	f.Add([]byte(`{"format_version":1,"name":"code","options":{}}`))
	f.Add([]byte(`{"format_version":1,"files":{"a":{},"b":{}}}`))
	f.Add([]byte(`{"format_version":`))
	f.Add([]byte(`{} trailing`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in := inspectJSON("x", b)
		if v, ok := in.Field("format_version"); ok {
			var doc struct {
				FormatVersion int `json:"format_version"`
			}
			if err := json.Unmarshal(b, &doc); err == nil && doc.FormatVersion != v {
				t.Fatalf("format_version %v, document says %d", v, doc.FormatVersion)
			}
		}
	})
}

// TestCLIInspectStoreDamage: inspect fails (and names the file) exactly
// when opening the store would be refused, also for damage no single
// file's inspector sees: a segment whose magic is broken, CURRENT naming
// a missing manifest, an emptied or deleted WAL segment of a closed
// store. An undamaged store passes, and so does one whose only damage
// recovery repairs without loss (garbage after the last synced WAL
// record).
func TestCLIInspectStoreDamage(t *testing.T) {
	store := func(dir string) string { return filepath.Join(dir, "collections", "c", "store") }
	newestWAL := func(t *testing.T, dir string) string {
		ws, _ := filepath.Glob(filepath.Join(store(dir), "wal", "wal-*.log"))
		if len(ws) == 0 {
			t.Fatal("no WAL segment")
		}
		return ws[len(ws)-1]
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string) string // returns the file the report must name
		fails  bool
	}{
		{"sound", func(t *testing.T, dir string) string { return "" }, false},
		{"segment magic", func(t *testing.T, dir string) string {
			segs, _ := filepath.Glob(filepath.Join(store(dir), "seg-*.sst"))
			b, _ := os.ReadFile(segs[0])
			b[0] ^= 0xff
			os.WriteFile(segs[0], b, 0o644)
			return segs[0]
		}, true},
		{"CURRENT names a missing manifest", func(t *testing.T, dir string) string {
			p := filepath.Join(store(dir), "CURRENT")
			os.WriteFile(p, []byte("MANIFEST-000009\n"), 0o644)
			return p
		}, true},
		{"emptied WAL", func(t *testing.T, dir string) string {
			p := newestWAL(t, dir)
			os.Truncate(p, 0)
			return p
		}, true},
		{"deleted WAL", func(t *testing.T, dir string) string {
			p := newestWAL(t, dir)
			os.Remove(p)
			return filepath.Base(p)
		}, true},
		{"garbage after the last WAL record", func(t *testing.T, dir string) string {
			p := newestWAL(t, dir)
			f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			f.Write([]byte("garbage after the synced tail"))
			f.Close()
			return ""
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := inspectStore(t)
			file := tc.damage(t, dir)
			out, err := capture(t, func() error { return runInspect([]string{dir}) })
			st, oerr := tier.Open(tier.Options{Dir: store(dir), Dim: 8, Metric: tier.Cosine, Logger: slog.New(slog.DiscardHandler)})
			if oerr == nil {
				st.Close()
			}
			if (oerr != nil) != tc.fails {
				t.Fatalf("setup: Open error %v, want failure %v", oerr, tc.fails)
			}
			if !tc.fails {
				if err != nil {
					t.Fatalf("inspect failed on a store that opens: %v\n%s", err, out)
				}
				return
			}
			if err == nil {
				t.Fatalf("inspect exited 0 on a store Open refuses (%v)\n%s", oerr, out)
			}
			if !strings.Contains(out, "the store would not open") || !strings.Contains(out, file) {
				t.Fatalf("report does not name %s:\n%s", file, out)
			}
		})
	}
}

// TestCLIInspectManifestJournal: an ingest manifest's snapshot and
// journal are recognised and described; a byte flipped in a journal
// record that intact records follow is a problem at that record.
func TestCLIInspectManifestJournal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "code.manifest.json")
	m, err := ingest.LoadManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		m.Files[fmt.Sprintf("/src/f%d.go", i)] = &ingest.FileEntry{Size: int64(i), Hash: "h", Chunks: []string{"L1-L2"}}
		if err := m.Save(path); err != nil {
			t.Fatal(err)
		}
	}
	infos := inspectJSONOut(t, dir)
	var journal *inspect.Info
	formats := map[string]int{}
	for _, in := range infos {
		formats[in.Format]++
		if !in.OK() {
			t.Errorf("%s: problems %v", in.Path, in.Problems)
		}
		if in.Format == "ingest-manifest-journal" {
			journal = in
		}
	}
	if formats["ingest-manifest"] != 1 || journal == nil || len(journal.Records) != 3 {
		t.Fatalf("formats %v, journal %+v", formats, journal)
	}
	jp := path + ".journal"
	b, err := os.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	second := journal.Records[1].Offset
	b[second+30] ^= 0x20
	if err := os.WriteFile(jp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := capture(t, func() error { return runInspect([]string{jp}) })
	if err == nil || !strings.Contains(out, fmt.Sprintf("at byte %d", second)) {
		t.Fatalf("damaged journal: err %v\n%s", err, out)
	}
	if _, err := ingest.LoadManifest(path); err == nil || !strings.Contains(err.Error(), jp) {
		t.Fatalf("loading the damaged manifest: %v", err)
	}
}

// inspectJSONOut runs `searchd inspect --json dir` and decodes its output.
func inspectJSONOut(t *testing.T, dir string) []*inspect.Info {
	t.Helper()
	out, err := capture(t, func() error { return runInspect([]string{"--json", dir}) })
	if err != nil {
		t.Fatalf("inspect: %v\n%s", err, out)
	}
	var infos []*inspect.Info
	if err := json.Unmarshal([]byte(out), &infos); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	return infos
}
