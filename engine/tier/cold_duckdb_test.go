package tier

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stratasearch/strata/vfs"
)

// TestColdArchiveDuckDB reads a cold archive with an independent Parquet
// reader, DuckDB through npm @duckdb/node-api (tools/parquet-check), and
// checks the row count, every id and content in row order, the 18-byte
// code column and the format-version key-value entry. It skips when node
// or the tool's node_modules are absent, except under CI=true, where
// missing node_modules (scripts/parquet-check-ci.sh installs them) or a
// failing check is an error.
func TestColdArchiveDuckDB(t *testing.T) {
	ci := os.Getenv("CI") == "true"
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	tool, _ := filepath.Abs(filepath.Join("..", "..", "tools", "parquet-check"))
	if _, err := os.Stat(filepath.Join(tool, "node_modules", "@duckdb", "node-api")); err != nil {
		if ci {
			t.Fatalf("CI=true but %s has no node_modules: run scripts/parquet-check-ci.sh", tool)
		}
		t.Skipf("%s/node_modules missing (npm ci there to run this test)", tool)
	}
	o := testOptions(vfs.Default)
	o.Dir = t.TempDir()
	o.Dim = 16
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	docs := coldDocs(300, 31, o.Dim)
	docs[7].Content = "quotes ' \" and\nnewlines\t, unicode ✓ 日本語, a NUL-free \\x00 string"
	docs[8].Content = ""
	applyDocs(t, s, docs)
	var del Batch
	del.Delete("doc-0010")
	if _, err := s.Apply(&del); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Archive(context.Background(), ArchiveOptions{}); err != nil {
		t.Fatal(err)
	}
	as := s.Archives()
	if len(as) != 1 {
		t.Fatalf("archives %v", as)
	}
	path := filepath.Join(o.Dir, as[0].File)
	cmd := exec.Command(node, filepath.Join(tool, "check.mjs"), path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("DuckDB check failed: %v\n%s", err, stderr.String())
	}
	var got struct {
		Rows int `json:"rows"`
		Docs []struct {
			ID      string `json:"id"`
			Content string `json:"content"`
		} `json:"docs"`
		Codes         int    `json:"codes"`
		CodeLengths   []int  `json:"code_lengths"`
		FormatVersion string `json:"format_version"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("parse %q: %v", out, err)
	}
	// The archive's rows: the live documents in flush (version) order.
	var want []Document
	vecs := 0
	for _, d := range docs {
		if d.ID != "doc-0010" {
			want = append(want, d)
			if d.Vector != nil {
				vecs++
			}
		}
	}
	if got.Rows != len(want) || len(got.Docs) != len(want) {
		t.Fatalf("DuckDB counts %d rows (%d read), want %d", got.Rows, len(got.Docs), len(want))
	}
	for i, d := range want {
		if got.Docs[i].ID != d.ID || got.Docs[i].Content != d.Content {
			t.Fatalf("row %d: DuckDB read (%q, %q), want (%q, %q)", i, got.Docs[i].ID, got.Docs[i].Content, d.ID, d.Content)
		}
	}
	if got.Codes != vecs || fmt.Sprint(got.CodeLengths) != "[18]" || got.FormatVersion != "1" {
		t.Fatalf("codes %d (want %d), lengths %v, format version %q", got.Codes, vecs, got.CodeLengths, got.FormatVersion)
	}
	t.Logf("DuckDB read %d rows, %d codes of 18 bytes, from %s", got.Rows, got.Codes, path)
}
