package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestSearchResponseEncoding: a search response is what encoding/json
// writes for the Result with HTML escaping off (the server's own encoder,
// contract.Result.AppendJSON): code text keeps '<', '>' and '&' as they
// are, the body decodes to the same Result, and it ends in one newline.
func TestSearchResponseEncoding(t *testing.T) {
	rs := start(t, filepath.Join(t.TempDir(), "data"), nil)
	c := newClient(t, rs.url)
	createDocs(c, "docs", 4)
	content := "if a < b && c > d {\n\treturn \"x\" // <tag> & \u2028 é\n}"
	c.must(http.StatusOK, "POST", "/v1/collections/docs/documents",
		upsertBody(mkDoc("d1", content, "", vec(1, 0, 0, 0)), mkDoc("d2", "b less than a", "", vec(0, 1, 0, 0))), nil)
	code, hdr, body := c.do("POST", "/v1/collections/docs/search", map[string]any{"text": "a b", "mode": "lexical", "highlight": true})
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	if ct := hdr.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if !bytes.HasSuffix(body, []byte("}\n")) || bytes.HasSuffix(body, []byte("\n\n")) {
		t.Errorf("body does not end in one newline: %q", body[max(0, len(body)-8):])
	}
	if !bytes.Contains(body, []byte(`if a < b && c > d {\n\treturn \"x\" // <tag> & \u2028 é\n}`)) {
		t.Errorf("content not written as encoding/json (HTML escaping off) writes it:\n%s", body)
	}
	var res contract.Result
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 2 || res.Hits[0].Content != content && res.Hits[1].Content != content {
		t.Fatalf("hits %+v", res.Hits)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), body) {
		t.Errorf("body is not encoding/json's form of the Result it decodes to:\n got %s\nwant %s", body, buf.Bytes())
	}
	var again contract.Result
	if err := json.Unmarshal(buf.Bytes(), &again); err != nil || !reflect.DeepEqual(again, res) {
		t.Errorf("round trip differs: %v", err)
	}
}
