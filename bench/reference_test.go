package bench

import (
	"fmt"
	"strings"
	"testing"
)

// TestReferenceChecks: a full glove run whose hnswlib-native is 3.7× the
// REFERENCE.md anchor (what the frequency-ordered query prefix produced) is
// flagged; one within 2× is not; lower-bound points, quick runs and
// subsampled data sets are never compared.
func TestReferenceChecks(t *testing.T) {
	mk := func(qps95 float64, quick bool, n int) *Results {
		return &Results{Quick: quick,
			Datasets: []DatasetInfo{{Name: DatasetGloVe, N: n, FullN: 331479, NQ: 2000, FullNQ: 10000}},
			ANN: []ANNRun{{Engine: "hnswlib-native", Dataset: DatasetGloVe, At: []QPSAtRecall{
				{Recall: 0.90, Reached: true, AboveStart: true, QPSCPU: 99999},
				{Recall: 0.95, Reached: true, QPSCPU: qps95},
				{Recall: 0.99, Reached: false},
			}}}}
	}
	cs := referenceChecks(mk(12262, false, 331479))
	if len(cs) != 1 || cs[0].Recall != 0.95 || cs[0].Reference != 3310 || !cs[0].Flag {
		t.Fatalf("3.7× not flagged: %+v", cs)
	}
	var b strings.Builder
	reportReferenceChecks(func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }, mk(12262, false, 331479))
	if !strings.Contains(b.String(), "check the harness") {
		t.Fatalf("report lacks the flag: %s", b.String())
	}
	if cs := referenceChecks(mk(4000, false, 331479)); len(cs) != 1 || cs[0].Flag {
		t.Fatalf("1.2× flagged: %+v", cs)
	}
	if cs := referenceChecks(mk(12262, true, 331479)); len(cs) != 0 {
		t.Fatalf("quick run compared: %+v", cs)
	}
	if cs := referenceChecks(mk(12262, false, 10000)); len(cs) != 0 {
		t.Fatalf("subsampled base compared: %+v", cs)
	}
}
