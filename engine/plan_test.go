package engine

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestPlanResolvedOnce: a search whose collapsed page comes up short
// retrieves again, deeper, from the plan it built once (no second
// validation or scope resolution), and the deeper retrieval fills the
// page.
func TestPlanResolvedOnce(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 4})
	var docs []contract.Document
	// One file dominates the top of "alpha"; the other files trail.
	for i := range 200 {
		docs = append(docs, contract.Document{ID: fmt.Sprintf("dom%03d", i), Content: strings.Repeat("alpha ", 40+i),
			SourceURI: fmt.Sprintf("file:///repo/dominant.go#L%d", i+1), Trust: contract.Authoritative})
	}
	for i := range 30 {
		docs = append(docs, contract.Document{ID: fmt.Sprintf("f%02d", i), Content: "alpha" + strings.Repeat(" beta gamma delta", 20),
			SourceURI: fmt.Sprintf("file:///repo/f%02d.go#L1", i), Trust: contract.Authoritative})
	}
	mustUpsert(t, c, docs...)
	var plans, lexical atomic.Int32
	c.testHookPlan = func() { plans.Add(1) }
	c.testHookRetriever = func(name string) {
		if name == retrieverLexical {
			lexical.Add(1)
		}
	}
	res := mustSearch(t, c, contract.Query{Text: "alpha", TopK: 20, Collapse: 1})
	if len(res.Hits) != 20 {
		t.Fatalf("collapsed page: %d hits, want 20", len(res.Hits))
	}
	if plans.Load() != 1 || lexical.Load() < 2 {
		t.Fatalf("one search built %d plans and ran %d lexical retrievals, want 1 plan and ≥ 2 retrievals", plans.Load(), lexical.Load())
	}
}
