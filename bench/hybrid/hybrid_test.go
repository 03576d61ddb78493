package hybrid

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/stratasearch/strata/internal/testenv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratasearch/strata/datasets"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestPairedBootstrapHandMade(t *testing.T) {
	a := []float64{0.1, 0.5, 0.3, 0.9, 0.0, 0.7}
	ci, err := PairedBootstrap(a, a, 10000, 0.95, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ci.MeanDiff != 0 || ci.Lo != 0 || ci.Hi != 0 || ci.ExcludesZero() {
		t.Errorf("identical runs: %+v, want [0,0]", ci)
	}
	b := make([]float64, len(a))
	for i := range a {
		b[i] = a[i] + 0.1
	}
	ci, err = PairedBootstrap(a, b, 10000, 0.95, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !near(ci.MeanDiff, 0.1, 1e-12) || !near(ci.Lo, 0.1, 1e-12) || !near(ci.Hi, 0.1, 1e-12) || !ci.ExcludesZero() {
		t.Errorf("constant +0.1: %+v, want [0.1,0.1]", ci)
	}
	// Differences 0,1,0,1,... (n = 400): mean 0.5, standard error
	// 0.5/sqrt(400) = 0.025, so the 95% interval is ≈ 0.5 ± 0.049.
	n := 400
	x, y := make([]float64, n), make([]float64, n)
	for i := range y {
		y[i] = float64(i % 2)
	}
	ci, err = PairedBootstrap(x, y, 10000, 0.95, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !near(ci.MeanDiff, 0.5, 1e-12) || !near(ci.Lo, 0.451, 0.006) || !near(ci.Hi, 0.549, 0.006) {
		t.Errorf("Bernoulli differences: %+v, want ≈ [0.451, 0.549]", ci)
	}
	ci2, _ := PairedBootstrap(x, y, 10000, 0.95, 7)
	if ci2 != ci {
		t.Errorf("same seed, different result: %+v vs %+v", ci, ci2)
	}
	// Swapping the systems mirrors the interval.
	ci3, _ := PairedBootstrap(y, x, 10000, 0.95, 7)
	if !near(ci3.Lo, -ci.Hi, 1e-12) || !near(ci3.Hi, -ci.Lo, 1e-12) {
		t.Errorf("swap: %+v vs %+v", ci3, ci)
	}
}

func TestPairedBootstrapErrors(t *testing.T) {
	_, err := PairedBootstrap([]float64{1}, []float64{1, 2}, 0, 1.5, 1)
	if err == nil {
		t.Fatal("no error")
	}
	for _, frag := range []string{"length", "resamples", "level"} {
		if !strings.Contains(err.Error(), frag) {
			t.Errorf("error %q lacks %q", err, frag)
		}
	}
	if _, err := PairedBootstrap(nil, nil, 10, 0.95, 1); err == nil {
		t.Error("empty input accepted")
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5}
	for _, c := range []struct{ p, want float64 }{{0, 1}, {1, 5}, {0.5, 3}, {0.25, 2}, {0.1, 1.4}} {
		if got := quantile(xs, c.p); !near(got, c.want, 1e-12) {
			t.Errorf("quantile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
}

// synthetic builds a small collection where the lexical signal is good and
// the dense vectors are noisy: doc i is about topic i%nt and has the topic's
// word; its vector is the topic centroid plus noise.
func synthetic(t *testing.T, name string, seed uint64) *collection {
	t.Helper()
	const nd, nt, d = 120, 12, 16
	rng := rand.New(rand.NewPCG(seed, 1))
	cent := make([]float32, nt*d)
	for i := range cent {
		cent[i] = float32(rng.NormFloat64())
	}
	var ids, texts, qids, qs []string
	dv := make([]float32, nd*d)
	qrels := map[string]map[string]int{}
	for i := range nd {
		tp := i % nt
		ids = append(ids, fmt.Sprintf("d%d", i))
		texts = append(texts, fmt.Sprintf("topic%c common filler word%d", 'a'+tp, rng.IntN(30)))
		for j := range d {
			dv[i*d+j] = cent[tp*d+j] + 1.5*float32(rng.NormFloat64())
		}
	}
	qv := make([]float32, nt*d)
	for tp := range nt {
		qid := fmt.Sprintf("q%d", tp)
		qids = append(qids, qid)
		qs = append(qs, fmt.Sprintf("topic%c word%d", 'a'+tp, rng.IntN(30)))
		copy(qv[tp*d:], cent[tp*d:(tp+1)*d])
		qrels[qid] = map[string]int{}
		for i := tp; i < nd; i += nt {
			qrels[qid][ids[i]] = 1
		}
	}
	c, err := prepare(name, ids, texts, qids, qs, dv, qv, d, qrels)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestStudySynthetic(t *testing.T) {
	cols := []*collection{synthetic(t, "syna", 1), synthetic(t, "synb", 2)}
	cfg := Config{Resamples: 200, Folds: 3, Seed: 3}
	cfg.EnsureDefaults()
	res, err := study(context.Background(), cfg, cols)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(res.Baselines), 2*len(fixedSpecs); got != want {
		t.Errorf("%d baseline rows, want %d", got, want)
	}
	if got, want := len(res.Transfers), 2*len(Families); got != want {
		t.Errorf("%d transfers, want %d", got, want)
	}
	if got, want := len(res.CV), 2*len(Families); got != want {
		t.Errorf("%d CV rows, want %d", got, want)
	}
	for _, r := range res.Baselines {
		if (r.Spec.Family == FamLexical) != (r.VsLexical == nil) {
			t.Errorf("%s %s: VsLexical %v", r.Collection, r.Label, r.VsLexical)
		}
		for _, v := range []float64{r.NDCG10, r.MAP, r.R100} {
			if !(v >= 0 && v <= 1) {
				t.Errorf("%s %s: metric %v outside [0,1]", r.Collection, r.Label, v)
			}
		}
	}
	// The lexical signal finds every relevant doc of a topic (each has the
	// topic word), so lexical R@100 is 1.
	if r := res.Baselines[0]; r.Spec.Family != FamLexical || r.R100 != 1 {
		t.Errorf("lexical row %+v, want R@100 = 1", r)
	}
	// Held-out transfer rows use the spec chosen on the other collection.
	for _, tr := range res.Transfers {
		if tr.Test.Spec != tr.Chosen || tr.TrainOn == tr.TestOn {
			t.Errorf("transfer %+v", tr)
		}
	}
	if len(res.Default.Rows) != 2 || res.Default.Spec.Family == "" {
		t.Errorf("default %+v", res.Default)
	}
	dir := t.TempDir()
	if err := WriteFiles(dir, res); err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Transfers) != len(res.Transfers) || back.Default.Spec != res.Default.Spec {
		t.Errorf("JSON round trip lost data")
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil || !strings.Contains(string(md), "Default recommendation") {
		t.Errorf("report.md: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	c := Config{Resamples: -1, Folds: 1, Collections: []string{"trec"}}
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, frag := range []string{"Resamples", "Folds", "trec"} {
		if !strings.Contains(err.Error(), frag) {
			t.Errorf("error %q lacks %q", err, frag)
		}
	}
}

// TestRealCollections runs the full study on Cranfield and Vaswani
// (≈ 20 s on 2 cores) and checks the single-retriever baselines against
// the figures measured independently with cmd/searchd demo.
func TestRealCollections(t *testing.T) {
	if testing.Short() {
		t.Skip("full collections: non-short only")
	}
	testenv.SkipIfEmulated(t, "reads a real dataset")
	dir, err := datasets.Dir()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	res, err := Run(context.Background(), Config{DatasetsDir: dir, Resamples: 1000})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"cranfield/" + FamLexical: 0.3914, "cranfield/" + FamDense: 0.2021,
		"vaswani/" + FamLexical: 0.4392, "vaswani/" + FamDense: 0.1757,
	}
	for _, r := range res.Baselines {
		if w, ok := want[r.Collection+"/"+r.Spec.Family]; ok && !near(r.NDCG10, w, 6e-5) {
			t.Errorf("%s %s nDCG@10 = %.4f, want %.4f", r.Collection, r.Label, r.NDCG10, w)
		}
		if r.Collection == "cranfield" && r.Spec.Family == FamRRF && r.Spec.DenseWeight == 1 && !near(r.NDCG10, 0.3185, 6e-5) {
			t.Errorf("cranfield RRF k=60 nDCG@10 = %.4f, want 0.3185", r.NDCG10)
		}
	}
	if res.Queries["cranfield"] != 225 || res.Queries["vaswani"] != 93 {
		t.Errorf("judged queries %v", res.Queries)
	}
}
