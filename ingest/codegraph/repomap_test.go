package codegraph

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/graph"
)

// starGraph: a hub type used by every function, and leaves used by one.
func starGraph(n int) *graph.Graph {
	b := graph.NewBuilder()
	hub := b.AddNode(graph.Node{Kind: graph.Type, Key: "p.Hub", Name: "Hub", File: "/r/hub.go", DocID: "h", Sig: "type Hub struct"})
	for i := 0; i < n; i++ {
		f := b.AddNode(graph.Node{Kind: graph.Func, Key: fmt.Sprintf("p.F%d", i), Name: fmt.Sprintf("F%d", i), File: fmt.Sprintf("/r/f%d.go", i%7),
			DocID: fmt.Sprint(i), Sig: fmt.Sprintf("func F%d(h *Hub) error // with a longer signature to fill lines", i)})
		b.AddEdge(f, hub, graph.References, 1)
		if i > 0 {
			b.AddEdge(f, graph.NodeID(i), graph.Calls, 2) // F_i calls F_{i-1}
		}
	}
	return b.Build()
}

func TestRankedMap(t *testing.T) {
	v := graph.NewView(starGraph(300))
	for _, budget := range []int{100, 400, 1500} {
		text, tokens := RankedMap(v, MapOptions{BudgetTokens: budget})
		if tokens < budget*85/100 || tokens > budget*115/100 {
			t.Errorf("budget %d: %d tokens", budget, tokens)
		}
		if want := (len(text) + 3) / 4; want != tokens {
			t.Errorf("budget %d: tokens %d, text has %d", budget, tokens, want)
		}
		// The hub, referenced by every function, ranks first.
		if !strings.HasPrefix(text, "/r/hub.go:\n  type Hub struct\n") {
			t.Errorf("budget %d: map starts %q", budget, text[:min(60, len(text))])
		}
	}
	// Personalised to a name: it is shown even in a small map.
	text, _ := RankedMap(v, MapOptions{BudgetTokens: 100, Names: []string{"F250"}})
	if !strings.Contains(text, "func F250(") {
		t.Errorf("F250 not in the personalised map:\n%s", text)
	}
	// Excluded files never show.
	text, _ = RankedMap(v, MapOptions{BudgetTokens: 1000, Include: func(f string) (string, bool) { return strings.TrimPrefix(f, "/r/"), f != "/r/f3.go" }})
	if strings.Contains(text, "f3.go") || strings.Contains(text, "/r/") {
		t.Errorf("exclusion or relative paths failed:\n%s", text)
	}
	// More than there is: everything, under budget.
	small := graph.NewView(starGraph(3))
	if text, tokens := RankedMap(small, MapOptions{BudgetTokens: 2000}); tokens > 2000 || strings.Count(text, "func F") != 3 {
		t.Errorf("small graph: %d tokens\n%s", tokens, text)
	}
}
