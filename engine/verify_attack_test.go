package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/verify"
)

// TestAttackVerifiableSymlinkSwap: ingestion (VerifiableSources) indexes
// two files under a root, one holding a guess that equals a 0600 secret
// outside every root and one that does not. Afterwards whoever can write
// the indexed tree replaces both with symbolic links to the secret. A
// verified search must not read the secret: both documents must get the
// same outcome (both kept unverified or both dropped). Today the
// vouched-for path is read as it is, symlinks followed, so exactly the
// right guess survives — the PIN oracle through an ingested tree.
func TestAttackVerifiableSymlinkSwap(t *testing.T) {
	secretDir, root := t.TempDir(), t.TempDir()
	secret := filepath.Join(secretDir, "pin.txt")
	if err := os.WriteFile(secret, []byte("probe 0482\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := openDBWith(t, Options{VerifyRoots: []verify.Root{{Namespace: "*", Dir: root}}})
	c, err := db.CreateCollection("c", CollectionOptions{Dim: 2, Sync: "none", SourceRoots: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []contract.Document
	for _, g := range []string{"0482", "0307"} {
		p := filepath.Join(root, "g"+g+".txt")
		body := "probe " + g + "\n"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, contract.Document{ID: "g" + g, Content: body, SourceURI: "file://" + p, Trust: contract.Authoritative})
	}
	if _, err := c.Upsert(context.Background(), docs, VerifiableSources()); err != nil {
		t.Fatal(err)
	}
	// Sanity: before the swap both verify.
	r := mustSearch(t, c, contract.Query{Text: "probe", TopK: 10, Mode: contract.Lexical, Verify: true})
	if len(r.Hits) != 2 {
		t.Fatalf("before swap: want 2 verified hits, got %d (dropped %v)", len(r.Hits), r.Dropped)
	}
	for _, d := range docs {
		p := d.SourceURI[len("file://"):]
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(secret, p); err != nil {
			t.Fatal(err)
		}
	}
	r = mustSearch(t, c, contract.Query{Text: "probe", TopK: 10, Mode: contract.Lexical, Verify: true})
	var kept []string
	for _, h := range r.Hits {
		kept = append(kept, h.DocID)
	}
	slices.Sort(kept)
	if len(kept) == 1 {
		t.Fatalf("verification read a file outside every root through a symlink swapped in after indexing: kept %v (the guess equal to the secret), dropped %v", kept, r.Dropped)
	}
}
