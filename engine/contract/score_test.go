package contract

import (
	"math"
	"testing"
)

func TestScores(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	dense := []struct {
		metric string
		raw    float32
		want   float64
	}{
		{"cosine", 1, 1}, {"cosine", -1, 0}, {"cosine", 0, 0.5}, {"ip", 0.5, 0.75},
		{"ip", 3, 1}, {"ip", -3, 0}, // unnormalised inputs are clamped
		{"l2", 0, 1}, {"l2", 1, 0.5}, {"l2", 3, 0.25}, {"l2", -1, 1},
		{"l2", float32(math.Inf(1)), 0}, {"cosine", float32(math.NaN()), 0}, {"l2", float32(math.NaN()), 0},
		{"hamming", 1, 0},
	}
	for _, c := range dense {
		if got := DenseScore(c.metric, c.raw); !near(got, c.want) {
			t.Errorf("DenseScore(%s, %v) = %v, want %v", c.metric, c.raw, got, c.want)
		}
	}
	lex := []struct{ s, ub, want float64 }{
		{5, 10, 0.5}, {10, 10, 1}, {12, 10, 1}, {-1, 10, 0}, {1, 0, 0}, {1, math.NaN(), 0}, {math.NaN(), 1, 0}, {1, math.Inf(1), 0},
	}
	for _, c := range lex {
		if got := LexicalScore(c.s, c.ub); !near(got, c.want) {
			t.Errorf("LexicalScore(%v, %v) = %v, want %v", c.s, c.ub, got, c.want)
		}
	}
	// Hybrid: ranks 1 and 1 of two lists with k = 60 is the maximum.
	top := 1.0/61 + 1.0/61
	if got := HybridScore(top, 60, 1, 1); !near(got, 1) {
		t.Errorf("top RRF → %v", got)
	}
	// Ranks 1 and 3: (1/61 + 1/63) / (2/61).
	if got, want := HybridScore(1.0/61+1.0/63, 60, 1, 1), (1.0/61+1.0/63)/(2.0/61); !near(got, want) {
		t.Errorf("got %v want %v", got, want)
	}
	// Weighted.
	if got := HybridScore(0.3/61, 60, 0.3, 0.7); !near(got, 0.3) {
		t.Errorf("weighted %v", got)
	}
	if HybridScore(1, 60) != 0 || HybridScore(1, 60, 0, 0) != 0 {
		t.Error("zero max should give 0")
	}
}
