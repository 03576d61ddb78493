package fusion

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestMaxNorm(t *testing.T) {
	// lex x=10 d=5 z=0 → 1, 0.5, 0; dense y=0.8 d=0.6 x=-0.4 → 1, 0.75, -0.5 (max|s| = 0.8).
	// Weights lex 0.7, dense 0.3:
	//   d = 0.7·0.5 + 0.3·0.75 = 0.575
	//   x = 0.7·1   + 0.3·(-0.5) = 0.55
	//   y = 0 (absent) + 0.3·1 = 0.3
	//   z = 0 + 0 (absent) = 0
	lex := List[string]{Name: "lex", Weight: 0.7, Hits: []Hit[string]{{"x", 10}, {"d", 5}, {"z", 0}}}
	dense := List[string]{Name: "dense", Weight: 0.3, Hits: []Hit[string]{{"y", 0.8}, {"d", 0.6}, {"x", -0.4}}}
	fs, err := Fuse([]List[string]{lex, dense}, Options{Method: MaxNorm})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		k string
		s float64
	}{{"d", 0.575}, {"x", 0.55}, {"y", 0.3}, {"z", 0}}
	if len(fs) != len(want) {
		t.Fatalf("got %d hits, want %d", len(fs), len(want))
	}
	for i, w := range want {
		if fs[i].Key != w.k || !near(fs[i].Score, w.s, 1e-12) {
			t.Errorf("rank %d: got %s %v want %s %v", i+1, fs[i].Key, fs[i].Score, w.k, w.s)
		}
		if !near(fs[i].Normalized, min(1, max(0, w.s)), 1e-12) {
			t.Errorf("%s normalized %v want %v", w.k, fs[i].Normalized, w.s)
		}
	}
	e := fs[2].Explain // y
	if e[0].Rank != 0 || e[0].Contribution != 0 || e[1].Rank != 1 || !near(e[1].Contribution, 0.3, 1e-12) {
		t.Errorf("explain y: %+v", e)
	}
	// All-zero list: contributes nothing, no division by zero.
	zero := List[string]{Name: "z", Hits: []Hit[string]{{"a", 0}, {"b", 0}}}
	fs, err = Fuse([]List[string]{zero}, Options{Method: MaxNorm})
	if err != nil || len(fs) != 2 || fs[0].Score != 0 || fs[0].Key != "a" {
		t.Errorf("zero list: %v %v", fs, err)
	}
	if _, err := Fuse([]List[string]{{Name: "x", Hits: []Hit[string]{{"a", math.Inf(1)}}}}, Options{Method: MaxNorm}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Inf score: %v", err)
	}
}

func TestParseMethodMaxNorm(t *testing.T) {
	for _, m := range []Method{RRF, MinMax, ZScore, MaxNorm} {
		got, err := ParseMethod(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMethod(%q) = %v, %v", m.String(), got, err)
		}
	}
	o := Options{Method: MaxNorm + 1}
	o.EnsureDefaults()
	if err := o.Validate(); !errors.Is(err, ErrInvalid) {
		t.Errorf("Method %d validated: %v", int(MaxNorm+1), err)
	}
}

// TestMaxNormAgainstNaive compares Fuse with a direct evaluation of
// Σ_m w_m · s_m(d) / max_d'|s_m(d')| on random lists with repeated keys.
func TestMaxNormAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for iter := range 200 {
		nl := 1 + rng.IntN(3)
		window := 1 + rng.IntN(12)
		lists := make([]List[int], nl)
		for m := range lists {
			lists[m].Name = string(rune('a' + m))
			lists[m].Weight = float64(rng.IntN(4)) / 2 // 0 means 1
			for range rng.IntN(15) {
				lists[m].Hits = append(lists[m].Hits, Hit[int]{Key: rng.IntN(20), Score: rng.NormFloat64()})
			}
			slices.SortFunc(lists[m].Hits, func(a, b Hit[int]) int { return cmp.Compare(b.Score, a.Score) })
		}
		got, err := Fuse(lists, Options{Method: MaxNorm, Window: window})
		if err != nil {
			t.Fatal(err)
		}
		want := map[int]float64{}
		for _, l := range lists {
			w := l.Weight
			if w == 0 {
				w = 1
			}
			hits := l.Hits[:min(window, len(l.Hits))]
			var mx float64
			for _, h := range hits {
				mx = max(mx, math.Abs(h.Score))
			}
			seen := map[int]bool{}
			for _, h := range hits {
				if _, ok := want[h.Key]; !ok {
					want[h.Key] = 0
				}
				if seen[h.Key] || mx == 0 {
					continue
				}
				seen[h.Key] = true
				want[h.Key] += w * h.Score / mx
			}
		}
		if len(got) != len(want) {
			t.Fatalf("iter %d: %d hits, want %d", iter, len(got), len(want))
		}
		for i, f := range got {
			if !near(f.Score, want[f.Key], 1e-9) {
				t.Errorf("iter %d key %d: score %v want %v", iter, f.Key, f.Score, want[f.Key])
			}
			if i > 0 && (got[i-1].Score < f.Score || (got[i-1].Score == f.Score && got[i-1].Key > f.Key)) {
				t.Errorf("iter %d: not sorted at %d", iter, i)
			}
		}
	}
}
