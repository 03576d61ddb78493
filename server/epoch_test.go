package server

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestEpochHiddenFromKeys: every response that carries the collection's
// epoch (collection view and list, upsert, delete, search) omits it for a
// non-admin key and carries it for an admin key, and the admin's value is
// the collection's.
func TestEpochHiddenFromKeys(t *testing.T) {
	dir := t.TempDir()
	keysFile := filepath.Join(dir, "keys.json")
	if err := os.WriteFile(keysFile, []byte(`[
	 {"key":"key-a","principal":"alice","namespaces":["tenant-a/"]},
	 {"key":"key-admin","principal":"ops","admin":true,"namespaces":["*"]}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := LoadAPIKeys(keysFile)
	if err != nil {
		t.Fatal(err)
	}
	rs := start(t, filepath.Join(dir, "data"), func(o *Options) { o.APIKeys = keys })
	anon := newClient(t, rs.url)
	admin, a := anon.with("key-admin"), anon.with("key-a")
	admin.must(http.StatusCreated, "POST", "/v1/collections", map[string]any{"name": "docs", "options": map[string]any{"dim": 4}}, nil)
	search := map[string]any{"vector": []float32{1, 0, 0, 0}, "mode": "dense"}
	for _, tc := range []struct {
		who  string
		c    *client
		want bool
	}{{"alice", a, false}, {"admin", admin, true}} {
		responses := map[string]map[string]any{}
		var up, del, view, res, list map[string]any
		tc.c.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("tenant-a/"+tc.who, "alpha", "tenant-a/", vec(1, 0, 0, 0))), &up)
		tc.c.must(http.StatusOK, "POST", "/v1/collections/docs/search", search, &res)
		tc.c.must(http.StatusOK, "GET", "/v1/collections/docs", nil, &view)
		tc.c.must(http.StatusOK, "POST", "/v1/collections/docs/documents/delete", map[string]any{"ids": []string{"tenant-a/" + tc.who}}, &del)
		tc.c.must(http.StatusOK, "GET", "/v1/collections", nil, &list)
		responses["upsert"], responses["search"], responses["view"], responses["delete"] = up, res, view, del
		responses["list"] = list["collections"].([]any)[0].(map[string]any)
		for name, r := range responses {
			if _, has := r["epoch"]; has != tc.want {
				t.Errorf("%s: %s response has epoch: %v, want %v (%v)", tc.who, name, has, tc.want, r)
			}
		}
		if hits, _ := res["hits"].([]any); len(hits) != 1 || up["count"] != float64(1) || del["count"] != float64(1) || view["name"] != "docs" {
			t.Errorf("%s: the rest of the responses changed: upsert %v, search %v, delete %v, view %v", tc.who, up, res, del, view)
		}
	}
	if e := epochOf(t, admin, "docs"); e != 4 {
		t.Errorf("admin sees epoch %d after 4 write batches", e)
	}
}
