package catalog

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestFilterBitmapsAgainstMatch: random filter trees over indexed fields
// compile to bitmaps equal to contract.Filter.Match over every version;
// a leaf on an undeclared field falls back (ok = false).
func TestFilterBitmapsAgainstMatch(t *testing.T) {
	types := map[string]FieldType{"kw": FieldKeyword, "b": FieldBool, "n": FieldNumber}
	fi := NewFieldIndex(types)
	rng := rand.New(rand.NewPCG(7, 8))
	words := []string{"go", "gopher", "rust", "r", ""}
	randVal := func() contract.Value {
		switch rng.IntN(4) {
		case 0:
			return contract.String(words[rng.IntN(len(words))])
		case 1:
			return contract.Number(float64(rng.IntN(5)))
		case 2:
			return contract.Bool(rng.IntN(2) == 0)
		}
		return contract.Strings(words[rng.IntN(len(words))], words[rng.IntN(len(words))])
	}
	var metas []map[string]contract.Value
	for v := 0; v < 300; v++ {
		m := map[string]contract.Value{}
		if rng.IntN(4) > 0 {
			if rng.IntN(3) == 0 {
				m["kw"] = contract.Strings(words[rng.IntN(5)], words[rng.IntN(5)])
			} else {
				m["kw"] = contract.String(words[rng.IntN(5)])
			}
		}
		if rng.IntN(3) > 0 {
			m["b"] = contract.Bool(rng.IntN(2) == 0)
		}
		if rng.IntN(3) > 0 {
			m["n"] = contract.Number(float64(rng.IntN(5)))
		}
		metas = append(metas, m)
		fi.Add(uint32(v), m)
	}
	fields := []string{"kw", "b", "n"}
	var gen func(depth int) contract.Filter
	gen = func(depth int) contract.Filter {
		f := fields[rng.IntN(3)]
		switch op := rng.IntN(9); {
		case depth < 3 && op == 0:
			return contract.And(gen(depth+1), gen(depth+1))
		case depth < 3 && op == 1:
			return contract.Or(gen(depth+1), gen(depth+1), gen(depth+1))
		case depth < 3 && op == 2:
			return contract.Not(gen(depth + 1))
		case op == 3:
			return contract.Exists(f)
		case op == 4:
			return contract.In(f, randVal(), randVal())
		case op == 5:
			return contract.Range(f, nil, contract.F(float64(rng.IntN(4))), contract.F(float64(1+rng.IntN(4))), nil)
		case op == 6:
			return contract.Prefix(f, words[rng.IntN(5)])
		}
		v := randVal()
		for !v.IsScalar() {
			v = randVal()
		}
		return contract.Eq(f, v)
	}
	for i := 0; i < 500; i++ {
		f := gen(0)
		b, ok := fi.Compile(&f, uint32(len(metas)))
		if !ok {
			t.Fatalf("indexed filter did not compile: %+v", f)
		}
		for v, m := range metas {
			if b.Contains(uint32(v)) != f.Match(m) {
				js, _ := json.Marshal(f)
				t.Fatalf("filter %s, version %d %v: bitmap %v, Match %v", js, v, m, b.Contains(uint32(v)), f.Match(m))
			}
		}
	}
	g := contract.And(contract.Exists("kw"), contract.Eq("other", contract.String("x")))
	if _, ok := fi.Compile(&g, 300); ok {
		t.Fatal("filter on an undeclared field compiled")
	}
}
