package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/ingest"
)

// TestPlantedDocumentsNameNoFile: documents an API caller wrote (without
// engine.VerifiableSources) with file:// sources under the root — one
// naming a file ingestion never indexed, one a span of an indexed file —
// add no entry to list, no name to repo_map and nothing read serves,
// for the planting tenant and for a trusted caller alike.
func TestPlantedDocumentsNameNoFile(t *testing.T) {
	root, db := fixture(t)
	col, err := db.Collection("code")
	if err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(root, "planted.go")
	if err := os.WriteFile(planted, []byte("package p\n\nfunc PlantedFunc() {} // plantedbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	alice := &contract.Principal{Name: "alice", Namespaces: []string{"a/"}}
	meta := map[string]contract.Value{ingest.MetaKind: contract.String("func"), ingest.MetaSymbol: contract.String("PlantedSym"),
		ingest.MetaNames: contract.Strings("PlantedSym", "InjectedName")}
	docs := []contract.Document{
		{ID: "a/new", Namespace: "a/", Content: "x", Trust: contract.ExternalUnverified, Vector: []float32{1, 0, 0, 0, 0, 0, 0, 0},
			SourceURI: ingest.FileURI(planted) + "#L1-L3", Metadata: meta},
		{ID: "a/old", Namespace: "a/", Content: "x", Trust: contract.ExternalUnverified, Vector: []float32{0, 1, 0, 0, 0, 0, 0, 0},
			SourceURI: ingest.FileURI(filepath.Join(root, "a.go")) + "#L1-L2", Metadata: meta},
	}
	if _, err := col.Upsert(context.Background(), docs, engine.As(alice)); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, db, root, nil)
	for _, who := range []Caller{{Principal: alice}, {}} {
		cs := connect(t, s, who)
		_, m, text := callTool(t, cs, "list", map[string]any{})
		var names []string
		entries, _ := m["entries"].([]any) // none for alice, who may read no indexed file
		for _, e := range entries {
			names = append(names, e.(map[string]any)["name"].(string))
		}
		if strings.Contains(strings.Join(names, ","), "planted") {
			t.Fatalf("%v: list shows a planted file: %v\n%s", who.Principal, names, text)
		}
		_, _, text = callTool(t, cs, "repo_map", map[string]any{})
		if strings.Contains(text, "PlantedSym") || strings.Contains(text, "InjectedName") || strings.Contains(text, "planted.go") {
			t.Fatalf("%v: repo_map holds a planted name:\n%s", who.Principal, text)
		}
		res, _, text := callTool(t, cs, "read", map[string]any{"uri": "planted.go"})
		if !res.IsError || strings.Contains(text, "plantedbody") {
			t.Fatalf("%v: read served a planted file (isError=%v):\n%s", who.Principal, res.IsError, text)
		}
	}
	// The trusted caller still sees a.go, untouched by the planted span.
	cs := connect(t, s, Caller{})
	_, m, text := callTool(t, cs, "repo_map", map[string]any{})
	if b := frames(t, text, m["nonce"].(string)); len(b) != 1 || !strings.Contains(b[0], "a.go: Widget, Frobnicate, Widget.Paint\n") {
		t.Fatalf("repo_map after planting: %q", b)
	}
}
