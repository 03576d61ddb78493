package memgen

import (
	"context"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/embed/static"
	"github.com/stratasearch/strata/engine/memory"
)

func runStream(t *testing.T, st *Stream, appendOnly bool) Report {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	col, err := db.CreateCollection("memory", memory.CollectionOptions(4))
	if err != nil {
		t.Fatal(err)
	}
	clk := &Clock{}
	clk.Set(st.Start)
	s, err := memory.Open(ctx, col, memory.Options{Now: clk.Now, AppendOnly: appendOnly})
	if err != nil {
		t.Fatal(err)
	}
	gdir := dir
	if appendOnly {
		gdir = ""
	}
	rep, err := Run(ctx, s, clk, st, gdir)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestSmallBenchmark runs a small stream against the store and the
// append-only baseline and checks the store meets every bar while the
// baseline shows the failure each bar is about.
func TestSmallBenchmark(t *testing.T) {
	st := Generate(Config{Seed: 1, Subjects: 4})
	if again := Generate(Config{Seed: 1, Subjects: 4}); len(again.Ops) != len(st.Ops) || again.Ops[7].Write.Content != st.Ops[7].Write.Content {
		t.Fatal("the generator is not deterministic")
	}
	got := runStream(t, st, false)
	t.Logf("store:\n%s", got)
	base := runStream(t, st, true)
	t.Logf("append-only baseline:\n%s", base)
	if got.RecallAt1 < 0.95 || got.StaleRate != 0 || got.DupRate > 0.02 || got.Residues != 0 || got.FileResidues != 0 {
		t.Errorf("store below the bars: %+v", got)
	}
	if got.PoisonRecords == 0 || got.PoisonFramed != got.PoisonRecalled || got.PoisonRecalled == 0 || got.PoisonAfterRollback != 0 || got.PoisonKeyCurrent != 0 {
		t.Errorf("poison handling: %+v", got)
	}
	if base.StaleRate == 0 || base.DupRate <= 0.02 || base.Residues == 0 {
		t.Errorf("the baseline shows no failure, so the stream tests nothing: %+v", base)
	}
}

// TestCosineDoesNotSeparate is why Policy.NearDupCosine is off by
// default: with the built-in static embedder, on the small stream, some
// restatement pair has a lower cosine than some pair of different facts,
// so every threshold misclassifies pairs one way or the other; and
// StudyCosine agrees with a direct count at 0.9.
func TestCosineDoesNotSeparate(t *testing.T) {
	emb, err := static.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	vec := func(s string) []float32 { return emb.EmbedOne(make([]float32, emb.Dim()), s) }
	st := Generate(Config{Seed: 1, Subjects: 4})
	ts := StudyCosine(st, []float64{0.9}, vec)
	t.Logf("%+v", ts)
	if ts.SamePairs == 0 || ts.DiffPairs == 0 || ts.MinSame >= ts.MaxDiff {
		t.Fatalf("the built-in embedder separates restatements (min %.4f) from different facts (max %.4f): measure a threshold", ts.MinSame, ts.MaxDiff)
	}
	below, above := 0, 0
	for f, texts := range st.FactTexts {
		for g, others := range st.FactTexts {
			if strings.Split(f, "/")[0] != strings.Split(g, "/")[0] || f > g {
				continue
			}
			for i, a := range texts {
				for j, b := range others {
					if f == g && j <= i {
						continue
					}
					va, vb := vec(a), vec(b)
					c := 0.0
					for k := range va {
						c += float64(va[k]) * float64(vb[k])
					}
					if f == g && c < 0.9 {
						below++
					}
					if f != g && c >= 0.9 {
						above++
					}
				}
			}
		}
	}
	if below != ts.SameBelow[0] || above != ts.DiffAbove[0] {
		t.Fatalf("direct count at 0.9: %d restatements below, %d different facts above; study %d, %d", below, above, ts.SameBelow[0], ts.DiffAbove[0])
	}
}

func TestThresholdSeparates(t *testing.T) {
	ts := StudyThreshold(Generate(Config{Seed: 1, Subjects: 4}), []float64{memory.DefaultNearDupJaccard})
	t.Logf("%+v", ts)
	if ts.SameBelow[0] != 0 || ts.DiffAbove[0] != 0 {
		t.Fatalf("threshold %.2f misclassifies: %+v", memory.DefaultNearDupJaccard, ts)
	}
}
