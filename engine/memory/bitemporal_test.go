package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine/contract"
)

// TestKnownAtExample: the store answers as it stood at a transaction time.
// On 1 March the user's email is a@x; on 5 March it becomes b@x, valid from
// 5 March. Known at 3 March the current value is a@x; known at 6 March it
// is b@x, and a@x is superseded with valid_to 5 March. Two restatements
// merged on 7 March are both recalled as known on 6 March.
func TestKnownAtExample(t *testing.T) {
	s, c, _ := openTest(t, Options{})
	ctx := context.Background()
	d := func(day int) time.Time { return time.Date(2026, 3, day, 12, 0, 0, 0, time.UTC) }
	c.t = d(1)
	a := remember(t, s, Write{Subject: "u", Kind: Fact, Key: "contact.email", Content: "email is a@x", Provenance: "conv:1", Evidence: UserStated})[0].Record
	c.t = d(5)
	b := remember(t, s, Write{Subject: "u", Kind: Fact, Key: "contact.email", Content: "email is b@x", Provenance: "conv:2", Evidence: UserStated})[0].Record
	c.t = d(6)
	remember(t, s, Write{Subject: "u", Kind: Preference, Content: "prefers tea in the morning", Provenance: "conv:3"})
	remember(t, s, Write{Subject: "u", Kind: Preference, Content: "Note: prefers tea in the morning", Provenance: "conv:4"})
	c.t = d(7)
	if rep, err := s.Consolidate(ctx, "u"); err != nil || len(rep.Merged) != 1 {
		t.Fatalf("consolidate: %+v %v", rep, err)
	}
	c.t = d(8)
	key := func(q Query) []*Record {
		t.Helper()
		q.Subject = "u"
		res, err := s.Recall(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []*Record
		for _, h := range res.Hits {
			out = append(out, h.Record)
		}
		return out
	}
	if got := key(Query{Key: "contact.email", KnownAt: d(3)}); len(got) != 1 || got[0].ID != a.ID || got[0].Status != Active || got[0].Version != a.Version {
		t.Fatalf("known at 3 March: %+v, want %s active at version %s", got, a.ID, a.Version)
	}
	if got := key(Query{Key: "contact.email", KnownAt: d(6)}); len(got) != 1 || got[0].ID != b.ID {
		t.Fatalf("known at 6 March: %+v, want %s", got, b.ID)
	}
	got := key(Query{Key: "contact.email", KnownAt: d(6), AsOf: d(3)})
	if len(got) != 1 || got[0].ID != a.ID || got[0].Status != Superseded || !got[0].ValidTo.Equal(d(5)) {
		t.Fatalf("known at 6 March, valid at 3 March: %+v", got)
	}
	if got := key(Query{Key: "contact.email", KnownAt: d(1).Add(-time.Millisecond)}); len(got) != 0 {
		t.Fatalf("known before anything was recorded: %+v", got)
	}
	if got := key(Query{Text: "tea morning", KnownAt: d(6)}); len(got) != 2 {
		t.Fatalf("known at 6 March (before the merge): %d hits, want 2", len(got))
	}
	if got := key(Query{Text: "tea morning"}); len(got) != 1 {
		t.Fatalf("now (after the merge): %d hits, want 1", len(got))
	}
	h := s.HistoryAt("u", "contact.email", d(3))
	if len(h) != 1 || h[0].ID != a.ID || h[0].Status != Active || !h[0].ValidTo.IsZero() {
		t.Fatalf("history known at 3 March: %+v", h)
	}
	if h := s.History("u", "contact.email"); len(h) != 2 || h[0].Status != Superseded || len(h[0].Prior) != 1 || h[0].Prior[0].Status != Active {
		t.Fatalf("history now: %+v", h)
	}
}

// tSnap is what the store held at one transaction time: every record of
// every subject, as Records returned it right after the operation.
type tSnap struct {
	at   time.Time
	recs map[string]*Record
}

// TestKnownAtMatchesSnapshots replays a seeded stream of keyed writes
// with out-of-order valid times, exact and near restatements, edits
// (Replaces), consolidation, rollbacks and deletes, and snapshots every
// record after each operation. Then, for every snapshot time T (and T +
// 0.5 s), Recall and HistoryAt with KnownAt = T must return exactly the
// records of the last snapshot taken at or before T that still exist, in
// their states then (status, validity, merge target, provenance,
// sources, version), filtered by a plain reference of validity at AsOf.
// The check runs again after reopening the store from its collection.
func TestKnownAtMatchesSnapshots(t *testing.T) {
	s, c, _ := openTest(t, Options{})
	ctx := context.Background()
	r := rand.New(rand.NewPCG(19, 1))
	subjects := []string{"u", "v"}
	keys := []string{"contact.email", "home.city", "pet.name"}
	notes := []string{"alpha likes green tea", "alpha walks the dog at seven", "alpha reads science fiction", "alpha plays chess on sundays"}
	evs := []Evidence{Verified, UserStated, Observed, SelfReport}
	ops := 140
	if testing.Short() {
		ops = 60
	}
	var snaps []tSnap
	snapshot := func() {
		m := map[string]*Record{}
		for _, sub := range subjects {
			for _, x := range s.Records(sub) {
				m[x.ID] = x
			}
		}
		snaps = append(snaps, tSnap{at: c.t, recs: m})
	}
	randomID := func(sub string, keyed bool) string {
		var ids []string
		for _, x := range s.Records(sub) {
			if (x.Key != "") == keyed {
				ids = append(ids, x.ID)
			}
		}
		if len(ids) == 0 {
			return ""
		}
		return ids[r.IntN(len(ids))]
	}
	for i := range ops {
		if r.IntN(10) > 0 { // one operation in ten shares the previous one's millisecond
			c.add(time.Second)
		}
		sub := subjects[r.IntN(len(subjects))]
		prov := fmt.Sprintf("conv:%d", r.IntN(12))
		var err error
		switch p := r.IntN(100); {
		case p < 40:
			w := Write{Subject: sub, Kind: Fact, Key: keys[r.IntN(len(keys))], Provenance: prov,
				Content: fmt.Sprintf("alpha value %d", r.IntN(6)), Evidence: evs[r.IntN(len(evs))],
				ValidFrom: c.t.Add(-time.Duration(r.IntN(5)) * time.Hour)}
			if r.IntN(10) == 0 {
				w.Trust = contract.ExternalUnverified
			}
			if r.IntN(8) == 0 {
				w.ValidUntil = c.t.Add(time.Duration(1+r.IntN(3)) * time.Hour)
			}
			_, err = s.Remember(ctx, []Write{w})
		case p < 68:
			text := notes[r.IntN(len(notes))]
			switch r.IntN(3) {
			case 1:
				text = "Note: " + text
			case 2:
				text = strings.ToUpper(text[:1]) + text[1:] + "!"
			}
			_, err = s.Remember(ctx, []Write{{Subject: sub, Kind: Note, Content: text, Provenance: prov,
				ValidFrom: c.t.Add(-time.Duration(r.IntN(3)) * time.Hour)}})
		case p < 75:
			if id := randomID(sub, false); id != "" {
				_, err = s.Remember(ctx, []Write{{Subject: sub, Kind: Note, Content: fmt.Sprintf("alpha edited note %d", i),
					Provenance: prov, Replaces: id}})
			}
		case p < 85:
			_, err = s.Consolidate(ctx, "")
		case p < 92:
			_, err = s.Rollback(ctx, prov)
		default:
			if id := randomID(sub, r.IntN(2) == 0); id != "" {
				_, err = s.Delete(ctx, sub, []string{id})
			}
		}
		if err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
		snapshot()
	}
	check := func(s *Store, label string) {
		t.Helper()
		alive := map[string]bool{}
		for _, sub := range subjects {
			for _, x := range s.Records(sub) {
				alive[x.ID] = true
			}
		}
		if len(alive) < 20 {
			t.Fatalf("%s: only %d records survive the stream", label, len(alive))
		}
		sameState := func(got, want *Record) bool {
			return got.Status == want.Status && got.ValidTo.Equal(want.ValidTo) && got.MergedInto == want.MergedInto &&
				got.Provenance == want.Provenance && slices.Equal(got.Sources, want.Sources) && got.Version == want.Version &&
				got.Content == want.Content && got.ValidFrom.Equal(want.ValidFrom)
		}
		times := []time.Time{snaps[0].at.Add(-time.Millisecond)}
		for _, sn := range snaps {
			times = append(times, sn.at, sn.at.Add(500*time.Millisecond))
		}
		checked, past := 0, 0
		for _, T := range times {
			// The reference: the last snapshot at or before T, minus what
			// has been deleted since.
			ref := map[string]*Record{}
			for _, sn := range snaps {
				if !sn.at.After(T) {
					ref = sn.recs
				}
			}
			for _, sub := range subjects {
				for _, asOf := range []time.Time{{}, T.Add(-2 * time.Hour), T.Add(90 * time.Minute)} {
					for _, hist := range []bool{false, true} {
						at := asOf
						if at.IsZero() {
							at = T
						}
						want := map[string]*Record{}
						for id, x := range ref {
							if x.Subject != sub || !alive[id] || x.Status == Merged {
								continue
							}
							if hist || (!at.Before(x.ValidFrom) && (x.ValidTo.IsZero() || at.Before(x.ValidTo))) {
								want[id] = x
							}
						}
						q := Query{Subject: sub, KnownAt: T, AsOf: asOf, History: hist, TopK: contract.MaxTopK}
						modes := []string{""}
						if asOf.IsZero() && !hist {
							modes = append(modes, "alpha")
						}
						for _, text := range modes {
							q.Text = text
							res, err := s.Recall(ctx, q)
							if err != nil {
								t.Fatal(err)
							}
							got := map[string]bool{}
							for _, h := range res.Hits {
								w := want[h.Record.ID]
								if w == nil || !sameState(h.Record, w) {
									t.Fatalf("%s: known at %v, as of %v, history %v, text %q: hit %+v, reference %+v", label, T, asOf, hist, text, h.Record, w)
								}
								got[h.Record.ID] = true
							}
							for id := range want {
								if !got[id] {
									t.Fatalf("%s: known at %v, as of %v, history %v, text %q: %s missing (%+v)", label, T, asOf, hist, text, id, want[id])
								}
							}
							checked++
						}
					}
				}
				for _, key := range append([]string{""}, keys...) {
					h := s.HistoryAt(sub, key, T)
					n := 0
					for id, x := range ref {
						if x.Subject == sub && alive[id] && (key == "" || x.Key == key) {
							n++
						}
					}
					if len(h) != n {
						t.Fatalf("%s: history %q known at %v: %d records, reference %d", label, key, T, len(h), n)
					}
					for _, x := range h {
						if w := ref[x.ID]; w == nil || !sameState(x, w) {
							t.Fatalf("%s: history %q known at %v: %+v, reference %+v", label, key, T, x, w)
						}
					}
				}
			}
			// Count the times at which the past differs from now, so the
			// test cannot pass on a stream where nothing ever changes.
			for id, x := range ref {
				if cur, _ := s.Get(x.Subject, id); cur != nil && cur.Version != x.Version {
					past++
					break
				}
			}
		}
		if past < len(times)/3 {
			t.Fatalf("%s: only %d of %d times differ from now", label, past, len(times))
		}
		t.Logf("%s: %d recalls checked, %d times whose state differs from now", label, checked, past)
	}
	check(s, "live")
	s2, err := Open(ctx, s.Collection(), Options{Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	check(s2, "reopened")
}
