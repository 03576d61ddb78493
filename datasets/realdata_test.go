package datasets

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// realDir returns the real test-collection directory, skipping the test
// when it is absent unless CI=true (then it fails): the policy every
// package's real-data tests follow.
func realDir(t *testing.T, sub string) string {
	t.Helper()
	d, err := Dir()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("real datasets required in CI: %v", err)
		}
		t.Skipf("real datasets not available: %v", err)
	}
	return filepath.Join(d, sub)
}

func TestDir(t *testing.T) {
	t.Setenv("STRATA_DATASETS", t.TempDir())
	if d, err := Dir(); err != nil || d != os.Getenv("STRATA_DATASETS") {
		t.Fatalf("Dir() = %q, %v", d, err)
	}
	t.Setenv("STRATA_DATASETS", filepath.Join(t.TempDir(), "missing"))
	if _, err := Dir(); err == nil {
		t.Fatal("missing $STRATA_DATASETS accepted")
	}
	root, err := ModuleRoot()
	if err != nil || modulePathOf(filepath.Join(root, "go.mod")) != ModulePath {
		t.Fatalf("ModuleRoot() = %q, %v", root, err)
	}
	c := filepath.Join(t.TempDir(), "cache")
	t.Setenv("STRATA_CACHE", c)
	if d, err := CacheDir(); err != nil || d != c {
		t.Fatalf("CacheDir() = %q, %v", d, err)
	}
	if fi, err := os.Stat(c); err != nil || !fi.IsDir() {
		t.Fatal("CacheDir did not create the directory")
	}
}

func checkUnitish(t *testing.T, name string, m Matrix[float32]) {
	t.Helper()
	for i := 0; i < m.N; i++ {
		var ss float64
		for _, v := range m.Row(i) {
			ss += float64(v) * float64(v)
		}
		if math.Abs(math.Sqrt(ss)-1) > 0.05 {
			t.Fatalf("%s row %d has norm %.4f, want ≈1", name, i, math.Sqrt(ss))
		}
	}
}

