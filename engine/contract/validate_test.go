package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// locs returns "loc:error_type" strings of a validation error.
func locs(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v is %T, not *ValidationError", err, err)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("errors.Is(err, ErrInvalid) = false")
	}
	out := make([]string, len(ve.Errors))
	for i, fe := range ve.Errors {
		out[i] = locString(fe.Loc) + ":" + fe.ErrorType
	}
	return out
}

func nan32() float32 { return float32(math.NaN()) }

func TestQueryValidate(t *testing.T) {
	okVec := []float32{1, 0, 0, 0}
	alice := &Principal{Name: "alice", Namespaces: []string{"tenant-a/"}}
	cases := []struct {
		name string
		q    Query
		dim  int
		opts ValidateOptions
		want []string
	}{
		{"text only", Query{Text: "hello"}, 4, ValidateOptions{}, nil},
		{"vector only", Query{Vector: okVec}, 4, ValidateOptions{}, nil},
		{"hybrid full", Query{Text: "x", Vector: okVec, Mode: Hybrid, TopK: 1000, Budget: time.Second,
			Tiers: []Tier{Hot, Warm, Cold}, MinScore: 1, Fusion: FusionParams{Method: "zscore", K: 10, Weights: map[string]float64{"lexical": 0, "dense": 2}}}, 4, ValidateOptions{}, nil},
		{"dense with text only is fine (embedder)", Query{Text: "x", Mode: Dense}, 4, ValidateOptions{}, nil},
		{"dim 0 skips dimension", Query{Vector: []float32{1, 2}}, 0, ValidateOptions{}, nil},
		{"empty", Query{}, 4, ValidateOptions{}, []string{"query:missing"}},
		{"blank text", Query{Text: "  \n"}, 4, ValidateOptions{}, []string{"query:missing"}},
		{"lexical without text", Query{Vector: okVec, Mode: Lexical}, 4, ValidateOptions{}, []string{"query.text:missing"}},
		{"hybrid with nothing", Query{Mode: Hybrid}, 4, ValidateOptions{}, []string{"query:missing"}},
		{"unknown mode", Query{Text: "x", Mode: "semantic"}, 4, ValidateOptions{}, []string{"query.mode:unknown_value"}},
		{"NaN and Inf components", Query{Vector: []float32{1, nan32(), 0, float32(math.Inf(-1))}}, 4, ValidateOptions{},
			[]string{"query.vector[1]:not_finite", "query.vector[3]:not_finite"}},
		{"wrong dimension", Query{Vector: []float32{1, 2, 3}}, 4, ValidateOptions{}, []string{"query.vector:dimension_mismatch"}},
		{"negative budget and freshness", Query{Text: "x", Budget: -time.Millisecond, Freshness: -time.Second}, 0, ValidateOptions{},
			[]string{"query.budget_ms:out_of_range", "query.freshness_ms:out_of_range"}},
		{"top_k too big", Query{Text: "x", TopK: 1001}, 0, ValidateOptions{}, []string{"query.top_k:out_of_range"}},
		{"top_k negative", Query{Text: "x", TopK: -1}, 0, ValidateOptions{}, []string{"query.top_k:out_of_range"}},
		{"tiers", Query{Text: "x", Tiers: []Tier{Hot, "lukewarm", Hot}}, 0, ValidateOptions{},
			[]string{"query.tiers[1]:unknown_value", "query.tiers[2]:duplicate"}},
		{"fusion", Query{Text: "x", Fusion: FusionParams{Method: "borda", K: -1, Window: -5, Weights: map[string]float64{"sparse": 1, "dense": math.NaN()}}}, 0, ValidateOptions{},
			[]string{"query.fusion.method:unknown_value", "query.fusion.k:out_of_range", "query.fusion.window:out_of_range",
				"query.fusion.weights.dense:out_of_range", "query.fusion.weights.sparse:unknown_value"}},
		{"zero weights", Query{Text: "x", Fusion: FusionParams{Weights: map[string]float64{"lexical": 0, "dense": 0}}}, 0, ValidateOptions{},
			[]string{"query.fusion.weights:out_of_range"}},
		{"min_score", Query{Text: "x", MinScore: 1.5}, 0, ValidateOptions{}, []string{"query.min_score:out_of_range"}},
		{"min_score NaN", Query{Text: "x", MinScore: math.NaN()}, 0, ValidateOptions{}, []string{"query.min_score:out_of_range"}},
		{"token budgets", Query{Text: "x", TokenBudget: -1, MaxTokensPerHit: -2}, 0, ValidateOptions{},
			[]string{"query.token_budget:out_of_range", "query.max_tokens_per_hit:out_of_range"}},
		{"multi-tenant needs namespace", Query{Text: "x"}, 0, ValidateOptions{MultiTenant: true},
			[]string{"query.scope.namespace:namespace_required"}},
		{"principal allowed", Query{Text: "x", Scope: Scope{Namespace: "tenant-a/repo/"}, Principal: alice}, 0, ValidateOptions{MultiTenant: true}, nil},
		{"principal forbidden", Query{Text: "x", Scope: Scope{Namespace: "tenant-b/"}, Principal: alice}, 0, ValidateOptions{MultiTenant: true},
			[]string{"query.scope.namespace:namespace_forbidden"}},
		{"invalid UTF-8 text", Query{Text: "a\xffb"}, 0, ValidateOptions{}, []string{"query.text:invalid_utf8"}},
		{"bad filter", Query{Text: "x", Filter: &Filter{Op: OpAnd}}, 0, ValidateOptions{}, []string{"query.filter.and:invalid_filter"}},
		{"everything at once", Query{
			Vector: []float32{nan32(), 1, 2}, Mode: "fuzzy", TopK: 0, Budget: -1, Freshness: -1,
			Tiers: []Tier{"ice"}, Fusion: FusionParams{Method: "x"}, MinScore: -0.1,
			Filter: &Filter{Op: "regex"}, Principal: alice, Scope: Scope{Namespace: "tenant-z/"},
		}, 4, ValidateOptions{MultiTenant: true}, []string{
			"query.vector:dimension_mismatch", "query.vector[0]:not_finite",
			"query.budget_ms:out_of_range", "query.freshness_ms:out_of_range",
			"query.mode:unknown_value", "query.tiers[0]:unknown_value", "query.fusion.method:unknown_value",
			"query.min_score:out_of_range", "query.filter:unknown_filter_op",
			"query.scope.namespace:namespace_forbidden",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.q
			got := locs(t, q.Validate(tc.dim, tc.opts))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
			if fmt.Sprintf("%+v", q) != fmt.Sprintf("%+v", tc.q) { // %v: NaN-safe
				t.Errorf("Validate modified the query")
			}
		})
	}
}

