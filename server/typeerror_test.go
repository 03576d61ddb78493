package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestJSONTypeErrorsNameJSONTypes: a value of the wrong JSON type is a 400
// whose message and expected_domain speak JSON (string, integer, array of
// number, object), never the engine's Go types or encoding/json's text.
func TestJSONTypeErrorsNameJSONTypes(t *testing.T) {
	rs := start(t, t.TempDir(), nil, enableMemory)
	c := newClient(t, rs.url)
	c.must(http.StatusCreated, "POST", "/v1/collections", map[string]any{"name": "docs", "options": map[string]any{"dim": 4}}, nil)
	cases := []struct {
		path, body, domain string
	}{
		{"/v1/collections/docs/search", `{"text":7}`, "string"},
		{"/v1/collections/docs/search", `{"text":"x","top_k":"5"}`, "integer"},
		{"/v1/collections/docs/search", `{"vector":"abc"}`, ""},
		{"/v1/collections/docs/search", `{"vector":[1,"a",3,4]}`, ""},
		{"/v1/collections/docs/search", `{"text":"x","filter":{"eq":"lang"}}`, ""},
		{"/v1/collections/docs/expand", `{"query":"x"}`, "object"},
		{"/v1/collections/docs/documents", `{"documents":{"id":"a"}}`, "array"},
		{"/v1/collections/docs/documents", `{"documents":[{"id":5,"content":"x","trust":"derived"}]}`, "string"},
		{"/v1/memory/recall", `{"subject":"s","text":["a"]}`, "string"},
		{"/v1/memory/remember", `{"writes":[{"subject":"s","kind":"fact","content":"x","provenance":"p","valid_from":5}]}`, ""},
	}
	for _, tc := range cases {
		code, _, b := c.do("POST", tc.path, tc.body)
		if code != http.StatusBadRequest {
			t.Errorf("%s %s: status %d: %s", tc.path, tc.body, code, b)
			continue
		}
		e := checkErrShape(t, b)
		for _, fe := range e.Errors {
			for _, s := range []string{fe.Message, fe.ExpectedDomain} {
				for _, leak := range []string{"Go value", "Go struct", "contract.", "memory.", "server.", "Wire", "int64", "[]", "map["} {
					if strings.Contains(s, leak) {
						t.Errorf("%s %s: %q names a Go type (%q)", tc.path, tc.body, s, leak)
					}
				}
			}
			if tc.domain != "" && fe.ErrorType == "json_type" && fe.ExpectedDomain != tc.domain {
				t.Errorf("%s %s: expected_domain %q, want %q", tc.path, tc.body, fe.ExpectedDomain, tc.domain)
			}
		}
	}
}
