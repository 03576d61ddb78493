package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestQueryJSONRoundTrip(t *testing.T) {
	q := Query{
		Text: "open file", Vector: []float32{0.5, -1, 3.25}, Scope: Scope{Namespace: "t/", URIPrefix: "file:///r/"},
		Freshness: 90 * time.Second, TopK: 7, Budget: 25 * time.Millisecond,
		Filter: &Filter{Op: OpAnd, Children: []Filter{
			Eq("lang", String("go")), Not(Exists("generated")), In("n", Number(1), Bool(true)),
			Range("lines", nil, F(10), F(500), nil), Prefix("path", "src/"),
			Or(Eq("x", Number(2.5))),
		}},
		Mode: Hybrid, Tiers: []Tier{Hot, Cold},
		Fusion:   FusionParams{Method: "minmax", K: 30, Weights: map[string]float64{"lexical": 0.3, "dense": 0.7}, Window: 50},
		MinScore: 0.25, TokenBudget: 4000, MaxTokensPerHit: 800, Verify: true,
		Principal: &Principal{Name: "never-encoded"},
	}
	b, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "never-encoded") || strings.Contains(string(b), "rincipal") {
		t.Errorf("principal leaked into JSON: %s", b)
	}
	for _, key := range []string{`"budget_ms":25`, `"freshness_ms":90000`, `"top_k":7`, `"min_score":0.25`, `"uri_prefix":"file:///r/"`,
		`{"not":{"exists":"generated"}}`, `{"range":{"field":"lines","gte":10,"lt":500}}`, `"max_tokens_per_hit":800`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON lacks %s: %s", key, b)
		}
	}
	got, err := DecodeQuery(b)
	if err != nil {
		t.Fatal(err)
	}
	want := q
	want.Principal = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\ngot  %+v\nwant %+v", got, want)
	}
	// Plain json.Unmarshal gives the same and is strict too.
	var q2 Query
	if err := json.Unmarshal(b, &q2); err != nil || !reflect.DeepEqual(q2, want) {
		t.Errorf("json.Unmarshal: %v", err)
	}
	// Empty query marshals to {}.
	if b, _ := json.Marshal(Query{}); string(b) != "{}" {
		t.Errorf("empty query JSON %s", b)
	}
}

