package server

import (
	"encoding/json"
	"reflect"
	"time"

	"errors"
	"fmt"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/memory"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/tier"
)

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7700": true, "127.8.9.1:1": true, "[::1]:7700": true, "localhost:7700": true,
		"0.0.0.0:7700": false, ":7700": false, "10.0.0.1:80": false, "[::]:7700": false, "example.com:80": false, "junk": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	o := Options{MaxBodyBytes: -1, RequestTimeout: -1, MaxConcurrency: -1, IdempotencyTTL: -1, ShutdownTimeout: -1,
		JobHistory: -1, IndexRoots: []string{"rel", "/a/../b"}, APIKeys: []APIKey{{}}}
	o.EnsureDefaults()
	err := o.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"DataDir", "MaxBodyBytes", "RequestTimeout", "MaxConcurrency", "IdempotencyTTL",
		"ShutdownTimeout", "JobHistory", `"rel"`, `"/a/../b"`, "api key 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %s: %v", want, err)
		}
	}
	good := Options{DataDir: "x"}
	good.EnsureDefaults()
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestErrorMapping(t *testing.T) {
	s := &Server{o: Options{Logger: quietLogger()}}
	for _, tc := range []struct {
		err  error
		code int
	}{
		{fmt.Errorf("x: %w", tier.ErrReadOnly), 503},
		{engine.ErrClosed, 503},
		{fmt.Errorf("x: %w", engine.ErrConflict), 412},
		{engine.ErrNotFound, 404},
		{engine.ErrExists, 409},
		{&RequestError{Field: "path", Message: "no"}, 400},
		{errors.New("boom"), 500},
	} {
		if got := s.mapErr(tc.err); got.code != tc.code || len(got.body()) == 0 {
			t.Errorf("%v → %d, want %d", tc.err, got.code, tc.code)
		}
	}
}

