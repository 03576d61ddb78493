package memory

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestMaintainOnce: one pass merges the restatement, expires the old
// note, forgets the record whose source file changed, and purges, after
// which no file of the store holds the forgotten texts; a second pass
// finds nothing to do.
func TestMaintainOnce(t *testing.T) {
	ctx := context.Background()
	s, c, dir := openTest(t, Options{Policy: Policy{Retention: map[Kind]Retention{Note: {TTL: 24 * time.Hour}}}})
	src := filepath.Join(t.TempDir(), "NOTES.md")
	if err := os.WriteFile(src, []byte("deploys happen on tuesdays\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	uri := "file://" + src
	h, _, _ := FileSources(ctx, uri)
	const expired = "scratch note: try the quokka flag"
	const changed = "deploys happen on tuesdays per the notes file"
	remember(t, s,
		Write{Subject: "u", Kind: Note, Content: expired, Provenance: "traj:1"},
		Write{Subject: "u", Kind: Fact, Content: changed, Provenance: uri, SourceHash: h},
		Write{Subject: "u", Kind: Preference, Content: "prefers window seats on long flights", Provenance: "conv:1"})
	c.add(time.Hour)
	remember(t, s, Write{Subject: "u", Kind: Preference, Content: "Note: prefers window seats on long flights", Provenance: "conv:2"})
	// The texts are on disk in plain form (the WAL) before the flush,
	// which compresses them into a segment and retires the WAL: the
	// residue grep below can see them.
	if hits := grepStore(t, dir, expired, changed); len(hits) < 2 {
		t.Fatalf("the texts are not on disk before the pass: %v", hits)
	}
	if err := s.Collection().Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte("deploys happen on thursdays\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.add(48 * time.Hour)
	rep, err := s.MaintainOnce(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Consolidated.Merged) != 1 || len(rep.Expired.Deleted) != 1 || len(rep.SourceChanged.Deleted) != 1 || rep.Purged.Skipped {
		t.Fatalf("pass: %+v", rep)
	}
	if hits := grepStore(t, dir, expired, changed); len(hits) != 0 {
		t.Fatalf("after the pass: %v", hits)
	}
	if got := recallContents(t, s, Query{Subject: "u", Text: "window seats"}); len(got) != 1 {
		t.Fatalf("recall after the merge: %q", got)
	}
	rep, err = s.MaintainOnce(ctx, nil)
	if err != nil || len(rep.Consolidated.Merged) != 0 || len(rep.Expired.Deleted) != 0 || len(rep.SourceChanged.Deleted) != 0 || !rep.Purged.Skipped {
		t.Fatalf("second pass: %+v %v", rep, err)
	}
}

// TestMaintainRunsUntilCancelled: Maintain reports passes on its interval
// and returns the context's error once cancelled.
func TestMaintainRunsUntilCancelled(t *testing.T) {
	s, _, _ := openTest(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	passes := 0
	err := s.Maintain(ctx, MaintainOptions{Interval: time.Millisecond, Report: func(_ MaintainReport, err error) {
		if err != nil {
			t.Error(err)
		}
		if passes++; passes == 3 {
			cancel()
		}
	}})
	if err != context.Canceled || passes != 3 {
		t.Fatalf("Maintain returned %v after %d passes", err, passes)
	}
}
