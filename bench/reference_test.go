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
				{Recall: 0.99, Reached: true, QPSCPU: 1400},
			}}}}
	}
	cs := referenceChecks(mk(12262, false, 331479))
	if len(cs) != 2 || cs[0].Recall != 0.95 || cs[0].Reference != 3310 || !cs[0].Flag || cs[1].Flag {
		t.Fatalf("3.7× not flagged (or 1.2× flagged): %+v", cs)
	}
	var b strings.Builder
	reportReferenceChecks(func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }, mk(12262, false, 331479))
	if !strings.Contains(b.String(), "check the harness") {
		t.Fatalf("report lacks the flag: %s", b.String())
	}
	if cs := referenceChecks(mk(4000, false, 331479)); len(cs) != 2 || cs[0].Flag || cs[1].Flag {
		t.Fatalf("1.2× flagged: %+v", cs)
	}
	if cs := referenceChecks(mk(12262, true, 331479)); len(cs) != 0 {
		t.Fatalf("quick run compared: %+v", cs)
	}
	if cs := referenceChecks(mk(12262, false, 10000)); len(cs) != 0 {
		t.Fatalf("subsampled base compared: %+v", cs)
	}
	r := mk(12262, false, 331479)
	r.Emulated = true
	if cs := referenceChecks(r); len(cs) != 0 {
		t.Fatalf("emulated run compared: %+v", cs)
	}
	r = mk(12262, false, 331479)
	r.Datasets[0].NQ = 500
	if cs := referenceChecks(r); len(cs) != 0 {
		t.Fatalf("query subset compared: %+v", cs)
	}
	// A curve that never reaches a recall the reference reaches (as with
	// a wrong ground truth) is a flagged row, not a silent omission.
	r = mk(12262, false, 331479)
	r.ANN[0].At[1] = QPSAtRecall{Recall: 0.95}
	cs = referenceChecks(r)
	if len(cs) != 2 || !cs[0].Flag || cs[0].Measured != 0 || cs[0].Recall != 0.95 || cs[1].Flag {
		t.Fatalf("unreached target: %+v", cs)
	}
	b.Reset()
	reportReferenceChecks(func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }, r)
	if !strings.Contains(b.String(), "not reached") {
		t.Fatalf("report lacks the unreached row: %s", b.String())
	}
	// The reference's own lower bounds ("≥", fashion's 0.90 anchor) are
	// not compared.
	r = mk(0, false, 60000)
	r.Datasets[0] = DatasetInfo{Name: DatasetFashion, N: 60000, FullN: 60000, NQ: 2000, FullNQ: 10000}
	r.ANN[0].Dataset = DatasetFashion
	r.ANN[0].At[0] = QPSAtRecall{Recall: 0.90, Reached: true, QPSCPU: 99999}
	r.ANN[0].At[1] = QPSAtRecall{Recall: 0.95, Reached: true, QPSCPU: 19000}
	r.ANN[0].At[2] = QPSAtRecall{Recall: 0.99, Reached: true, QPSCPU: 11000}
	cs = referenceChecks(r)
	if len(cs) != 2 || cs[0].Recall != 0.95 || cs[1].Recall != 0.99 {
		t.Fatalf("fashion's ≥ anchor compared: %+v", cs)
	}
}
