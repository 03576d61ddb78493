package fusion

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func list(name string, keys ...string) List[string] {
	l := List[string]{Name: name}
	for i, k := range keys {
		l.Hits = append(l.Hits, Hit[string]{Key: k, Score: float64(len(keys) - i)})
	}
	return l
}

func scoresOf(t *testing.T, fs []Fused[string]) map[string]float64 {
	t.Helper()
	m := map[string]float64{}
	for _, f := range fs {
		m[f.Key] = f.Score
	}
	return m
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestRRFContributions(t *testing.T) {
	fs, err := Fuse([]List[string]{list("bm25", "a", "b")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 1/(60+1) = 0.0163934..., 1/(60+2) = 0.0161290...
	if !near(fs[0].Score, 0.01639, 5e-6) || fs[0].Key != "a" {
		t.Errorf("rank 1: got %v %v, want a 0.01639", fs[0].Key, fs[0].Score)
	}
	if !near(fs[1].Score, 0.01613, 5e-6) || fs[1].Key != "b" {
		t.Errorf("rank 2: got %v %v, want b 0.01613", fs[1].Key, fs[1].Score)
	}
	if fs[0].Explain[0].Rank != 1 || fs[1].Explain[0].Rank != 2 || fs[0].Explain[0].List != "bm25" {
		t.Errorf("explain: %+v %+v", fs[0].Explain, fs[1].Explain)
	}
}

func TestRRFNearTie(t *testing.T) {
	// x: ranks 1 and 3 → 1/61 + 1/63 = 0.0163934 + 0.0158730 = 0.0322664
	// y: ranks 2 and 2 → 2/62 = 0.0322581
	a := list("lex", "x", "y", "p")
	b := list("dense", "q", "y", "x")
	fs, err := Fuse([]List[string]{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := scoresOf(t, fs)
	if !near(s["x"], 0.032266, 5e-7) || !near(s["y"], 0.032258, 5e-7) {
		t.Fatalf("x=%v y=%v", s["x"], s["y"])
	}
	if fs[0].Key != "x" || fs[1].Key != "y" {
		t.Fatalf("order %v %v, want x then y", fs[0].Key, fs[1].Key)
	}
}

func TestRRFSecondByBothBeatsFirstByOne(t *testing.T) {
	// d is 2nd in both lists: 2/62 = 0.03226; a and b are 1st in one list only: 1/61 = 0.01639.
	fs, err := Fuse([]List[string]{list("lex", "a", "d", "e"), list("dense", "b", "d", "f")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		key   string
		score float64
	}{
		{"d", 2.0 / 62}, {"a", 1.0 / 61}, {"b", 1.0 / 61}, {"e", 1.0 / 63}, {"f", 1.0 / 63},
	}
	if len(fs) != len(want) {
		t.Fatalf("got %d hits, want %d", len(fs), len(want))
	}
	for i, w := range want {
		if fs[i].Key != w.key || !near(fs[i].Score, w.score, 1e-15) {
			t.Errorf("rank %d: got %s %.6f, want %s %.6f", i+1, fs[i].Key, fs[i].Score, w.key, w.score)
		}
	}
	d := fs[0]
	if d.Explain[0].Rank != 2 || d.Explain[1].Rank != 2 || !near(d.Explain[0].Contribution, 1.0/62, 1e-15) {
		t.Errorf("explain of d: %+v", d.Explain)
	}
	if a := fs[1]; a.Explain[1].Rank != 0 || a.Explain[1].Contribution != 0 {
		t.Errorf("a is absent from dense, explain %+v", a.Explain)
	}
}

func TestDeterministicTies(t *testing.T) {
	// Every key has the same score; order must be key-ascending whatever the input order.
	keys := []string{"k3", "k1", "k2", "k0"}
	var first []string
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 20; trial++ {
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		var ls []List[string]
		for _, k := range keys {
			ls = append(ls, list("l"+k, k))
		}
		fs, err := Fuse(ls, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range fs {
			got = append(got, f.Key)
		}
		if !slices.Equal(got, []string{"k0", "k1", "k2", "k3"}) {
			t.Fatalf("trial %d: %v", trial, got)
		}
		if first == nil {
			first = got
		}
	}
}

func TestWeightedRRF(t *testing.T) {
	// w_lex = 2: a = 2/61 = 0.0327869; b (dense rank 1, w=1) = 1/61; d = 2/62 + 1/62 = 0.0483871.
	lex := list("lex", "a", "d")
	lex.Weight = 2
	fs, err := Fuse([]List[string]{lex, list("dense", "b", "d")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := scoresOf(t, fs)
	if !near(s["a"], 2.0/61, 1e-15) || !near(s["b"], 1.0/61, 1e-15) || !near(s["d"], 3.0/62, 1e-15) {
		t.Fatalf("scores %v", s)
	}
	if fs[0].Key != "d" || fs[1].Key != "a" || fs[2].Key != "b" {
		t.Fatalf("order %v", fs)
	}
	// Normalized: best achievable is (2+1)/61.
	if !near(fs[0].Normalized, (3.0/62)/(3.0/61), 1e-12) {
		t.Errorf("normalized %v", fs[0].Normalized)
	}
}

func TestMinMax(t *testing.T) {
	// lex scores x=10 d=5 z=0 → 1, 0.5, 0; dense y=0.9 d=0.8 x=0.1 → 1, 0.875, 0.
	// d = 0.5+0.875 = 1.375; x = 1+0 = 1; y = 0(absent)+1 = 1; z = 0+0 = 0.
	lex := List[string]{Name: "lex", Hits: []Hit[string]{{"x", 10}, {"d", 5}, {"z", 0}}}
	dense := List[string]{Name: "dense", Hits: []Hit[string]{{"y", 0.9}, {"d", 0.8}, {"x", 0.1}}}
	fs, err := Fuse([]List[string]{lex, dense}, Options{Method: MinMax})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		k string
		s float64
	}{{"d", 1.375}, {"x", 1}, {"y", 1}, {"z", 0}}
	for i, w := range want {
		if fs[i].Key != w.k || !near(fs[i].Score, w.s, 1e-12) {
			t.Errorf("rank %d: got %s %v want %s %v", i+1, fs[i].Key, fs[i].Score, w.k, w.s)
		}
	}
	if !near(fs[0].Normalized, 1.375/2, 1e-12) {
		t.Errorf("normalized %v", fs[0].Normalized)
	}
}

func TestZScore(t *testing.T) {
	// One list, scores 3, 2, 1: mean 2, population sd sqrt(2/3); z = ±1.2247, 0.
	// Second list holds only "w" (sd 0 → contributes 0); absent docs get the first list's floor.
	l := List[string]{Name: "a", Hits: []Hit[string]{{"p", 3}, {"q", 2}, {"r", 1}}}
	l2 := List[string]{Name: "b", Hits: []Hit[string]{{"w", 7}}}
	fs, err := Fuse([]List[string]{l, l2}, Options{Method: ZScore})
	if err != nil {
		t.Fatal(err)
	}
	z := 1 / math.Sqrt(2.0/3)
	s := scoresOf(t, fs)
	if !near(s["p"], z, 1e-12) || !near(s["q"], 0, 1e-12) || !near(s["r"], -z, 1e-12) || !near(s["w"], -z, 1e-12) {
		t.Fatalf("scores %v", s)
	}
	for _, f := range fs {
		if f.Normalized < 0 || f.Normalized > 1 {
			t.Errorf("%s normalized %v outside [0,1]", f.Key, f.Normalized)
		}
	}
}

func TestWindowTopKAndDuplicates(t *testing.T) {
	l := list("a", "k1", "k2", "k1", "k3", "k4")
	fs, err := Fuse([]List[string]{l}, Options{Window: 3, TopK: 10})
	if err != nil {
		t.Fatal(err)
	}
	// Window 3 keeps k1, k2, (k1 again: ignored). k3 and k4 are outside.
	if len(fs) != 2 || fs[0].Key != "k1" || fs[1].Key != "k2" || fs[0].Explain[0].Rank != 1 {
		t.Fatalf("got %+v", fs)
	}
	fs, err = Fuse([]List[string]{list("a", "k1", "k2", "k3")}, Options{TopK: 2})
	if err != nil || len(fs) != 2 {
		t.Fatalf("topk: %v %v", fs, err)
	}
}

func TestValidateReportsAll(t *testing.T) {
	o := Options{Method: Method(9), K: -1, TopK: -2, Window: -3}
	err := o.Validate()
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("want ErrInvalid, got %v", err)
	}
	for _, frag := range []string{"method", "K must", "TopK", "Window"} {
		if !contains(err.Error(), frag) {
			t.Errorf("error %q lacks %q", err, frag)
		}
	}
	if _, err := Fuse([]List[string]{{Name: "x", Weight: -1}}, Options{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative weight: %v", err)
	}
	if _, err := Fuse([]List[string]{{Name: "x", Hits: []Hit[string]{{"a", math.NaN()}}}}, Options{Method: MinMax}); !errors.Is(err, ErrInvalid) {
		t.Errorf("NaN score: %v", err)
	}
	if _, err := ParseMethod("borda"); err == nil {
		t.Error("ParseMethod accepted borda")
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestRRFAgainstNaive compares Fuse with a direct transcription of the
// formula on seeded random lists with overlapping keys.
func TestRRFAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 7))
	for trial := 0; trial < 200; trial++ {
		nl := 1 + rng.IntN(4)
		var ls []List[int]
		for m := 0; m < nl; m++ {
			l := List[int]{Name: fmt.Sprint(m), Weight: float64(rng.IntN(3))}
			for i, n := 0, rng.IntN(30); i < n; i++ {
				l.Hits = append(l.Hits, Hit[int]{Key: rng.IntN(40)})
			}
			ls = append(ls, l)
		}
		window := 1 + rng.IntN(25)
		fs, err := Fuse(ls, Options{Window: window})
		if err != nil {
			t.Fatal(err)
		}
		want := map[int]float64{}
		for _, l := range ls {
			w := l.Weight
			if w == 0 {
				w = 1
			}
			seen := map[int]bool{}
			for r, h := range l.Hits {
				if r >= window || seen[h.Key] {
					continue
				}
				seen[h.Key] = true
				want[h.Key] += w / (60 + float64(r+1))
			}
		}
		if len(fs) != len(want) {
			t.Fatalf("trial %d: %d hits, want %d", trial, len(fs), len(want))
		}
		for i, f := range fs {
			if !near(f.Score, want[f.Key], 1e-12) {
				t.Fatalf("trial %d: key %d score %v want %v", trial, f.Key, f.Score, want[f.Key])
			}
			if i > 0 && (fs[i-1].Score < f.Score || (fs[i-1].Score == f.Score && fs[i-1].Key >= f.Key)) {
				t.Fatalf("trial %d: not sorted at %d", trial, i)
			}
			if f.Normalized < 0 || f.Normalized > 1 {
				t.Fatalf("normalized %v", f.Normalized)
			}
		}
	}
}

func ExampleFuse() {
	lexical := List[string]{Name: "bm25", Hits: []Hit[string]{{"a.go#L1-L9", 12.1}, {"b.go#L5-L7", 9.8}}}
	dense := List[string]{Name: "hnsw", Hits: []Hit[string]{{"b.go#L5-L7", 0.91}, {"c.go#L2-L3", 0.88}}}
	fused, _ := Fuse([]List[string]{lexical, dense}, Options{TopK: 3})
	for _, f := range fused {
		fmt.Printf("%s %.5f bm25-rank=%d hnsw-rank=%d\n", f.Key, f.Score, f.Explain[0].Rank, f.Explain[1].Rank)
	}
	// Output:
	// b.go#L5-L7 0.03252 bm25-rank=2 hnsw-rank=1
	// a.go#L1-L9 0.01639 bm25-rank=1 hnsw-rank=0
	// c.go#L2-L3 0.01613 bm25-rank=0 hnsw-rank=2
}
