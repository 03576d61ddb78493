package hybrid

import (
	"fmt"
	"math"
)

// chooseDefault applies the rule fixed before the held-out numbers were
// read:
//
//  1. family: the one whose WORST cross-collection transfer gain (nDCG@10
//     over lexical on the collection it was not tuned on) is largest;
//  2. parameters: that family's grid point tuned on the collection with the
//     most judged queries (Cranfield, 225 queries, vs Vaswani's 93);
//  3. the goal counts as met only if BOTH transfer directions of the family
//     gain ≥ cfg.Goal with a bootstrap interval above 0; the default's row
//     on its own tuning collection is in-sample and is labelled so.
func chooseDefault(cfg Config, res Result, cols []*collection, grids map[string]map[string][]evaluated,
	lexOf map[string]perQuery, row func(*collection, Spec, perQuery, perQuery, string) (Row, error)) (Default, error) {
	if len(cols) < 2 {
		return Default{Rationale: "needs two collections for the cross-collection rule"}, nil
	}
	bestFam, bestMin := "", math.Inf(-1)
	for _, fam := range Families {
		worst := math.Inf(1)
		for _, t := range res.Transfers {
			if t.Family == fam {
				worst = min(worst, t.Test.VsLexical.MeanDiff)
			}
		}
		if worst > bestMin {
			bestFam, bestMin = fam, worst
		}
	}
	train := cols[0]
	for _, c := range cols[1:] {
		if len(c.Queries) > len(train.Queries) {
			train = c
		}
	}
	spec := bestOf(grids[train.Name][bestFam], nil).spec
	d := Default{Spec: spec, GoalMet: true}
	for _, t := range res.Transfers {
		if t.Family == bestFam {
			ci := t.Test.VsLexical
			if ci.MeanDiff < cfg.Goal || ci.Lo <= 0 {
				d.GoalMet = false
			}
		}
	}
	for _, c := range cols {
		e, ok := find(grids[c.Name][bestFam], spec)
		if !ok {
			return d, fmt.Errorf("hybrid: %s not in %s's grid", spec, c.Name)
		}
		tuned := "in-sample (tuning collection)"
		if c != train {
			tuned = "transfer from " + train.Name
		}
		r, err := row(c, spec, e.pq, lexOf[c.Name], tuned)
		if err != nil {
			return d, err
		}
		d.Rows = append(d.Rows, r)
	}
	d.Rationale = fmt.Sprintf("family %s has the largest worst-direction cross-collection gain (%+.4f nDCG@10); "+
		"parameters tuned on %s (most judged queries)", bestFam, bestMin, train.Name)
	return d, nil
}
