package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
)

// TestAttackReadPlantedSource: the read tool serves any file the
// catalog lists, and the catalog lists every document whose file://
// source lies under a root — including documents an API caller wrote
// itself (the server accepts such a source_uri wherever a --verify-root
// of the caller's namespace covers the tree). So a tenant can plant one
// document naming a file ingestion never indexed (a .env, .git/config, a
// gitignored or oversized file) and read the file whole. read must serve
// only files ingestion indexed (documents written with
// engine.VerifiableSources), or at least only the spans a readable
// document's content already holds.
func TestAttackReadPlantedSource(t *testing.T) {
	root, db := fixture(t)
	secret := filepath.Join(root, ".env")
	if err := os.WriteFile(secret, []byte("API_TOKEN=TOPSECRET-never-indexed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	col, err := db.Collection("code")
	if err != nil {
		t.Fatal(err)
	}
	alice := &contract.Principal{Name: "alice", Namespaces: []string{"a/"}}
	planted := contract.Document{ID: "a/planted", Namespace: "a/", Content: "planted", Trust: contract.ExternalUnverified,
		Vector: []float32{1, 0, 0, 0, 0, 0, 0, 0}, SourceURI: "file://" + secret + "#L1-L1"}
	if _, err := col.Upsert(context.Background(), []contract.Document{planted}, engine.As(alice)); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, newServer(t, db, root, nil), Caller{Principal: alice})
	res, _, text := callTool(t, cs, "read", map[string]any{"uri": ".env"})
	if strings.Contains(text, "TOPSECRET") {
		t.Fatalf("read served a file ingestion never indexed, through a document the caller planted (isError=%v):\n%s", res.IsError, text)
	}
}
