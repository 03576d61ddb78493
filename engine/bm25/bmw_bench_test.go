package bm25

import (
	"strconv"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine/text"
)

// BenchmarkOR compares the disjunctive evaluators (SearchParams.Algorithm)
// on three query sets, single thread, one segment:
//
//   - set=gostdlib: the Go stdlib corpus and bench/lexical's 1,000 OR
//     queries of 1–3 words (BenchmarkGoStdlib's op=or);
//   - set=vaswani: Vaswani's 93 topics (oracle analyzer);
//   - set=cranfield: Cranfield's 225 topics (oracle analyzer).
//
// One op is one pass over the whole set; ns/query is ns/op divided by the
// set size. The evaluators are the innermost level so that bmm and bmw of
// one set run next to each other; interleave repeated runs with a shell
// loop (see doc.go).
func BenchmarkOR(b *testing.B) {
	if testing.Short() {
		b.Skip("builds the Go stdlib index")
	}
	type set struct {
		name  string
		views []View
		qs    []Query
	}
	var sets []set
	loadGoCorpus(b)
	g := set{name: "gostdlib", views: []View{{Seg: goCorpus.seg}}}
	for _, q := range goCorpus.queries {
		g.qs = append(g.qs, Query{Should: q})
	}
	sets = append(sets, g)
	a := text.MustNew(text.OracleOptions())
	for _, name := range []string{"vaswani", "cranfield"} {
		c := loadCollection(b, name)
		s := set{name: name, views: indexCollection(b, c, a, 1)}
		for _, q := range c.Queries {
			s.qs = append(s.qs, Query{Should: a.Terms(q.Text)})
		}
		sets = append(sets, s)
	}
	for _, s := range sets {
		for _, k := range []int{10, 100} {
			for _, alg := range []string{AlgBMM, AlgBMW} {
				b.Run("set="+s.name+"/k="+strconv.Itoa(k)+"/alg="+alg, func(b *testing.B) {
					p := DefaultSearchParams()
					p.K, p.Algorithm = k, alg
					b.ReportAllocs()
					for b.Loop() {
						for _, q := range s.qs {
							if _, err := Search(s.views, q, p, nil); err != nil {
								b.Fatal(err)
							}
						}
					}
					b.ReportMetric(float64(b.Elapsed()/time.Nanosecond)/float64(b.N*len(s.qs)), "ns/query")
				})
			}
		}
	}
}
