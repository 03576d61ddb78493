package memgen

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/memory"
)

// Clock is the stream's clock: Run sets it to each op's time, so pass
// Clock.Now as the Store's Options.Now.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Set sets the clock.
func (c *Clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// Report is a scored run.
type Report struct {
	Writes, Deletes, Consolidations int
	Queries                         int
	// RecallAt1 is the fraction of key queries whose top hit is the
	// key's current value.
	RecallAt1 float64
	// StaleRate is the fraction of the top-5 hits of a key query holding
	// the queried key that carry a value that is not current.
	StaleRate float64
	// ActiveUnkeyed is the number of active unkeyed records at the end;
	// Duplicates those beyond the first of their fact; DupRate their ratio.
	ActiveUnkeyed, Duplicates int
	DupRate                   float64
	// Residues counts deleted facts with any stored record left;
	// FileResidues the (file, deleted text) pairs found under Dir after
	// Purge (−1: not checked).
	Residues, FileResidues int
	// PoisonRecords is the number of records from the poisoned page;
	// PoisonFramed how many of those a recall returned framed as
	// external_unverified, PoisonRecalled how many it returned at all;
	// PoisonAfterRollback the page's records left after one Rollback.
	PoisonRecords, PoisonRecalled, PoisonFramed, PoisonAfterRollback int
	// PoisonKeyCurrent counts subjects whose current contact.email is the
	// page's (an overwrite by an unverified page).
	PoisonKeyCurrent int
	// TokensPrefs is the framed tokens of a "user prefers" recall (top 50)
	// summed over subjects: what near-duplicates cost in a context.
	TokensPrefs int
	// Refused and Duplicate count admission outcomes.
	Refused, DuplicateWrites int
}

// Run replays st into s (whose clock is clk), then measures. dir, if not
// "", is the store's directory: Run then Purges and greps every file
// under it for the deleted facts' texts.
func Run(ctx context.Context, s *memory.Store, clk *Clock, st *Stream, dir string) (Report, error) {
	var rep Report
	factOf := map[string]string{}  // record id → fact id
	firstOf := map[string]string{} // fact id → record id of its first statement
	subjectOf := map[string]string{}
	for _, op := range st.Ops {
		clk.Set(op.At)
		switch op.Kind {
		case OpWrite:
			out, err := s.Remember(ctx, []memory.Write{op.Write})
			if err != nil {
				return rep, err
			}
			rep.Writes++
			o := out[0]
			switch o.Status {
			case memory.Refused:
				rep.Refused++
				continue
			case memory.Duplicate:
				rep.DuplicateWrites++
			}
			if _, ok := factOf[o.Record.ID]; !ok {
				factOf[o.Record.ID] = op.Fact
			}
			if _, ok := firstOf[op.Fact]; !ok {
				firstOf[op.Fact] = o.Record.ID
				subjectOf[op.Fact] = op.Write.Subject
			}
		case OpDelete:
			id := firstOf[op.Fact]
			if id == "" {
				continue
			}
			if _, err := s.Delete(ctx, subjectOf[op.Fact], []string{id}); err != nil && !strings.Contains(err.Error(), "no such record") {
				return rep, err
			}
			rep.Deletes++
		case OpConsolidate:
			if _, err := s.Consolidate(ctx, ""); err != nil {
				return rep, err
			}
			rep.Consolidations++
		}
	}
	// Current facts.
	hits1, staleHits, keyHits := 0, 0, 0
	for _, q := range st.Queries {
		res, err := s.Recall(ctx, memory.Query{Subject: q.Subject, Text: q.Text, Kinds: []memory.Kind{memory.Fact}, TopK: 5})
		if err != nil {
			return rep, err
		}
		rep.Queries++
		if len(res.Hits) > 0 && res.Hits[0].Record.Content == q.Want {
			hits1++
		}
		for _, h := range res.Hits {
			if h.Record.Key != q.Key {
				continue
			}
			keyHits++
			if h.Record.Content != q.Want {
				staleHits++
			}
		}
	}
	rep.RecallAt1 = ratio(hits1, rep.Queries)
	rep.StaleRate = ratio(staleHits, keyHits)
	// Duplicates, residues, poison.
	deleted := map[string]bool{}
	for _, f := range st.Deleted {
		deleted[f] = true
	}
	residue := map[string]bool{}
	perFact := map[string]int{}
	for _, sub := range s.Subjects() {
		for _, r := range s.Records(sub) {
			f := factOf[r.ID]
			if deleted[f] {
				residue[f] = true
			}
			if r.Provenance == st.PoisonProvenance {
				rep.PoisonRecords++
			}
			if r.Key == "" && r.Status == memory.Active && r.Provenance != st.PoisonProvenance {
				rep.ActiveUnkeyed++
				perFact[f]++
			}
		}
		cur, err := s.Current(sub, "contact.email", time.Time{})
		if err == nil && cur.Provenance == st.PoisonProvenance {
			rep.PoisonKeyCurrent++
		}
		res, err := s.Recall(ctx, memory.Query{Subject: sub, Text: "user prefers", TopK: 50})
		if err != nil {
			return rep, err
		}
		for _, h := range res.Hits {
			rep.TokensPrefs += h.Tokens
		}
		res, err = s.Recall(ctx, memory.Query{Subject: sub, Text: "send exports email address", TopK: 50, History: true})
		if err != nil {
			return rep, err
		}
		for _, h := range res.Hits {
			if h.Record.Provenance != st.PoisonProvenance {
				continue
			}
			rep.PoisonRecalled++
			if h.Record.Trust == contract.ExternalUnverified && strings.Contains(h.Framed, `trust="external_unverified"`) {
				rep.PoisonFramed++
			}
		}
	}
	for _, n := range perFact {
		rep.Duplicates += n - 1
	}
	rep.DupRate = ratio(rep.Duplicates, rep.ActiveUnkeyed)
	rep.Residues = len(residue)
	if _, err := s.Rollback(ctx, st.PoisonProvenance); err != nil {
		return rep, err
	}
	for _, sub := range s.Subjects() {
		for _, r := range s.Records(sub) {
			if r.Provenance == st.PoisonProvenance {
				rep.PoisonAfterRollback++
			}
		}
	}
	rep.FileResidues = -1
	if dir != "" {
		if _, err := s.Purge(ctx); err != nil {
			return rep, err
		}
		var needles [][]byte
		for _, f := range st.Deleted {
			for _, t := range st.FactTexts[f] {
				needles = append(needles, []byte(t))
			}
		}
		n, err := grepDir(dir, needles)
		if err != nil {
			return rep, err
		}
		rep.FileResidues = n
	}
	return rep, nil
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// grepDir counts (file, needle) pairs where the file under dir holds the
// needle.
func grepDir(dir string, needles [][]byte) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, x := range needles {
			if bytes.Contains(b, x) {
				n++
			}
		}
		return nil
	})
	return n, err
}

