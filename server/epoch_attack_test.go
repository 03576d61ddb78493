package server

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestAttackEpochCountsOtherTenantsWrites: GET /v1/collections/{name}
// hides Stats from non-admin keys because "live document counts span
// tenants", but the view's epoch is the collection-wide count of write
// batches. A tenant polling it learns how many writes (and deletes) other
// tenants made, and when. A non-admin key's view must not move when only
// another tenant writes (omit the epoch for non-admins, as Stats is, or
// give per-scope epochs).
func TestAttackEpochCountsOtherTenantsWrites(t *testing.T) {
	dir := t.TempDir()
	keysFile := filepath.Join(dir, "keys.json")
	if err := os.WriteFile(keysFile, []byte(`[
	 {"key":"key-a","principal":"alice","namespaces":["tenant-a/"]},
	 {"key":"key-b","principal":"bob","namespaces":["tenant-b/"]},
	 {"key":"key-admin","principal":"ops","admin":true}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := LoadAPIKeys(keysFile)
	if err != nil {
		t.Fatal(err)
	}
	rs := start(t, filepath.Join(dir, "data"), func(o *Options) { o.APIKeys = keys })
	anon := newClient(t, rs.url)
	admin, a, b := anon.with("key-admin"), anon.with("key-a"), anon.with("key-b")
	admin.must(http.StatusCreated, "POST", "/v1/collections", map[string]any{"name": "docs", "options": map[string]any{"dim": 4}}, nil)
	a.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc("a0", "alpha", "tenant-a/", vec(1, 0, 0, 0))), nil)

	var before, after map[string]any
	a.must(http.StatusOK, "GET", "/v1/collections/docs", nil, &before)
	for i := 0; i < 5; i++ {
		b.must(http.StatusOK, "POST", "/v1/collections/docs/documents", upsertBody(mkDoc(fmt.Sprintf("b%d", i), "beta", "tenant-b/", vec(0, 1, 0, 0))), nil)
	}
	a.must(http.StatusOK, "GET", "/v1/collections/docs", nil, &after)
	if fmt.Sprint(before["epoch"]) != fmt.Sprint(after["epoch"]) {
		t.Fatalf("alice's view of the collection counts bob's writes: epoch %v before, %v after bob's 5 upserts", before["epoch"], after["epoch"])
	}
}
