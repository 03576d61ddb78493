package contract

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// TestLexicalStatsQuery: lexical_stats round-trips through the query's
// JSON, Add sums disjoint shards, and Validate reports every bad count
// at its location.
func TestLexicalStatsQuery(t *testing.T) {
	a := LexicalStats{Docs: 10, SumDocLen: 60, DocFreq: map[string]int64{"alpha": 3, "beta": 1}}
	b := LexicalStats{Docs: 5, SumDocLen: 20, DocFreq: map[string]int64{"alpha": 2, "gamma": 4}}
	var sum LexicalStats
	sum.Add(a)
	sum.Add(b)
	want := LexicalStats{Docs: 15, SumDocLen: 80, DocFreq: map[string]int64{"alpha": 5, "beta": 1, "gamma": 4}}
	if !reflect.DeepEqual(sum, want) {
		t.Fatalf("sum %+v, want %+v", sum, want)
	}
	q := Query{Text: "alpha", LexicalStats: &sum}
	raw, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	var back Query
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.LexicalStats, &sum) {
		t.Fatalf("round trip %s: %+v", raw, back.LexicalStats)
	}
	if err := q.Validate(0, ValidateOptions{}); err != nil {
		t.Fatal(err)
	}
	bad := Query{Text: "alpha", LexicalStats: &LexicalStats{Docs: 2, SumDocLen: -1, DocFreq: map[string]int64{"a": 3, "b": -1}}}
	err = bad.Validate(0, ValidateOptions{MultiTenant: true})
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("bad stats: %v", err)
	}
	var locs []string
	for _, e := range ve.Errors {
		b, _ := json.Marshal(e.Loc)
		locs = append(locs, string(b))
	}
	for _, l := range []string{`["query","lexical_stats"]`, `["query","lexical_stats","doc_freq","a"]`, `["query","lexical_stats","doc_freq","b"]`} {
		found := false
		for _, got := range locs {
			found = found || got == l
		}
		if !found {
			t.Fatalf("no error at %s: %v", l, locs)
		}
	}
}
