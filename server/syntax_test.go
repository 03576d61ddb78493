package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestSearchSyntaxField: over HTTP, the query text is plain text by
// default ("quick -fox" finds the fox document) and the operator syntax
// applies with "syntax": "operators" (-fox excludes it); an unknown
// syntax is a 400 validation error naming the field, and expansion terms
// are accepted.
func TestSearchSyntaxField(t *testing.T) {
	rs := start(t, t.TempDir(), nil)
	c := newClient(t, rs.url)
	createDocs(c, "docs", 4)
	c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(
		mkDoc("a", "the quick brown fox jumps", "", vec(1, 0, 0, 0)),
		mkDoc("b", "a quick lazy dog", "", vec(0, 1, 0, 0)),
	), nil)
	if got := searchIDs(t, c, "docs", map[string]any{"text": "quick -fox", "mode": "lexical"}); len(got) != 2 || got[0] != "a" {
		t.Errorf("text syntax: %v, want a first of 2", got)
	}
	if got := searchIDs(t, c, "docs", map[string]any{"text": "quick -fox", "mode": "lexical", "syntax": "operators"}); len(got) != 1 || got[0] != "b" {
		t.Errorf("operator syntax: %v, want b only", got)
	}
	code, _, b := c.do("POST", "/v1/collections/docs/search", map[string]any{"text": "quick", "syntax": "lucene"})
	if code != http.StatusBadRequest || !strings.Contains(string(b), `"syntax"`) {
		t.Errorf("unknown syntax: %d %s", code, b)
	}
	got := searchIDs(t, c, "docs", map[string]any{"text": "jumps", "mode": "lexical", "expansion": []map[string]any{{"term": "dog", "weight": 0.2}}})
	if len(got) != 2 || got[0] != "a" {
		t.Errorf("expansion: %v, want a, then b", got)
	}
}
