package contract

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestShapingFieldsJSON: cursor, collapse and highlight round-trip through
// the closed query schema; highlights and next_cursor through results.
func TestShapingFieldsJSON(t *testing.T) {
	q := Query{Text: "a", Cursor: "AbC-_9", Collapse: 2, Highlight: true}
	b, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"cursor":"AbC-_9"`, `"collapse":2`, `"highlight":true`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	got, err := DecodeQuery(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, q) {
		t.Errorf("round trip: %+v, want %+v", got, q)
	}
	r := Result{Hits: []Envelope{{DocID: "x", Highlights: []Span{{1, 3}, {5, 9}}}}, NextCursor: "c"}
	b, err = json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"highlights":[[1,3],[5,9]]`) || !strings.Contains(string(b), `"next_cursor":"c"`) {
		t.Errorf("result JSON %s", b)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.Hits[0].Highlights, r.Hits[0].Highlights) {
		t.Errorf("highlights round trip: %v %v", back.Hits, err)
	}
}

func TestShapingFieldsValidate(t *testing.T) {
	q := Query{Text: "a", Collapse: -1, Cursor: "not base64!"}
	err := q.Validate(0, ValidateOptions{})
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Errors) != 2 {
		t.Fatalf("err = %v, want 2 problems", err)
	}
	if ve.Errors[0].Loc[1] != "collapse" || ve.Errors[1].Loc[1] != "cursor" {
		t.Errorf("locs %v %v", ve.Errors[0].Loc, ve.Errors[1].Loc)
	}
	q = Query{Text: "a", Collapse: MaxTopK + 1, Cursor: strings.Repeat("A", MaxCursorBytes+1)}
	if err := q.Validate(0, ValidateOptions{}); err == nil || len(err.(*ValidationError).Errors) != 2 {
		t.Errorf("too large: %v", err)
	}
	q = Query{Text: "a", Collapse: 3, Cursor: "AbC-_9"}
	if err := q.Validate(0, ValidateOptions{}); err != nil {
		t.Errorf("valid: %v", err)
	}
}