func TestValidationErrorJSONGolden(t *testing.T) {
	q := Query{Vector: []float32{1, 2, 3, nan32()}, TopK: 5000, Mode: "fuzzy"}
	err := q.Validate(3, ValidateOptions{})
	b, jerr := json.Marshal(err)
	if jerr != nil {
		t.Fatal(jerr)
	}
	const want = `{"status":"validation_error","error_count":4,"errors":[` +
		`{"loc":["query","vector"],"input_value":4,"error_type":"dimension_mismatch","message":"vector has the wrong dimension","expected_domain":"float32[3]"},` +
		`{"loc":["query","vector",3],"input_value":"NaN","error_type":"not_finite","message":"vector component is not finite","expected_domain":"finite float32"},` +
		`{"loc":["query","top_k"],"input_value":5000,"error_type":"out_of_range","message":"top_k out of range","expected_domain":"integer 1..1000 (omitted = 10)"},` +
		`{"loc":["query","mode"],"input_value":"fuzzy","error_type":"unknown_value","message":"unknown mode \"fuzzy\"","expected_domain":"lexical | dense | hybrid"}]}`
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	// The shape: exactly these keys, at both levels.
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 3 || m["status"] != "validation_error" || m["error_count"] != float64(4) {
		t.Errorf("top level %v", m)
	}
	for _, e := range m["errors"].([]any) {
		keys := []string{}
		for k := range e.(map[string]any) {
			keys = append(keys, k)
		}
		if len(keys) != 5 {
			t.Errorf("error entry keys %v", keys)
		}
	}
	if !strings.HasPrefix(err.Error(), "contract: 4 validation errors: query.vector: ") {
		t.Errorf("Error() = %q", err.Error())
	}
}

func TestEnsureDefaults(t *testing.T) {
	cases := []struct {
		q    Query
		mode Mode
	}{
		{Query{Text: "a", Vector: []float32{1}}, Hybrid},
		{Query{Text: "a"}, Lexical},
		{Query{Vector: []float32{1}}, Dense},
		{Query{Text: "a", Vector: []float32{1}, Mode: Lexical}, Lexical},
	}
	for _, tc := range cases {
		q := tc.q
		q.EnsureDefaults()
		if q.Mode != tc.mode || q.TopK != 10 || !reflect.DeepEqual(q.Tiers, []Tier{Hot, Warm}) ||
			q.Fusion.Method != "rrf" || q.Fusion.K != 60 {
			t.Errorf("%+v → %+v", tc.q, q)
		}
		if err := q.Validate(0, ValidateOptions{}); err != nil {
			t.Errorf("defaults do not validate: %v", err)
		}
		if q.HasTier(Cold) || !q.HasTier(Hot) {
			t.Errorf("tiers %v", q.Tiers)
		}
	}
	q := Query{TopK: 3, Tiers: []Tier{Cold}}
	q.EnsureDefaults()
	if q.TopK != 3 || !q.HasTier(Cold) || q.HasTier(Hot) {
		t.Errorf("explicit values overwritten: %+v", q)
	}
}

