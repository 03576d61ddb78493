package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/verify"
)

// TestVerifiableSourceDirSwappedForLink: documents written with
// VerifiableSources from root/a/pin.txt and root/b/pin.txt, each holding
// one guess; afterwards the directories a and b are replaced by symbolic
// links to a directory outside every root holding a 0600 pin.txt. The
// final component is a regular file, so only refusing a link anywhere on
// a marked path keeps verification from reading the secret: both hits
// get the same outcome: kept unverified, as any source outside the roots.
func TestVerifiableSourceDirSwappedForLink(t *testing.T) {
	secretDir, root := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(secretDir, "pin.txt"), []byte("probe 0482\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := openDBWith(t, Options{VerifyRoots: []verify.Root{{Namespace: "*", Dir: root}}})
	c, err := db.CreateCollection("c", CollectionOptions{Dim: 2, Sync: "none", SourceRoots: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []contract.Document
	for i, g := range []string{"0482", "0307"} {
		dir := filepath.Join(root, string(rune('a'+i)))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "pin.txt")
		body := "probe " + g + "\n"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, contract.Document{ID: "g" + g, Content: body, SourceURI: "file://" + p, Trust: contract.Authoritative})
	}
	if _, err := c.Upsert(context.Background(), docs, VerifiableSources()); err != nil {
		t.Fatal(err)
	}
	r := mustSearch(t, c, contract.Query{Text: "probe", TopK: 10, Mode: contract.Lexical, Verify: true})
	if len(r.Hits) != 2 {
		t.Fatalf("before swap: want 2 verified hits, got %d (dropped %v)", len(r.Hits), r.Dropped)
	}
	for _, d := range docs {
		dir := filepath.Dir(d.SourceURI[len("file://"):])
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(secretDir, dir); err != nil {
			t.Fatal(err)
		}
	}
	r = mustSearch(t, c, contract.Query{Text: "probe", TopK: 10, Mode: contract.Lexical, Verify: true})
	if len(r.Hits) != len(docs) {
		t.Fatalf("after swap: want both hits kept (unverified), got %d, dropped %v", len(r.Hits), r.Dropped)
	}
}
