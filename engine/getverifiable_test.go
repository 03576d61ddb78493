package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestSnapshotGetVerifiable: GetVerifiable reports the VerifiableSources
// mark (set on documents with a source) of the version at the snapshot's
// epoch (a later rewrite without it does not change a pinned snapshot's
// answer), returns the same document as Get, and hides the reserved key
// from Metadata.
func TestSnapshotGetVerifiable(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2})
	ctx := context.Background()
	src := func(d contract.Document) contract.Document {
		d.SourceURI = "file:///src/" + d.ID + ".go#L1-L1"
		return d
	}
	mustUpsertVerifiable(t, c, src(doc("ing", "ingested", []float32{1, 0})))
	mustUpsert(t, c, src(doc("api", "api caller", []float32{0, 1})))
	sn, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer sn.Close()
	mustUpsert(t, c, src(doc("ing", "rewritten by an api caller", []float32{1, 0})))
	for id, want := range map[string]bool{"ing": true, "api": false} {
		d, ok, err := sn.GetVerifiable(ctx, id)
		if err != nil || ok != want {
			t.Fatalf("%s: verifiable %v, err %v; want %v", id, ok, err, want)
		}
		g, err := sn.Get(ctx, id)
		if err != nil || g.Content != d.Content || g.VersionHash != d.VersionHash || len(d.Metadata) != 0 {
			t.Fatalf("%s: GetVerifiable %+v, Get %+v (%v)", id, d, g, err)
		}
	}
	sn2, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := sn2.GetVerifiable(ctx, "ing"); err != nil || ok {
		t.Fatalf("after a rewrite without VerifiableSources: verifiable %v, err %v", ok, err)
	}
	if _, ok, err := sn2.GetVerifiable(ctx, "absent"); !errors.Is(err, ErrNotFound) || ok {
		t.Fatalf("absent: %v %v", ok, err)
	}
	sn2.Close()
	if _, _, err := sn2.GetVerifiable(ctx, "ing"); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed: %v", err)
	}
}
