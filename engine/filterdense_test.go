package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestFilteredDenseAgainstBruteForce: a dense query with a metadata
// filter returns the exact cosine top k among the live documents the
// filter admits (brute force over a model of the collection), for an
// indexed filter at selectivities from 1% to every document, a filter
// on an unindexed key (evaluated per row), and an indexed filter under a
// URI-prefix scope; over three warm segments (with deleted rows and
// documents without a vector) and the MemTable.
func TestFilteredDenseAgainstBruteForce(t *testing.T) {
	const dim = 16
	c := newColl(t, CollectionOptions{Dim: dim, Metric: "cosine", IndexedFields: map[string]FieldType{"p": FieldNumber, "tag": FieldKeyword}})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(33, 4))
	type row struct {
		vec  []float32
		p    int
		tag  string
		u    string
		uri  string
		live bool
	}
	model := map[string]*row{}
	next := 0
	for round := range 4 {
		var batch []contract.Document
		for range 700 {
			id := fmt.Sprintf("d%05d", next)
			next++
			r := &row{p: rng.IntN(100), tag: fmt.Sprintf("t%d", rng.IntN(10)), u: fmt.Sprintf("u%d", rng.IntN(4)), live: true}
			r.uri = fmt.Sprintf("file:///%s/%s.txt", []string{"a", "b"}[rng.IntN(2)], id)
			if rng.IntN(15) != 0 {
				r.vec = make([]float32, dim)
				for k := range r.vec {
					r.vec[k] = float32(rng.NormFloat64())
				}
			}
			d := doc(id, "text "+id, r.vec)
			d.SourceURI = r.uri
			d.Metadata = map[string]contract.Value{"p": contract.Number(float64(r.p)), "tag": contract.String(r.tag), "u": contract.String(r.u)}
			batch = append(batch, d)
			model[id] = r
		}
		mustUpsert(t, c, batch...)
		var del []string
		for range 40 {
			id := fmt.Sprintf("d%05d", rng.IntN(next))
			del = append(del, id)
			model[id].live = false
		}
		if _, err := c.Delete(ctx, del); err != nil {
			t.Fatal(err)
		}
		if round < 3 {
			if err := c.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	cosine := func(a, b []float32) float64 {
		var dot, na, nb float64
		for i := range a {
			dot += float64(a[i]) * float64(b[i])
			na += float64(a[i]) * float64(a[i])
			nb += float64(b[i]) * float64(b[i])
		}
		return dot / math.Sqrt(na*nb)
	}
	brute := func(q []float32, k int, keep func(*row) bool) []string {
		type sc struct {
			id string
			s  float64
		}
		var all []sc
		for id, r := range model {
			if r.live && r.vec != nil && keep(r) {
				all = append(all, sc{id, cosine(q, r.vec)})
			}
		}
		sort.Slice(all, func(i, j int) bool {
			if all[i].s != all[j].s {
				return all[i].s > all[j].s
			}
			return all[i].id < all[j].id
		})
		var out []string
		for _, s := range all[:min(k, len(all))] {
			out = append(out, s.id)
		}
		return out
	}
	type fcase struct {
		name  string
		f     contract.Filter
		scope string
		keep  func(*row) bool
	}
	var cases []fcase
	for _, pct := range []int{1, 10, 50, 100} {
		cases = append(cases, fcase{fmt.Sprintf("p<%d", pct), contract.Range("p", nil, nil, contract.F(float64(pct)), nil), "",
			func(r *row) bool { return r.p < pct }})
	}
	cases = append(cases,
		fcase{"tag=t3", contract.Eq("tag", contract.String("t3")), "", func(r *row) bool { return r.tag == "t3" }},
		fcase{"u=u1 (unindexed)", contract.Eq("u", contract.String("u1")), "", func(r *row) bool { return r.u == "u1" }},
		fcase{"tag=t3 under file:///a/", contract.Eq("tag", contract.String("t3")), "file:///a/",
			func(r *row) bool { return r.tag == "t3" && r.uri[:10] == "file:///a/" }},
		fcase{"p<5 or tag=t7", contract.Or(contract.Range("p", nil, nil, contract.F(5), nil), contract.Eq("tag", contract.String("t7"))), "",
			func(r *row) bool { return r.p < 5 || r.tag == "t7" }},
	)
	for _, fc := range cases {
		for qi := range 8 {
			q := make([]float32, dim)
			for k := range q {
				q[k] = float32(rng.NormFloat64())
			}
			for _, k := range []int{10, 40} {
				f := fc.f
				cq := contract.Query{Vector: q, Mode: contract.Dense, TopK: k, Filter: &f}
				cq.Scope.URIPrefix = fc.scope
				res := mustSearch(t, c, cq)
				want := brute(q, k, fc.keep)
				got := ids(res.Hits)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s query %d k %d:\n got %v\nwant %v", fc.name, qi, k, got, want)
				}
			}
		}
	}
}