// TestHealthzUnavailable: a store that cannot serve (here: closed) makes
// /healthz answer 503 with the reason, and writes 503.
func TestHealthzUnavailable(t *testing.T) {
	dir := t.TempDir()
	db, err := engine.Open(dir, engine.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateCollection("docs", engine.CollectionOptions{Dim: 4}); err != nil {
		t.Fatal(err)
	}
	s, err := New(db, Options{DataDir: dir, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s)
	defer ts.Close()
	c := newClient(t, ts.URL)
	c.must(http.StatusOK, "GET", "/healthz", nil, nil)
	// Keep a handle: after Close the DB forgets its collections.
	db.Close()
	code, _, b := c.do("GET", "/healthz", nil)
	if code != http.StatusServiceUnavailable || checkErrShape(t, b).Status != StatusUnavailable {
		t.Fatalf("healthz on a closed store: %d %s", code, b)
	}
}

// TestOpenAPISchemasMatchTypes: the spec's closed schemas list exactly the
// JSON fields of the Go types the handlers decode, so engine options or
// contract fields added later cannot drift silently.
func TestOpenAPISchemasMatchTypes(t *testing.T) {
	var spec struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(OpenAPISpec(), &spec); err != nil {
		t.Fatal(err)
	}
	for name, typ := range map[string]reflect.Type{
		"CollectionOptions":       reflect.TypeFor[engine.CollectionOptions](),
		"CreateCollectionRequest": reflect.TypeFor[CreateCollectionRequest](),
		"UpsertRequest":           reflect.TypeFor[UpsertRequest](),
		"DeleteRequest":           reflect.TypeFor[DeleteRequest](),
		"JobRequest":              reflect.TypeFor[JobRequest](),
		"Document":                reflect.TypeFor[contract.Document](),
		"Envelope":                reflect.TypeFor[contract.Envelope](),
		"Result":                  reflect.TypeFor[contract.Result](),
		"Job":                     reflect.TypeFor[JobView](),
		"MemoryWrite":             reflect.TypeFor[memory.Write](),
		"RememberRequest":         reflect.TypeFor[RememberRequest](),
		"RememberResponse":        reflect.TypeFor[RememberResponse](),
		"MemoryOutcome":           reflect.TypeFor[memory.Outcome](),
		"MemoryRecord":            reflect.TypeFor[memory.Record](),
		"MemoryState":             reflect.TypeFor[memory.State](),
		"MemoryQuery":             reflect.TypeFor[memory.Query](),
		"MemoryHit":               reflect.TypeFor[memory.Hit](),
		"MemoryResult":            reflect.TypeFor[memory.Result](),
		"ForgetRequest":           reflect.TypeFor[ForgetRequest](),
		"RollbackRequest":         reflect.TypeFor[RollbackRequest](),
		"RollbackReport":          reflect.TypeFor[memory.RollbackReport](),
		"ConsolidateRequest":      reflect.TypeFor[ConsolidateRequest](),
		"ConsolidateReport":       reflect.TypeFor[memory.ConsolidateReport](),
		"PurgeReport":             reflect.TypeFor[memory.PurgeReport](),
		"HistoryResponse":         reflect.TypeFor[HistoryResponse](),
	} {
		want := map[string]bool{}
		for i := 0; i < typ.NumField(); i++ {
			tag := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]
			if tag != "" && tag != "-" {
				want[tag] = true
			}
		}
		got := spec.Components.Schemas[name].Properties
		for f := range want {
			if _, ok := got[f]; !ok {
				t.Errorf("schema %s lacks field %q", name, f)
			}
		}
		for f := range got {
			if !want[f] {
				t.Errorf("schema %s has field %q the Go type lacks", name, f)
			}
		}
	}
	// Query's JSON form is hand-written in package contract: fill every
	// field (reflection, so new fields are covered) and compare the keys
	// its MarshalJSON emits with the schema.
	var q contract.Query
	qv := reflect.ValueOf(&q).Elem()
	for i := 0; i < qv.NumField(); i++ {
		f := qv.Field(i)
		switch {
		case f.Type() == reflect.TypeFor[*contract.Filter]():
			f.Set(reflect.ValueOf(ptr(contract.Exists("x"))))
		case f.Type() == reflect.TypeFor[*contract.Principal]():
		case f.Type() == reflect.TypeFor[*contract.LexicalStats]():
			f.Set(reflect.ValueOf(&contract.LexicalStats{Docs: 1}))
		case f.Kind() == reflect.String:
			f.SetString("x")
		case f.Kind() == reflect.Int || f.Kind() == reflect.Int64:
			f.SetInt(int64(time.Second))
		case f.Kind() == reflect.Float64:
			f.SetFloat(0.5)
		case f.Kind() == reflect.Bool:
			f.SetBool(true)
		case f.Kind() == reflect.Slice:
			e := reflect.New(f.Type().Elem()).Elem()
			switch e.Kind() {
			case reflect.String:
				e.SetString("hot")
			case reflect.Struct: // contract.WeightedTerm
				e.Set(reflect.ValueOf(contract.WeightedTerm{Term: "x", Weight: 0.5}))
			default:
				e.SetFloat(1)
			}
			f.Set(reflect.Append(f, e))
		case f.Kind() == reflect.Struct:
			for j := 0; j < f.NumField(); j++ {
				if f.Field(j).Kind() == reflect.String {
					f.Field(j).SetString("x")
					break
				}
			}
		default:
			t.Fatalf("Query field %s: kind %s not handled by this test", qv.Type().Field(i).Name, f.Kind())
		}
	}
	b, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	json.Unmarshal(b, &keys)
	got := spec.Components.Schemas["Query"].Properties
	for k := range keys {
		if _, ok := got[k]; !ok {
			t.Errorf("schema Query lacks field %q", k)
		}
	}
	for k := range got {
		if _, ok := keys[k]; !ok {
			t.Errorf("schema Query has field %q the JSON form lacks", k)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestPathIDInvalidUTF8(t *testing.T) {
	rs := start(t, t.TempDir(), nil)
	c := newClient(t, rs.url)
	createDocs(c, "docs", 4)
	for _, m := range []string{"GET", "DELETE"} {
		code, _, b := c.do(m, "/v1/collections/docs/documents/a%FFb", nil)
		if code != http.StatusBadRequest || checkErrShape(t, b).Status != StatusValidation {
			t.Fatalf("%s invalid UTF-8 id: %d %s", m, code, b)
		}
	}
	if e := epochOf(t, c, "docs"); e != 0 {
		t.Fatalf("epoch %d", e)
	}
}
