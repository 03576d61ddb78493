package bm25

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/stratasearch/strata/engine/text"
)

// formatSets builds the Go stdlib and Vaswani corpora in the three segment
// format versions (1: one Elias-Fano sequence per list; 2: partitioned
// Elias-Fano; 3: short lists partitioned without block metadata, long ones
// one sequence) with their query sets.
var formatSets struct {
	once sync.Once
	sets []formatSet
}

type formatSet struct {
	name  string
	segs  map[uint32]*Segment
	sizes map[uint32]int
	qs    [][]string
}

func loadFormatSets(b *testing.B) []formatSet {
	loadGoCorpus(b)
	c := loadCollection(b, "vaswani")
	formatSets.once.Do(func() {
		build := func(add func(bl *Builder)) (map[uint32]*Segment, map[uint32]int) {
			segs, sizes := map[uint32]*Segment{}, map[uint32]int{}
			for _, v := range []uint32{1, 2, 3, 4} {
				bl := NewBuilder(Options{formatVersion: v})
				add(bl)
				var buf bytes.Buffer
				if _, err := bl.WriteTo(&buf); err != nil {
					b.Fatal(err)
				}
				s, err := Open(buf.Bytes(), fmt.Sprintf("v%d", v))
				if err != nil {
					b.Fatal(err)
				}
				segs[v], sizes[v] = s, buf.Len()
			}
			return segs, sizes
		}
		a := benchAnalyzer()
		gs, gz := build(func(bl *Builder) {
			for i, f := range goCorpus.files {
				bl.Add(uint64(i), a.Analyze(string(f)))
			}
		})
		oa := text.MustNew(text.OracleOptions())
		var vq [][]string
		for _, q := range c.Queries {
			vq = append(vq, oa.Terms(q.Text))
		}
		vs, vz := build(func(bl *Builder) {
			for i, d := range c.Docs {
				bl.Add(uint64(i), oa.Analyze(docText(d)))
			}
		})
		formatSets.sets = []formatSet{{"gostdlib", gs, gz, goCorpus.queries}, {"vaswani", vs, vz, vq}}
	})
	return formatSets.sets
}

// docIDBytes sums the doc-id bytes of every list and counts postings.
func docIDBytes(s *Segment) (bytes, postings int) {
	for i := 0; i < s.numTerms; i++ {
		r := s.rec(i)
		bytes += int(r.efLen)
		postings += int(r.df)
	}
	return
}

// BenchmarkSegmentFormat compares segment format versions 1, 2 and 3 on the
// Go stdlib (1,000 OR / AND queries of 1–3 words) and Vaswani (93 topics):
// ns per query, NextGEQ walks (every list with df >= 1,000, strides 1–97),
// and the sizes (index-bytes, docid-bytes/posting). Single thread, top 10.
//
//	go test -run '^$' -bench BenchmarkSegmentFormat -benchtime 200ms ./engine/bm25
func BenchmarkSegmentFormat(b *testing.B) {
	if testing.Short() {
		b.Skip("builds the Go stdlib and Vaswani indexes twice")
	}
	for _, st := range loadFormatSets(b) {
		ops := []string{"or", "and", "nextgeq"}
		if st.name == "gostdlib" {
			ops = append(ops, "or1", "or3") // the 1-word, 3-word OR queries only
		}
		for _, op := range ops {
			for _, v := range []uint32{1, 2, 3, 4} {
				b.Run(fmt.Sprintf("set=%s/op=%s/version=%d", st.name, op, v), func(b *testing.B) {
					s := st.segs[v]
					db, np := docIDBytes(s)
					b.ReportAllocs()
					if op == "nextgeq" {
						var terms []int
						for i := 0; i < s.NumTerms(); i++ {
							if s.rec(i).df >= 1000 {
								terms = append(terms, i)
							}
						}
						n := 0
						for i := 0; b.Loop(); i++ {
							cu, err := s.openCursor(terms[i%len(terms)])
							if err != nil {
								b.Fatal(err)
							}
							stride := uint32(1 + i%97)
							for t := uint32(0); cu.nextGEQ(t) != efEnd; t = cu.doc() + stride {
								n++
							}
						}
						b.ReportMetric(float64(n)/float64(b.N), "geq/op")
					} else {
						views := []View{{Seg: s}}
						p := DefaultSearchParams()
						qs := st.qs
						if op == "or1" || op == "or3" {
							qs = nil
							for _, q := range st.qs {
								if len(q) == int(op[2]-'0') {
									qs = append(qs, q)
								}
							}
						}
						for i := 0; b.Loop(); i++ {
							var q Query
							if op == "and" {
								q.Must = qs[i%len(qs)]
							} else {
								q.Should = qs[i%len(qs)]
							}
							if _, err := Search(views, q, p, nil); err != nil {
								b.Fatal(err)
							}
						}
					}
					b.ReportMetric(float64(st.sizes[v]), "index-bytes")
					b.ReportMetric(float64(db)/float64(np), "docid-bytes/posting")
				})
			}
		}
	}
}