func TestDocumentJSONRoundTrip(t *testing.T) {
	d := Document{ID: "a.go#1", Content: "package a\n", Vector: []float32{1, 2}, SourceURI: "file:///a.go#L1-L2",
		Metadata:  map[string]Value{"lang": String("go"), "lines": Number(2), "gen": Bool(false), "tags": Strings("x", "y"), "empty": Strings()},
		Namespace: "t/", Trust: ExternalUnverified, ACL: []string{"alice"}, VersionHash: h64,
		Timestamp: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	b, err := json.Marshal([]Document{d})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"trust":"external_unverified"`) || !strings.Contains(string(b), `"tags":["x","y"]`) {
		t.Errorf("JSON %s", b)
	}
	ds, err := DecodeDocuments(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || !reflect.DeepEqual(ds[0], d) {
		t.Errorf("round trip:\ngot  %+v\nwant %+v", ds, d)
	}
}

func TestEnvelopeResultJSON(t *testing.T) {
	r := Result{Hits: []Envelope{{DocID: "a", Content: "c", VersionHash: h64, Score: 0.5, Trust: Authoritative,
		Explain: Explain{LexicalRank: 1, DenseRank: 3, FusedScore: 0.032}}}, Partial: true, Reason: "budget", Epoch: 9,
		Dropped: []Dropped{{DocID: "b", Reason: DropStale}}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := Decode(bytes.NewReader(b), "result", &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Errorf("round trip %+v", back)
	}
	if !strings.Contains(string(b), `"explain":{"lexical_rank":1,"dense_rank":3,"fused_score":0.032}`) || !strings.Contains(string(b), `"partial":true`) {
		t.Errorf("JSON %s", b)
	}
}

func TestDecodeRejects(t *testing.T) {
	cases := []struct {
		in      string
		loc     string
		errType string
	}{
		{`{"text":"x","topk":3}`, "query.topk", ErrTypeUnknownField},
		{`{"text":"x","scope":{"namespace":"a","tenant":"b"}}`, "query.scope.tenant", ErrTypeUnknownField},
		{`{"text":"x","fusion":{"method":"rrf","alpha":1}}`, "query.fusion.alpha", ErrTypeUnknownField},
		{`{"text":"x","fusion":{"k":"60"}}`, "query.fusion.k", ErrTypeJSONType},
		{`{"text":"x","scope":[]}`, "query.scope", ErrTypeJSONType},
		{`{"text":"x","budget_ms":2.5}`, "query.budget_ms", ErrTypeJSONType},
		{`{"text":"x","budget_ms":"25"}`, "query.budget_ms", ErrTypeJSONType},
		{`{"text":"x","budget_ms":99999999999999999}`, "query.budget_ms", ErrTypeOutOfRange},
		{`{"text":"x","vector":[1,"a"]}`, "query.vector", ErrTypeJSONType},
		{`{"text":"x","vector":[1e39]}`, "query.vector", ErrTypeJSONType},
		{`{"text":"x","top_k":`, "query", ErrTypeJSONInvalid},
		{`{"text":"x"} {}`, "query", ErrTypeJSONInvalid},
		{`[]`, "query", ErrTypeJSONType},
		{`{"text":"x","filter":{"eq":{"field":"a","value":1},"or":[]}}`, "query.filter", ErrTypeInvalidFilter},
		{`{"text":"x","filter":{"eq":{"field":"a","value":1,"op":"x"}}}`, "query.filter.eq.op", ErrTypeUnknownField},
		{`{"text":"x","filter":{"and":[{"exists":3}]}}`, "query.filter.and[0].exists", ErrTypeJSONType},
		{`{"text":"x","filter":{"not":[]}}`, "query.filter.not", ErrTypeJSONType},
		{`{"text":"x","filter":{"range":{"field":"a","gt":"1"}}}`, "query.filter.range.gt", ErrTypeJSONType},
		{`{"text":"x","filter":{"in":{"field":"a","values":[{"x":1}]}}}`, "query.filter.in", ErrTypeJSONType},
		{`{"text":"x","filter":` + strings.Repeat(`{"not":`, 40) + `{"exists":"a"}` + strings.Repeat(`}`, 40) + `}`, "", ErrTypeInvalidFilter},
	}
	for _, tc := range cases {
		_, err := DecodeQuery([]byte(tc.in))
		var ve *ValidationError
		if !errors.As(err, &ve) || len(ve.Errors) != 1 {
			t.Errorf("%s: err %v", tc.in, err)
			continue
		}
		fe := ve.Errors[0]
		if (tc.loc != "" && locString(fe.Loc) != tc.loc) || fe.ErrorType != tc.errType {
			t.Errorf("%s: got %s %s (%s), want %s %s", tc.in, locString(fe.Loc), fe.ErrorType, fe.Message, tc.loc, tc.errType)
		}
		if _, err := json.Marshal(ve); err != nil {
			t.Errorf("%s: error does not marshal: %v", tc.in, err)
		}
	}
	// Documents: unknown fields and bad metadata values.
	for _, in := range []string{
		`[{"id":"a","trust":"derived","owner":"x"}]`,
		`[{"id":"a","trust":"derived","metadata":{"k":{"nested":1}}}]`,
		`[{"id":"a","trust":"derived","metadata":{"k":null}}]`,
		`[{"id":"a","trust":"derived","metadata":{"k":[1,2]}}]`,
	} {
		if _, err := DecodeDocuments([]byte(in)); err == nil {
			t.Errorf("accepted %s", in)
		}
	}
	_, err := DecodeDocuments([]byte(`[{"id":"a","trust":"derived"},{"id":"b","trust":"derived","metadata":{"k":{}}}]`))
	if got := locs(t, err); len(got) != 1 || got[0] != "documents[1].metadata.k:json_type" {
		t.Errorf("batch decode loc %v", got)
	}
	_, err = DecodeDocuments([]byte(`[{"id":"a","trust":"derived"},{"id":"b","trust":"derived","owner":1}]`))
	if got := locs(t, err); len(got) != 1 || got[0] != "documents[1].owner:unknown_field" {
		t.Errorf("batch decode loc %v", got)
	}
	var d Document
	if err := json.Unmarshal([]byte(`{"id":"a","trust":"derived","extra":1}`), &d); err == nil {
		t.Error("json.Unmarshal accepted an unknown document field")
	}
}

// Unknown enum values decode, so Validate reports them with everything else.
func TestDecodeThenValidateCollectsAll(t *testing.T) {
	q, err := DecodeQuery([]byte(`{"mode":"fuzzy","tiers":["cold","frozen"],"top_k":0,"min_score":2,"budget_ms":-5,
		"filter":{"and":[{"regex":{"field":"a"}},{"eq":{"field":"a","value":null}},{"range":{"field":"n","gt":5,"lte":1}},{"or":[]}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := locs(t, q.Validate(0, ValidateOptions{}))
	want := []string{"query.budget_ms:out_of_range", "query.mode:unknown_value", "query.tiers[1]:unknown_value",
		"query.min_score:out_of_range", "query.filter.and[0]:unknown_filter_op", "query.filter.and[1].eq.value:invalid_filter", "query.filter.and[2].range:empty_range",
		"query.filter.and[3].or:invalid_filter"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

var fuzzQuerySeeds = []string{
	`{}`,
	`{"text":"x","vector":[1,2,3],"top_k":5,"budget_ms":25,"freshness_ms":1000,"mode":"hybrid","tiers":["hot"],"min_score":0.1}`,
	`{"text":"x","filter":{"and":[{"eq":{"field":"lang","value":"go"}},{"not":{"exists":"generated"}}]}}`,
	`{"filter":{"or":[{"in":{"field":"a","values":[1,"b",true]}},{"range":{"field":"n","gte":1,"lt":2}},{"prefix":{"field":"p","value":"s"}}]}}`,
	`{"fusion":{"method":"rrf","k":60,"weights":{"lexical":1,"dense":2},"window":10}}`,
	`{"text":"\u0000\ud800","scope":{"namespace":"a/","uri_prefix":"file://"}}`,
	`{"filter":{"not":{"not":{"not":{"exists":""}}}}}`,
	`{"budget_ms":-1e3}`, `[`, `{"filter":{}}`, `{"filter":{"x":1}}`,
}

// FuzzDecodeQuery: the query decoder never panics; what it accepts
// re-encodes and decodes to the same query; Validate never panics and its
// error always marshals.
func FuzzDecodeQuery(f *testing.F) {
	for _, s := range fuzzQuerySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := DecodeQuery(data)
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Errors) == 0 {
				t.Fatalf("decode error %T %v", err, err)
			}
			if _, err := json.Marshal(ve); err != nil {
				t.Fatalf("error does not marshal: %v", err)
			}
			return
		}
		verr := q.Validate(3, ValidateOptions{MultiTenant: len(data)%2 == 0})
		if verr != nil {
			if _, err := json.Marshal(verr); err != nil {
				t.Fatalf("validation error does not marshal: %v", err)
			}
		}
		if q.Filter != nil {
			_ = q.Filter.Match(map[string]Value{"a": String("b"), "n": Number(1)})
		}
		if verr != nil {
			return
		}
		b, err := json.Marshal(q)
		if err != nil {
			t.Fatalf("valid query does not marshal: %v", err)
		}
		q2, err := DecodeQuery(b)
		if err != nil {
			t.Fatalf("re-decode %s: %v", b, err)
		}
		b2, _ := json.Marshal(q2)
		if !bytes.Equal(b, b2) {
			t.Fatalf("not stable:\n%s\n%s", b, b2)
		}
	})
}

// FuzzFilterJSON: the filter decoder never panics and decoded filters
// validate and evaluate without panics.
func FuzzFilterJSON(f *testing.F) {
	for _, s := range []string{`{"eq":{"field":"a","value":"b"}}`, `{"and":[{"exists":"a"},{"not":{"in":{"field":"n","values":[1,2]}}}]}`,
		`{"range":{"field":"n","gt":1,"lte":3}}`, `{"or":[]}`, `{"prefix":{"field":"p","value":""}}`, `{"unknown":[]}`, `null`, `{"not":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fl Filter
		if err := Decode(bytes.NewReader(data), "filter", &fl); err != nil {
			return
		}
		_ = fl.Validate()
		_ = fl.Match(map[string]Value{"a": String("b"), "n": Number(2), "l": Strings("x")})
		if _, err := json.Marshal(fl); err != nil && fl.Validate() == nil {
			t.Fatalf("valid filter does not marshal: %v", err)
		}
	})
}
