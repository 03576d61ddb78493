package engine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestRequestWALRotation: after a delete, RequestWALRotation + a write +
// Flush leaves no WAL file holding the deleted document's bytes; so does
// the same sequence without the request, as nothing is written after the
// flush froze its epoch (the flush then retires the active WAL segment
// too: tier.Store.Flush).
func TestRequestWALRotation(t *testing.T) {
	ctx := context.Background()
	for _, rotate := range []bool{false, true} {
		dir := t.TempDir()
		db, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		col, err := db.CreateCollection("c", CollectionOptions{Dim: 2})
		if err != nil {
			t.Fatal(err)
		}
		const secret = "zebra-quux-deleted-text"
		if _, err := col.Upsert(ctx, []contract.Document{{ID: "a", Content: secret, Trust: contract.Derived},
			{ID: "b", Content: "kept", Trust: contract.Derived}}); err != nil {
			t.Fatal(err)
		}
		if _, err := col.Delete(ctx, []string{"a"}); err != nil {
			t.Fatal(err)
		}
		if rotate {
			col.RequestWALRotation()
		}
		if _, err := col.Upsert(ctx, []contract.Document{{ID: "c", Content: "after", Trust: contract.Derived}}); err != nil {
			t.Fatal(err)
		}
		if err := col.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		found := false
		walDir := filepath.Join(dir, "collections", "c", "store", "wal")
		ents, _ := os.ReadDir(walDir)
		for _, e := range ents {
			b, _ := os.ReadFile(filepath.Join(walDir, e.Name()))
			found = found || bytes.Contains(b, []byte(secret))
		}
		if found {
			t.Errorf("rotate=%v: deleted bytes in the WAL", rotate)
		}
		if d, err := col.Get(ctx, "c"); err != nil || d.Content != "after" {
			t.Fatalf("the write after the rotation: %v %v", d, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		// Reopening replays the new segment fine.
		db, err = Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		col, _ = db.Collection("c")
		if _, err := col.Get(ctx, "a"); err == nil {
			t.Fatal("deleted document back after reopen")
		}
		if d, err := col.Get(ctx, "b"); err != nil || d.Content != "kept" {
			t.Fatalf("reopen: %v %v", d, err)
		}
		db.Close()
	}
}