// ThresholdStudy is the near-duplicate separation on a stream's
// preference texts: a similarity of every pair of texts of one subject
// (shingle Jaccard, StudyThreshold, or embedding cosine, StudyCosine),
// split into pairs of the same fact (restatements) and of different
// facts.
type ThresholdStudy struct {
	SamePairs, DiffPairs int
	// MinSame is the smallest similarity of a restatement pair, MaxDiff
	// the largest of two different facts; a threshold in (MaxDiff,
	// MinSame] separates them.
	MinSame, MaxDiff float64
	// SameBelow and DiffAbove count the pairs a threshold T would
	// misclassify, for each T in Thresholds.
	Thresholds           []float64
	SameBelow, DiffAbove []int
}

// StudyThreshold measures the Jaccard separation on st.
func StudyThreshold(st *Stream, thresholds []float64) ThresholdStudy {
	return study(st, thresholds, memory.Shingles, memory.Jaccard)
}

// StudyCosine measures the cosine separation on st of the vectors embed
// returns (one per text, any length, the same for every text; e.g. the
// built-in static embedder's).
func StudyCosine(st *Stream, thresholds []float64, embed func(string) []float32) ThresholdStudy {
	return study(st, thresholds, embed, cosine)
}

// cosine is a·b / (‖a‖‖b‖) in float64 (0 if either is zero).
func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func study[F any](st *Stream, thresholds []float64, feature func(string) F, sim func(a, b F) float64) ThresholdStudy {
	ts := ThresholdStudy{MinSame: math.Inf(1), MaxDiff: math.Inf(-1), Thresholds: thresholds,
		SameBelow: make([]int, len(thresholds)), DiffAbove: make([]int, len(thresholds))}
	bySubject := map[string][]string{}
	for f := range st.FactTexts {
		sub, _, _ := strings.Cut(f, "/")
		bySubject[sub] = append(bySubject[sub], f)
	}
	for _, facts := range bySubject {
		slices.Sort(facts)
		type txt struct {
			fact string
			f    F
		}
		var all []txt
		for _, f := range facts {
			for _, t := range st.FactTexts[f] {
				all = append(all, txt{f, feature(t)})
			}
		}
		for i := range all {
			for j := i + 1; j < len(all); j++ {
				v := sim(all[i].f, all[j].f)
				same := all[i].fact == all[j].fact
				if same {
					ts.SamePairs++
					ts.MinSame = min(ts.MinSame, v)
				} else {
					ts.DiffPairs++
					ts.MaxDiff = max(ts.MaxDiff, v)
				}
				for k, th := range thresholds {
					if same && v < th {
						ts.SameBelow[k]++
					}
					if !same && v >= th {
						ts.DiffAbove[k]++
					}
				}
			}
		}
	}
	return ts
}

// String formats a report as one line per metric.
func (r Report) String() string {
	return fmt.Sprintf("writes %d (refused %d, exact duplicates %d), deletes %d, consolidations %d\n"+
		"current-fact recall@1 %.4f over %d keyed facts\nstale-fact rate %.4f\n"+
		"active unkeyed %d, duplicates %d (%.4f)\nresidues: records %d, files %d\n"+
		"poison: records %d, recalled %d, framed external_unverified %d, left after one Rollback %d, current contact.email from the page %d\n"+
		"framed tokens of a 'user prefers' recall (top 50, all subjects) %d",
		r.Writes, r.Refused, r.DuplicateWrites, r.Deletes, r.Consolidations, r.RecallAt1, r.Queries, r.StaleRate,
		r.ActiveUnkeyed, r.Duplicates, r.DupRate, r.Residues, r.FileResidues,
		r.PoisonRecords, r.PoisonRecalled, r.PoisonFramed, r.PoisonAfterRollback, r.PoisonKeyCurrent, r.TokensPrefs)
}
