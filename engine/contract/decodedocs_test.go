package contract

import (
	"encoding/json"
	"errors"
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

// FuzzEachDocument: EachDocument hands over, in order, exactly the
// documents that json.Unmarshal of the array into its elements, then
// strictUnmarshal of each element, gives (the reference), and fails where the reference fails: on an
// input that is not an array before any document, on an element that
// does not decode after the ones before it, with that element's index.
func FuzzEachDocument(f *testing.F) {
	for _, s := range []string{
		`[]`, `null`, ` [ {"id":"a","trust":"derived"} , {"id":"b","trust":"derived","vector":[1,2]} ] `,
		`[{"id":"a","trust":"derived"},{"id":"b","owner":1}]`, `[{"id":"a","trust":"derived"},7]`, `{}`, `[1,`,
		`[{"id":"a","trust":"derived","metadata":{"k":1,"k":2}}]`, `"x"`, `[null]`,
		`[{"id":"a","vector":[1,2,3]},{"id":"b"},{"id":"c","vector":[]},{"id":"d","vector":[4]},{"id":"e","vector":null},{"id":"f","vector":[1,2,3,4,5]}]`,
		`[{"id":"a","vector":[1,2,3]},{"id":"b","vector":[1,null]}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		var got []Document
		err := EachDocument(data, func(i int, d *Document) error {
			if i != len(got) {
				t.Fatalf("%s: index %d after %d documents", s, i, len(got))
			}
			got = append(got, *d)
			return nil
		})
		// EachDocumentReusing hands over the same documents and error,
		// each vector (copied here) in one reused buffer.
		var reused []Document
		rerr2 := EachDocumentReusing(data, func(i int, d *Document) error {
			dd := *d
			if d.Vector != nil {
				dd.Vector = append([]float32{}, d.Vector...)
			}
			reused = append(reused, dd)
			return nil
		})
		if fmt.Sprint(rerr2) != fmt.Sprint(err) || !reflect.DeepEqual(reused, got) {
			t.Fatalf("%s: EachDocumentReusing %+v %v, EachDocument %+v %v", s, reused, rerr2, got, err)
		}
		var raws []json.RawMessage
		if rerr := json.Unmarshal(data, &raws); rerr != nil {
			if err == nil || len(got) != 0 {
				t.Fatalf("%s: reference refuses the array (%v); EachDocument: %d documents, %v", s, rerr, len(got), err)
			}
			return
		}
		var want []Document
		bad := -1
		for i, raw := range raws {
			var d Document
			if strictUnmarshal(raw, &d) != nil {
				bad = i
				break
			}
			want = append(want, d)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: EachDocument %+v, reference %+v", s, got, want)
		}
		var ve *ValidationError
		switch {
		case bad < 0 && err != nil:
			t.Fatalf("%s: %v, reference decodes", s, err)
		case bad >= 0 && (err == nil || !errors.As(err, &ve) || len(ve.Errors) == 0 || len(ve.Errors[0].Loc) < 2 || ve.Errors[0].Loc[1] != bad):
			t.Fatalf("%s: %v, reference fails at element %d", s, err, bad)
		}
	})
}
