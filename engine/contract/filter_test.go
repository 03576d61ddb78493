package contract

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

func TestFilterJSONForm(t *testing.T) {
	in := `{"and":[{"eq":{"field":"lang","value":"go"}},{"not":{"exists":"generated"}}]}`
	var f Filter
	if err := json.Unmarshal([]byte(in), &f); err != nil {
		t.Fatal(err)
	}
	want := And(Eq("lang", String("go")), Not(Exists("generated")))
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("got %+v", f)
	}
	b, _ := json.Marshal(f)
	if string(b) != in {
		t.Errorf("re-encoded %s", b)
	}
	if err := f.Validate(); err != nil {
		t.Error(err)
	}
}

func TestFilterValidate(t *testing.T) {
	cases := []struct {
		name string
		f    Filter
		want []string
	}{
		{"ok", Or(Eq("a", Number(1)), In("b", String("x"), Bool(true)), Range("n", F(1), nil, nil, F(1.5)), Prefix("p", "s"), Exists("e")), nil},
		{"point range", Range("n", nil, F(2), nil, F(2)), nil},
		{"unknown op", Filter{Op: "regex", Field: "a"}, []string{"filter:unknown_filter_op"}},
		{"empty and", And(), []string{"filter.and:invalid_filter"}},
		{"empty or", Or(), []string{"filter.or:invalid_filter"}},
		{"not arity", Filter{Op: OpNot}, []string{"filter.not:invalid_filter"}},
		{"range no bound", Range("n", nil, nil, nil, nil), []string{"filter.range:invalid_filter"}},
		{"range lo > hi", Range("n", nil, F(5), nil, F(1)), []string{"filter.range:empty_range"}},
		{"range exclusive equal", Range("n", F(2), nil, nil, F(2)), []string{"filter.range:empty_range"}},
		{"range two lower", Range("n", F(1), F(2), nil, nil), []string{"filter.range.gte:invalid_filter"}},
		{"range NaN", Range("n", nil, nil, F(math.NaN()), nil), []string{"filter.range.lt:not_finite"}},
		{"missing field", Exists(""), []string{"filter.exists.field:missing"}},
		{"eq list", Eq("a", Strings("x")), []string{"filter.eq.value:invalid_filter"}},
		{"eq unset", Filter{Op: OpEq, Field: "a"}, []string{"filter.eq.value:invalid_filter"}},
		{"in empty", In("a"), []string{"filter.in.values:invalid_filter"}},
		{"in bad", In("a", Number(math.Inf(1)), Strings()), []string{"filter.in.values[0]:not_finite", "filter.in.values[1]:invalid_filter"}},
		{"prefix number", Filter{Op: OpPrefix, Field: "p", Value: Number(1)}, []string{"filter.prefix.value:invalid_filter"}},
		{"nested all", And(Or(), Not(Filter{Op: "x"}), Range("", nil, nil, nil, nil)), []string{
			"filter.and[0].or:invalid_filter", "filter.and[1].not:unknown_filter_op",
			"filter.and[2].range.field:missing", "filter.and[2].range:invalid_filter"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := locs(t, tc.f.Validate())
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q want %q", got, tc.want)
			}
		})
	}
	deep := Exists("a")
	for range MaxFilterDepth + 1 {
		deep = Not(deep)
	}
	if deep.Validate() == nil {
		t.Error("over-deep filter accepted")
	}
}

func TestFilterMatch(t *testing.T) {
	meta := map[string]Value{"lang": String("go"), "lines": Number(120), "gen": Bool(false), "tags": Strings("db", "search"), "path": String("src/a.go")}
	cases := []struct {
		f    Filter
		want bool
	}{
		{Eq("lang", String("go")), true},
		{Eq("lang", String("rust")), false},
		{Eq("lines", String("120")), false}, // types must agree
		{Eq("lines", Number(120)), true},
		{Eq("gen", Bool(false)), true},
		{Eq("tags", String("db")), true}, // list contains
		{Eq("tags", String("x")), false},
		{Eq("missing", Bool(false)), false},
		{In("lang", String("rust"), String("go")), true},
		{In("lang", Number(1)), false},
		{Range("lines", F(100), nil, F(120), nil), false},
		{Range("lines", F(100), nil, nil, F(120)), true},
		{Range("lang", F(0), nil, nil, nil), false},
		{Prefix("path", "src/"), true},
		{Prefix("tags", "sea"), true},
		{Prefix("path", "lib/"), false},
		{Exists("gen"), true},
		{Exists("nope"), false},
		{Not(Exists("nope")), true},
		{And(Eq("lang", String("go")), Not(Exists("generated"))), true},
		{And(Eq("lang", String("go")), Exists("generated")), false},
		{Or(Exists("x"), Range("lines", nil, F(120), nil, nil)), true},
		{Filter{Op: "regex"}, false},
	}
	for i, tc := range cases {
		if got := tc.f.Match(meta); got != tc.want {
			b, _ := json.Marshal(tc.f)
			t.Errorf("%d %s: got %v", i, b, got)
		}
	}
}