const h64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestDocumentValidate(t *testing.T) {
	good := Document{ID: "a", Content: "x", Vector: []float32{1, 2}, Trust: Derived, VersionHash: h64,
		Metadata: map[string]Value{"lang": String("go"), "n": Number(3), "gen": Bool(false), "tags": Strings("a")}}
	if err := good.Validate(2, ValidateOptions{}); err != nil {
		t.Fatal(err)
	}
	bad := Document{ID: "", Trust: "trusted", Vector: []float32{float32(math.Inf(1))}, VersionHash: strings.ToUpper(h64),
		Metadata: map[string]Value{"n": Number(math.NaN()), "z": {}, "": String("x")}, ACL: []string{"bob", ""},
		Content: "\xff", SourceURI: "file:///\xfe"}
	got := locs(t, bad.Validate(2, ValidateOptions{MultiTenant: true}))
	want := []string{"document.id:missing", "document.trust:unknown_value", "document.vector:dimension_mismatch",
		"document.vector[0]:not_finite", "document.content:invalid_utf8", "document.source_uri:invalid_utf8",
		"document.metadata.:invalid_format", "document.metadata.n:not_finite", "document.metadata.z:missing",
		"document.namespace:namespace_required", "document.acl[1]:missing", "document.version_hash:invalid_format"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// Batch: per-index locs and duplicate ids.
	err := ValidateDocuments([]Document{good, {ID: "b", Trust: Authoritative}, good, {ID: "c"}}, 2, ValidateOptions{})
	got = locs(t, err)
	want = []string{"documents[2].id:duplicate", "documents[3].trust:unknown_value"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("batch got %q want %q", got, want)
	}
	// Writer principal.
	w := &Principal{Name: "w", Namespaces: []string{"tenant-a/"}}
	d := Document{ID: "x", Trust: Derived, Namespace: "tenant-b/"}
	if got := locs(t, d.Validate(0, ValidateOptions{Principal: w})); len(got) != 1 || got[0] != "document.namespace:namespace_forbidden" {
		t.Errorf("writer check %v", got)
	}
	d.Namespace = "tenant-a/r/"
	if err := d.Validate(0, ValidateOptions{Principal: w, MultiTenant: true}); err != nil {
		t.Error(err)
	}
	q := Query{Text: "x", Scope: Scope{Namespace: "tenant-b/"}}
	if got := locs(t, q.Validate(0, ValidateOptions{Principal: w})); len(got) != 1 || got[0] != "query.scope.namespace:namespace_forbidden" {
		t.Errorf("opts principal on query %v", got)
	}
	if (&Document{ID: strings.Repeat("x", MaxIDBytes+1), Trust: Derived}).Validate(0, ValidateOptions{}) == nil {
		t.Error("long id accepted")
	}
}

func TestPrincipal(t *testing.T) {
	p := &Principal{Name: "alice", Groups: []string{"eng"}, Namespaces: []string{"tenant-a/"}}
	cases := []struct {
		ns   string
		acl  []string
		want bool
	}{
		{"tenant-a/x/", nil, true},
		{"tenant-a/x/", []string{"bob"}, false},
		{"tenant-a/x/", []string{"bob", "alice"}, true},
		{"tenant-a/x/", []string{"eng"}, true},
		{"tenant-b/", nil, false},
		{"", nil, false},
	}
	for _, c := range cases {
		if got := p.CanRead(c.ns, c.acl); got != c.want {
			t.Errorf("CanRead(%q, %v) = %v", c.ns, c.acl, got)
		}
	}
	admin := &Principal{Name: "root", Namespaces: []string{"*"}}
	if !admin.AllowsNamespace("") || !admin.AllowsNamespace("anything/") {
		t.Error("* should allow all")
	}
	if (&Principal{}).AllowsNamespace("a/") {
		t.Error("no namespaces should allow none")
	}
}

// TestVectorNormBound: finite but huge vectors would give +Inf distances
// (and unencodable JSON), so they are rejected; the bound itself passes.
func TestVectorNormBound(t *testing.T) {
	ok := float32(math.Sqrt(MaxVectorNorm2 / 2))
	for _, tc := range []struct {
		v    []float32
		want bool
	}{
		{[]float32{3e38, -3e38}, false},
		{[]float32{1e19, 1e19}, false},
		{[]float32{ok, ok * 0.999}, true},
		{[]float32{1, 2}, true},
	} {
		d := Document{ID: "x", Content: "c", Vector: tc.v, Trust: Authoritative}
		err := d.Validate(2, ValidateOptions{})
		if (err == nil) != tc.want {
			t.Errorf("%v: err %v, want ok=%v", tc.v, err, tc.want)
		}
		if err != nil && !strings.Contains(err.Error(), ErrTypeVectorNorm) && !tc.want {
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Errors[0].ErrorType != ErrTypeVectorNorm {
				t.Errorf("%v: want error type %s, got %v", tc.v, ErrTypeVectorNorm, err)
			}
		}
		// The worst case between two accepted vectors stays finite.
		if tc.want {
			var s float32
			for i := range tc.v {
				d := tc.v[i] - (-tc.v[i])
				s += d * d
			}
			if math.IsInf(float64(s), 0) {
				t.Errorf("%v: L2 to its negation overflows", tc.v)
			}
		}
	}
	q := Query{Vector: []float32{3e38, 3e38}, TopK: 1}
	q.EnsureDefaults()
	if err := q.Validate(2, ValidateOptions{}); err == nil {
		t.Error("query with a huge vector accepted")
	}
}
