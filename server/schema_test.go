package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine/contract"
)

// TestSchemaGaps: each way a body or path slipped past the closed schema
// is a 400 in the error shape with the right error_type and loc, and
// changes nothing: JSON keys differing only in case (which
// encoding/json would match), a case variant hiding an explicit top_k 0,
// duplicate keys, null inside a vector or for a number, archive job
// params that cannot run, an unencoded ".." in a path (ServeMux would
// redirect with HTML), and an id that is not UTF-8 on DELETE.
func TestSchemaGaps(t *testing.T) {
	rs := start(t, t.TempDir(), nil)
	c := newClient(t, rs.url)
	createDocs(c, "docs", 4)
	c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("a", "alpha beta", "", vec(1, 0, 0, 0))), nil)
	before := epochOf(t, c, "docs")
	up, se := "/v1/collections/docs/documents", "/v1/collections/docs/search"
	for _, tc := range []struct {
		name, method, path, body string
		errType, loc             string
	}{
		{"query key case", "POST", se, `{"Text":"alpha"}`, contract.ErrTypeUnknownField, "[query Text]"},
		{"query key case hides top_k 0", "POST", se, `{"text":"alpha","top_k":5,"TOP_K":0}`, contract.ErrTypeUnknownField, "[query TOP_K]"},
		{"query duplicate key", "POST", se, `{"text":"alpha","top_k":5,"top_k":0}`, contract.ErrTypeDuplicate, "[query top_k]"},
		{"query nested key case", "POST", se, `{"text":"alpha","scope":{"NameSpace":"x/"}}`, contract.ErrTypeUnknownField, "[query scope NameSpace]"},
		{"query null in vector", "POST", se, `{"vector":[1,null,0,0]}`, contract.ErrTypeJSONType, "[query vector 1]"},
		{"query null top_k", "POST", se, `{"text":"alpha","top_k":null}`, contract.ErrTypeJSONType, "[query top_k]"},
		{"body key case", "POST", up, `{"Documents":[{"id":"x","content":"c","trust":"authoritative"}]}`, contract.ErrTypeUnknownField, "[body Documents]"},
		{"document key case", "POST", up, `{"documents":[{"id":"x","Content":"c","trust":"authoritative"}]}`, contract.ErrTypeUnknownField, "[documents 0 Content]"},
		{"document null in vector", "POST", up, `{"documents":[{"id":"x","content":"c","vector":[1,null,0,0],"trust":"authoritative"}]}`, contract.ErrTypeJSONType, "[documents 0 vector 1]"},
		{"delete key case", "POST", up + "/delete", `{"IDS":["a"]}`, contract.ErrTypeUnknownField, "[body IDS]"},
		{"collection options key case", "POST", "/v1/collections", `{"name":"y","options":{"Dim":4}}`, contract.ErrTypeUnknownField, ""},
		{"job key case", "POST", "/v1/jobs", `{"Kind":"flush","collection":"docs"}`, contract.ErrTypeUnknownField, "[body Kind]"},
		{"archive oldest -1", "POST", "/v1/jobs", `{"kind":"archive","collection":"docs","params":{"oldest":-1}}`, contract.ErrTypeOutOfRange, "[body params oldest]"},
		{"archive nlist -5", "POST", "/v1/jobs", `{"kind":"archive","collection":"docs","params":{"nlist":-5}}`, contract.ErrTypeOutOfRange, "[body params nlist]"},
		{"archive nlist too large", "POST", "/v1/jobs", `{"kind":"archive","collection":"docs","params":{"nlist":65537}}`, contract.ErrTypeOutOfRange, "[body params nlist]"},
		{"archive segment 0", "POST", "/v1/jobs", `{"kind":"archive","collection":"docs","params":{"segments":[3,0]}}`, contract.ErrTypeOutOfRange, "[body params segments 1]"},
		{"archive params key case", "POST", "/v1/jobs", `{"kind":"archive","collection":"docs","params":{"Oldest":1}}`, contract.ErrTypeUnknownField, "[params Oldest]"},
		{"delete invalid utf8 id", "DELETE", up + "/%FF%FE", ``, contract.ErrTypeInvalidUTF8, "[path id]"},
	} {
		var body any
		if tc.body != "" {
			body = []byte(tc.body)
		}
		code, h, b := c.do(tc.method, tc.path, body)
		if code != http.StatusBadRequest || h.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s: %s", tc.name, code, h.Get("Content-Type"), b)
			continue
		}
		e := checkErrShape(t, b)
		if e.Status != StatusValidation || e.Errors[0].ErrorType != tc.errType || (tc.loc != "" && fmt.Sprint(e.Errors[0].Loc) != tc.loc) {
			t.Errorf("%s: %s", tc.name, b)
		}
	}
	// The exact forms still work.
	c.must(http.StatusOK, "POST", se, map[string]any{"text": "alpha", "top_k": 5}, nil)
	c.must(http.StatusAccepted, "POST", "/v1/jobs", map[string]any{"kind": "archive", "collection": "docs", "params": map[string]any{"oldest": 0, "nlist": 0}}, nil)

	// Unencoded dot segments: a raw request line, as a client that does not
	// clean paths would send it.
	for _, p := range []string{"/v1/collections/docs/../docs", "/v1/collections/docs/documents/./a", "/v1//collections"} {
		conn, err := net.DialTimeout("tcp", strings.TrimPrefix(rs.url, "http://"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", p)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		conn.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("Location") != "" {
			t.Errorf("%s: %d %q Location %q: %s", p, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Location"), b)
			continue
		}
		if e := checkErrShape(t, b); e.Errors[0].ErrorType != contract.ErrTypeInvalidFormat || fmt.Sprint(e.Errors[0].Loc) != "[path]" {
			t.Errorf("%s: %s", p, b)
		}
	}
	if e := epochOf(t, c, "docs"); e != before {
		t.Fatalf("refused requests changed the epoch: %d → %d", before, e)
	}
}
