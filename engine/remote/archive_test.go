package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/internal/testenv/s3gw"
)

// TestArchiveOnObjectStore: a cold Parquet archive is published like a
// segment; a reader's cold-tier queries return the writer's hits, and the
// archive object, downloaded from the bucket, is read by DuckDB
// (tools/parquet-check) with every row.
func TestArchiveOnObjectStore(t *testing.T) {
	g := s3gw.Start(t)
	st := newStore(t, g)
	ctx := context.Background()
	d := newDBT(t)
	c := createCol(t, d.db, "docs")
	upsert(t, c, 0, 120, 0)
	if _, err := c.Archive(ctx, engine.ArchiveOptions{}); err != nil {
		t.Fatal(err)
	}
	upsert(t, c, 120, 160, 0) // and a warm segment
	w, err := OpenWriter(ctx, st, d.db, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := w.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := readManifest(ctx, st, v)
	if err != nil {
		t.Fatal(err)
	}
	var arch Object
	for _, o := range m.Collections[0].Objects {
		if strings.HasSuffix(o.File, ".parquet") {
			arch = o
		}
	}
	if arch.Key == "" || len(m.Collections[0].State.Archives) != 1 {
		t.Fatalf("no archive published: %+v", m.Collections[0].State)
	}
	r := openReader(t, st)
	view := r.Acquire()
	rc := mustCol(t, view.DB, "docs")
	for _, q := range queries() {
		q.Tiers = []contract.Tier{contract.Hot, contract.Warm, contract.Cold}
		want, err := c.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rc.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		ids := func(res contract.Result) (s []string) {
			for _, h := range res.Hits {
				s = append(s, h.DocID)
			}
			return s
		}
		if !reflect.DeepEqual(ids(got), ids(want)) || len(got.Hits) == 0 {
			t.Fatalf("cold-tier query %+v: reader %v, writer %v", q.Mode, ids(got), ids(want))
		}
	}
	view.Release()

	node, err := exec.LookPath("node")
	tool, _ := filepath.Abs(filepath.Join("..", "..", "tools", "parquet-check"))
	if _, serr := os.Stat(filepath.Join(tool, "node_modules", "@duckdb", "node-api")); err != nil || serr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but node or %s/node_modules is missing", tool)
		}
		t.Skip("node or tools/parquet-check/node_modules missing: DuckDB check not run")
	}
	b, _, err := st.Get(ctx, arch.Key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), arch.File)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(tool, "check.mjs"), path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("DuckDB check of %s failed: %v\n%s", arch.Key, err, stderr.String())
	}
	var got struct {
		Rows          int    `json:"rows"`
		FormatVersion string `json:"format_version"`
	}
	if err := json.Unmarshal(out, &got); err != nil || got.Rows != 120 || got.FormatVersion != "1" {
		t.Fatalf("DuckDB read %+v (%v), want 120 rows of format 1", got, err)
	}
}
