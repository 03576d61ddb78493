package datasets

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestOptionsValidate(t *testing.T) {
	var o Options
	o.EnsureDefaults()
	if err := o.Validate(); err != nil || o.K != 100 || o.GloVeQueries != 10000 || o.GloVeSeed != DefaultGloVeSeed || o.Workers < 1 {
		t.Fatalf("defaults %+v: %v", o, err)
	}
	bad := Options{K: -1, Workers: -2, GloVeQueries: -3}
	err := bad.Validate()
	for _, f := range []string{"Options.K", "Options.Workers", "Options.GloVeQueries"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("Validate does not report %s: %v", f, err)
		}
	}
}

func TestVerifyAndExtract(t *testing.T) {
	dir := t.TempDir()
	payload := []byte(`{"a":[1,2,3]}`)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, m := range []struct {
		name string
		body []byte
	}{{"package/README.md", []byte("hi")}, {"package/x.json", payload}} {
		tw.WriteHeader(&tar.Header{Name: m.name, Mode: 0o644, Size: int64(len(m.body))})
		tw.Write(m.body)
	}
	tw.Close()
	zw.Close()
	tgz := filepath.Join(dir, "p.tgz")
	os.WriteFile(tgz, buf.Bytes(), 0o644)
	sum := sha256.Sum256(buf.Bytes())
	if err := VerifySHA256(tgz, hex.EncodeToString(sum[:])); err != nil {
		t.Fatal(err)
	}
	if err := VerifySHA256(tgz, strings.Repeat("0", 64)); err == nil {
		t.Fatal("wrong checksum accepted")
	}
	out := filepath.Join(dir, "x.json")
	if err := ExtractTarGzMember(tgz, "package/x.json", out); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, payload) {
		t.Fatalf("extracted %q", got)
	}
	if err := ExtractTarGzMember(tgz, "package/missing", out+"2"); err == nil {
		t.Fatal("missing member accepted")
	}
	os.WriteFile(tgz, []byte("not gzip"), 0o644)
	if err := ExtractTarGzMember(tgz, "package/x.json", out); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("bad archive: %v", err)
	}
}

// TestPrepareGloVe runs the whole glove pipeline (convert, ground truth,
// cache, LoadANN) on a synthetic file in the real layout.
func TestPrepareGloVe(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	ws := synthWords(r, 400, 8)
	dir := t.TempDir()
	src := filepath.Join(dir, "in.json")
	os.WriteFile(src, synthGloVe(ws, true), 0o644)
	cache := filepath.Join(dir, "cache")
	opt := Options{K: 10, GloVeQueries: 25}
	logf := func(string, ...any) {}
	a, err := PrepareGloVe(context.Background(), src, "", cache, opt, logf)
	if err != nil {
		t.Fatal(err)
	}
	if a.Base.N != 375 || a.Queries.N != 25 || a.Base.D != 8 || a.GT.IDs.N != 25 || a.GT.IDs.D != 10 || a.Metric != InnerProduct {
		t.Fatalf("shapes base %d×%d queries %d gt %d×%d", a.Base.N, a.Base.D, a.Queries.N, a.GT.IDs.N, a.GT.IDs.D)
	}
	want, _ := naiveGT(a.Base, a.Queries, InnerProduct, 10)
	for q := range want {
		// Synthetic coordinates are not exactly representable: allow a
		// near-tie swap but require the same set.
		got := slices.Clone(a.GT.IDs.Row(q))
		w := slices.Clone(want[q])
		slices.Sort(got)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Fatalf("query %d: %v want %v", q, a.GT.IDs.Row(q), want[q])
		}
	}
	b, err := LoadANN(cache, GloVe6B100, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.GT.IDs.Data, a.GT.IDs.Data) || !slices.Equal(b.Base.Data, a.Base.Data) {
		t.Fatal("LoadANN differs from PrepareGloVe")
	}
	if _, err := LoadANN(cache, FashionMNIST, 10); err == nil {
		t.Fatal("unprepared data set loaded")
	}
	// A cache written by an older converter (queries in file order) is
	// refused, not silently benchmarked.
	gdir := filepath.Join(cache, GloVe6B100)
	st, _ := readStamp(gdir)
	st.Converter = 1
	if err := writeStamp(gdir, st); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadANN(cache, GloVe6B100, 10); err == nil || !strings.Contains(err.Error(), "make datasets") {
		t.Fatalf("stale converter version: %v", err)
	}
	// PrepareGloVe rebuilds it.
	if _, err := PrepareGloVe(context.Background(), src, "", cache, opt, logf); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadANN(cache, GloVe6B100, 10); err != nil {
		t.Fatal(err)
	}
	// An interrupted re-preparation (new hold-out written, ground truth
	// not yet recomputed) must not pair the new queries with the old
	// ground truth of the same shape.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reopt := opt
	reopt.GloVeSeed = 12345
	if _, err := PrepareGloVe(ctx, src, "", cache, reopt, logf); err == nil {
		t.Fatal("cancelled preparation succeeded")
	}
	if _, err := LoadANN(cache, GloVe6B100, 10); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("stale ground truth accepted: %v", err)
	}
}