func TestCranfieldReal(t *testing.T) {
	dir := realDir(t, "cranfield")
	c, err := LoadCranfield(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Docs) != 1400 || len(c.Queries) != 225 {
		t.Fatalf("%d docs, %d queries", len(c.Docs), len(c.Queries))
	}
	q := c.Qrels
	if q.Relevant != 1612 || q.NonRel != 225 || q.Blank != 2 || q.Lines != 1612+225 {
		t.Fatalf("qrels: %d relevant, %d non-relevant, %d blank, %d lines", q.Relevant, q.NonRel, q.Blank, q.Lines)
	}
	grades := map[int]int{}
	for _, m := range q.Judgments {
		for _, r := range m {
			grades[r]++
		}
	}
	if len(grades) != 5 || grades[-1] != 225 || grades[1]+grades[2]+grades[3]+grades[4] != 1612 {
		t.Fatalf("grades %v", grades)
	}
	// Queries are numbered by position; judgements use 1..225.
	if c.Queries[0].ID != "1" || c.Queries[224].ID != "225" || len(q.Judgments) != 225 {
		t.Fatalf("query ids %q..%q, %d judged queries", c.Queries[0].ID, c.Queries[224].ID, len(q.Judgments))
	}
	if !strings.HasPrefix(c.Queries[0].Text, "what similarity laws must be obeyed") {
		t.Fatalf("query 1 = %q", c.Queries[0].Text)
	}
	// cran.qry's .I numbers skip values: the third query is ".I 004".
	recs, err := ReadIRecordsFile(filepath.Join(dir, CranQueriesFile))
	if err != nil || recs[2].ID != "004" || recs[224].ID != "365" {
		t.Fatalf("cran.qry ids: %v", err)
	}
	for i, d := range c.Docs {
		if d.ID != strconv.Itoa(i+1) {
			t.Fatalf("doc %d has id %q", i, d.ID)
		}
		empty := d.Title == "" && d.Text == ""
		if empty != (d.ID == "471" || d.ID == "995") {
			t.Errorf("doc %s: empty=%v", d.ID, empty)
		}
	}
	d240 := c.Docs[239]
	if !strings.Contains(d240.Text, "of the case where air is injected into the separated region . .A application to turbulent separations is made for a prandtl number of .B unity in low-speed flow") {
		t.Errorf("doc 240 abstract lost its stray markers: %q", d240.Text)
	}
	for _, id := range []int{576, 578} {
		if !strings.Contains(c.Docs[id-1].Text, ".W") {
			t.Errorf("doc %d abstract lost its repeated .W", id)
		}
	}
	if c.Docs[0].Title != "experimental investigation of the aerodynamics of a wing in a slipstream ." {
		t.Errorf("doc 1 title %q", c.Docs[0].Title)
	}
	if c.DocVecs.D != 512 || c.DocVecs.N != 1400 || c.QueryVecs.N != 225 || c.QueryVecs.D != 512 {
		t.Fatalf("vectors %d×%d / %d×%d", c.DocVecs.N, c.DocVecs.D, c.QueryVecs.N, c.QueryVecs.D)
	}
	checkUnitish(t, "cranfield docs", c.DocVecs)
	checkUnitish(t, "cranfield queries", c.QueryVecs)
	// The mmap reader agrees with the streaming one.
	m, err := OpenFvecs(filepath.Join(dir, Use512DocsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Len() != 1400 || m.Dim() != 512 || m.Row(1399)[511] != c.DocVecs.Row(1399)[511] {
		t.Fatal("mmap reader disagrees")
	}
}

func TestVaswaniReal(t *testing.T) {
	dir := realDir(t, "vaswani")
	c, err := LoadVaswani(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Docs) != 11429 || len(c.Queries) != 93 {
		t.Fatalf("%d docs, %d queries", len(c.Docs), len(c.Queries))
	}
	if c.Qrels.Lines != 2083 || c.Qrels.Relevant != 2083 || c.Qrels.Blank != 0 {
		t.Fatalf("qrels %d lines, %d relevant", c.Qrels.Lines, c.Qrels.Relevant)
	}
	if c.Docs[0].ID != "1" || c.Docs[11428].ID != "11429" ||
		c.Docs[0].Text != "compact memories have flexible capacities a digital data storage system with capacity up to bits and random and or sequential access is described" {
		t.Fatalf("doc 1 = %+v", c.Docs[0])
	}
	if c.Queries[0].ID != "1" || c.Queries[0].Text != "MEASUREMENT OF DIELECTRIC CONSTANT OF LIQUIDS BY THE USE OF MICROWAVE TECHNIQUES" {
		t.Fatalf("query 1 = %+v", c.Queries[0])
	}
	if c.DocVecs.D != 512 || c.DocVecs.N != 11429 || c.QueryVecs.N != 93 || c.QueryVecs.D != 512 {
		t.Fatalf("vectors %d×%d / %d×%d", c.DocVecs.N, c.DocVecs.D, c.QueryVecs.N, c.QueryVecs.D)
	}
	checkUnitish(t, "vaswani queries", c.QueryVecs)
	if !testing.Short() {
		checkUnitish(t, "vaswani docs", c.DocVecs)
	}
}

// TestFetchedANN checks the data sets prepared by `make datasets`, when
// they are in the cache (they are optional: never fetched by CI).
func TestFetchedANN(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	cache := os.Getenv("STRATA_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Skip(err)
		}
		cache = filepath.Join(home, ".cache", "strata")
	}
	for _, tc := range []struct {
		name     string
		n, nq, d int
	}{{FashionMNIST, 60000, 10000, 784}, {GloVe6B100, 331479, 10000, 100}} {
		a, err := LoadANN(cache, tc.name, DefaultK)
		if err != nil {
			t.Logf("%s not prepared (%v): skipped", tc.name, err)
			continue
		}
		if a.Base.N != tc.n || a.Queries.N != tc.nq || a.Base.D != tc.d || a.GT.IDs.N != tc.nq || a.GT.IDs.D != 100 {
			t.Fatalf("%s: base %d×%d queries %d gt %d×%d", tc.name, a.Base.N, a.Base.D, a.Queries.N, a.GT.IDs.N, a.GT.IDs.D)
		}
		// Spot-check a few queries' ground truth against the naive reference.
		for _, qi := range []int{0, tc.nq - 1} {
			one := Matrix[float32]{N: 1, D: tc.d, Data: a.Queries.Row(qi)}
			ids, _ := naiveGT(a.Base, one, a.Metric, 100)
			got := a.GT.IDs.Row(qi)
			hits := 0
			for j := range ids[0] {
				if ids[0][j] == got[j] {
					hits++
				}
			}
			if hits < 99 {
				t.Errorf("%s query %d: ground truth agrees with naive at %d/100 ranks", tc.name, qi, hits)
			}
		}
	}
}

// TestFashionIDXReal reads the Debian package's idx files when installed.
func TestFashionIDXReal(t *testing.T) {
	test := filepath.Join(FashionMNISTDir, FashionTestImages)
	if _, err := os.Stat(test); err != nil {
		t.Skipf("%s not installed (make datasets)", FashionDebPkg)
	}
	if err := VerifySHA256(test, SHA256FashionTestImages); err != nil {
		t.Fatal(err)
	}
	im, err := ReadIDXImages(test)
	if err != nil {
		t.Fatal(err)
	}
	labels, err := ReadIDXLabels(filepath.Join(FashionMNISTDir, FashionTestLabels))
	if err != nil {
		t.Fatal(err)
	}
	if im.N != 10000 || im.D != 784 || im.Rows != 28 || len(labels) != 10000 {
		t.Fatalf("test images %d×%d, %d labels", im.N, im.D, len(labels))
	}
	hist := [10]int{}
	for _, l := range labels {
		if l > 9 {
			t.Fatalf("label %d", l)
		}
		hist[l]++
	}
	for c, n := range hist {
		if n != 1000 {
			t.Errorf("class %d has %d test images, want 1000", c, n)
		}
	}
	var maxPix float32
	for _, v := range im.Data {
		maxPix = max(maxPix, v)
	}
	if maxPix != 255 {
		t.Errorf("max pixel %v, want raw 0..255 values", maxPix)
	}
}
