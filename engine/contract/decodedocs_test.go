package contract

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// FuzzDecodeDocumentElement: decoding one array element with
// Document.UnmarshalJSON directly (DecodeDocuments' path) gives the same
// document, or the same error, as strictUnmarshal of the element into a
// Document.
func FuzzDecodeDocumentElement(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","trust":"derived"}`, `null`, `{}`, `{"id":"a","trust":"derived","owner":1}`,
		`{"id":"a","ID":"b","trust":"derived"}`, `{"id":"a","trust":"derived","metadata":{"k":1,"k":2}}`,
		`{"id":"a","trust":"derived","metadata":{"k":{}}}`, `{"id":"a","trust":"derived","vector":[1,null]}`,
		`{"id":"a","trust":"derived","vector":[1,2],"metadata":{"t":["x","y"],"b":true,"s":"\u00e9"}}`,
		`{"id":7,"trust":"derived"}`, `{"id":"a","trust":"derived","timestamp":"2026-11-29T12:00:00Z"}`,
		`[]`, `"x"`, `1`, `{"id":"a","trust":"derived","acl":["a",1]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw := []byte(s)
		if !json.Valid(raw) {
			return // DecodeDocuments only hands valid elements over
		}
		var a, b Document
		ea := a.UnmarshalJSON(raw)
		eb := strictUnmarshal(raw, &b)
		if fmt.Sprint(ea) != fmt.Sprint(eb) {
			t.Fatalf("%s: direct error %v, strictUnmarshal error %v", s, ea, eb)
		}
		if ea == nil && !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: direct %+v, strictUnmarshal %+v", s, a, b)
		}
	})
}
