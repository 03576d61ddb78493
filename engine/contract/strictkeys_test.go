package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestExactKeys: keys that differ from the schema's only in case, keys
// given twice, and nulls where numbers are due are refused, in queries,
// documents and nested objects; the exact forms are accepted.
func TestExactKeys(t *testing.T) {
	for _, c := range []struct {
		name, query string
		typ         string // "" = accepted
		loc         string
	}{
		{"exact", `{"text":"a","top_k":5}`, "", ""},
		{"case variant", `{"Text":"a"}`, ErrTypeUnknownField, "[query Text]"},
		{"case variant hides a zero", `{"text":"a","top_k":5,"TOP_K":0}`, ErrTypeUnknownField, "[query TOP_K]"},
		{"duplicate", `{"text":"a","top_k":5,"top_k":0}`, ErrTypeDuplicate, "[query top_k]"},
		{"nested case variant", `{"text":"a","scope":{"Namespace":"x/"}}`, ErrTypeUnknownField, "[query scope Namespace]"},
		{"nested exact", `{"text":"a","scope":{"namespace":"x/"}}`, "", ""},
		{"null in vector", `{"vector":[1,null,3]}`, ErrTypeJSONType, "[query vector 1]"},
		{"null number", `{"text":"a","top_k":null}`, ErrTypeJSONType, "[query top_k]"},
		{"null pointer number", `{"text":"a","budget_ms":null}`, "", ""},
		{"escaped key", `{"te\u0078t":"a"}`, "", ""},
		{"escaped case variant", `{"T\u0065xt":"a"}`, ErrTypeUnknownField, "[query Text]"},
	} {
		_, err := DecodeQuery([]byte(c.query))
		if c.typ == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Errors[0].ErrorType != c.typ || fmtLoc(ve.Errors[0].Loc) != c.loc {
			t.Errorf("%s: %s: got %v", c.name, c.query, err)
		}
	}
	for _, c := range []struct {
		name, docs, typ, loc string
	}{
		{"document case variant", `[{"id":"a","Content":"x","trust":"authoritative"}]`, ErrTypeUnknownField, "[documents 0 Content]"},
		{"document null in vector", `[{"id":"a","content":"x","vector":[0.5,null],"trust":"authoritative"}]`, ErrTypeJSONType, "[documents 0 vector 1]"},
		{"document duplicate metadata key", `[{"id":"a","content":"x","metadata":{"k":1,"k":2},"trust":"authoritative"}]`, ErrTypeDuplicate, "[documents 0 metadata k]"},
		{"duplicate in a large object", `[{"id":"a","content":"x","metadata":{` + manyKeys(40) + `,"k07":true},"trust":"authoritative"}]`, ErrTypeDuplicate, "[documents 0 metadata k07]"},
	} {
		_, err := DecodeDocuments([]byte(c.docs))
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Errors[0].ErrorType != c.typ || fmtLoc(ve.Errors[0].Loc) != c.loc {
			t.Errorf("%s: got %v", c.name, err)
		}
	}
	if _, err := DecodeDocuments([]byte(`[{"id":"a","content":"x","vector":[0.5,1],"metadata":{"k":1,"K":2},"trust":"authoritative"}]`)); err != nil {
		t.Errorf("metadata keys differing in case are distinct keys: %v", err)
	}
}

// manyKeys is `"k00":0,"k01":1,…` with n keys.
func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%02d":%d`, i, i)
	}
	return b.String()
}

func fmtLoc(loc []any) string {
	b, _ := json.Marshal(loc)
	return strings.NewReplacer(`"`, "", ",", " ").Replace(string(b))
}

// FuzzCheckKeys: checkKeys never panics or loops on any input, and on a
// query it accepts after a successful decode, the keys are exactly the
// wire type's (a reference built on encoding/json's generic decoding).
func FuzzCheckKeys(f *testing.F) {
	for _, s := range []string{`{"text":"a","top_k":5}`, `{"Text":"a"}`, `{"vector":[1,null]}`, `{"a":{"b":[1,{"c":null}]}}`,
		`[1,2`, `{"x"`, `{"a":}`, `[}`, `{"te\u0078t":"b"}`, `"\`, `{,}`} {
		f.Add([]byte(s))
	}
	fields := fieldsOf(reflect.TypeFor[queryWire]())
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = checkKeys(data, reflect.TypeFor[*queryWire]())
		_ = checkKeys(data, reflect.TypeFor[*[]documentWire]())
		_ = checkKeys(data, nil)
		var w queryWire
		if strictUnmarshal(data, &w) != nil {
			return
		}
		var generic map[string]json.RawMessage
		if err := json.Unmarshal(data, &generic); err != nil {
			return
		}
		for k := range generic {
			if _, ok := fields[k]; !ok {
				t.Fatalf("accepted key %q not in the schema: %s", k, data)
			}
		}
	})
}

// FuzzSplitArray: splitArray cuts a valid JSON array into exactly the
// elements encoding/json finds, and refuses what is not an array.
func FuzzSplitArray(f *testing.F) {
	for _, s := range []string{`[]`, `[1, "a,b", {"x":[1,2]}, null ]`, ` [ [] , {} ] `, `{}`, `[1,`, `"x"`, `[ "\"]" ]`, `null`, ` null `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := splitArray(data)
		var ref []json.RawMessage
		refErr := json.Unmarshal(data, &ref)
		if refErr == nil && ref == nil {
			refErr = errors.New("null") // DecodeDocuments decodes null the old way
		}
		if ok != (refErr == nil) {
			t.Fatalf("%q: split ok=%v, encoding/json %v", data, ok, refErr)
		}
		if !ok {
			return
		}
		if len(got) != len(ref) {
			t.Fatalf("%q: %d elements, want %d", data, len(got), len(ref))
		}
		for i := range got {
			if string(got[i]) != string(ref[i]) {
				t.Fatalf("%q: element %d %q, want %q", data, i, got[i], ref[i])
			}
		}
	})
}
