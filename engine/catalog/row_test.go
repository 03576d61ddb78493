package catalog

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// FuzzDecodeValueFast: whenever the fast metadata decoder accepts a
// string, json.Unmarshal accepts it too and gives the same value.
func FuzzDecodeValueFast(f *testing.F) {
	for _, s := range []string{`"go"`, `""`, `"a\"b"`, `"\u003c"`, `true`, `false`, `0`, `-0`, `01`, `1.5e3`, `-2.25E-2`,
		`1e400`, `1.`, `.5`, `-`, `["a"]`, `null`, `"é"`, "\"\x01\"", `1_0`, `0x10`, `Inf`, `"unterminated`,
		`[]`, `["a","b"]`, `["a,b"]`, `["a",]`, `[,"a"]`, `["a""b"]`, `[ "a"]`, `["\u0041"]`, `["é"]`, `["a"`, `[""]`, `["",""]`, `[1]`, `["a",1]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := decodeValueFast(s)
		if !ok {
			return
		}
		var w contract.Value
		if err := json.Unmarshal([]byte(s), &w); err != nil {
			t.Fatalf("fast path accepted %q, json.Unmarshal: %v", s, err)
		}
		if !reflect.DeepEqual(v, w) {
			t.Fatalf("%q: fast %#v, json %#v", s, v, w)
		}
	})
}
