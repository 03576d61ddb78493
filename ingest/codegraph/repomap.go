package codegraph

import (
	"sort"
	"strings"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/graph"
)

// MapOptions configure RankedMap.
type MapOptions struct {
	// Files personalise the ranking: a node whose file has one of these
	// prefixes (absolute paths) gets teleport weight Boost. Empty: none.
	Files []string
	// Names personalise it too: a definition whose Name, or whose Name's
	// last dotted part, is one of these gets Boost.
	Names []string
	// Boost is the teleport weight of a matching node relative to 1 for
	// the others. Default 200.
	Boost float64
	// BudgetTokens is the map's size target (⌈bytes/4⌉ of the text); the
	// map fills it within ±15% when there is enough to show. Required.
	BudgetTokens int
	// Include maps a node's file to the path shown ("" , false: leave the
	// file out: outside the caller's roots, or not readable by it). nil:
	// every file, shown as it is.
	Include func(file string) (string, bool)
	// Iterations of the power method. Default 30.
	Iterations int
}

// RankedMap renders a repository map ranked by PageRank over the view's
// file/definition graph: p = (1−α)s + αPᵀp (α = 0.85, P the default
// transition weights of graph.Transitions, forward edges: a definition
// many others use ranks high), s personalised to o.Files and o.Names.
// Definitions with a signature are taken in rank order — a file's
// header line ("path:") is paid for with its first definition — while
// the text stays within BudgetTokens·1.15, until it reaches
// BudgetTokens; the map then prints files in the order of their best
// definition and each file's signatures in rank order. Cost: O(iterations
// × edges) for the ranking, then O(nodes · log nodes). It returns the text
// and its tokens.
func RankedMap(v *graph.View, o MapOptions) (string, int) {
	if o.Boost == 0 {
		o.Boost = 200
	}
	if o.Iterations == 0 {
		o.Iterations = 30
	}
	n := v.N()
	shown := make([]string, n) // shown path per node ("" = excluded)
	s := make([]float64, n)
	names := map[string]bool{}
	for _, nm := range o.Names {
		names[nm] = true
	}
	sum := 0.0
	for id := graph.NodeID(0); int(id) < n; id++ {
		nd := v.Node(id)
		if nd == nil {
			continue
		}
		if nd.File != "" && nd.Kind != graph.Package {
			if o.Include == nil {
				shown[id] = nd.File
			} else if p, ok := o.Include(nd.File); ok {
				shown[id] = p
			}
		}
		w := 1.0
		for _, f := range o.Files {
			if f != "" && strings.HasPrefix(nd.File, f) {
				w = o.Boost
			}
		}
		if names[nd.Name] || names[nd.Name[strings.LastIndexByte(nd.Name, '.')+1:]] {
			w = o.Boost
		}
		s[id] = w
		sum += w
	}
	if sum == 0 {
		return "", 0
	}
	for i := range s {
		s[i] /= sum
	}
	po := graph.PPROptions{}
	po.EnsureDefaults()
	p := append([]float64(nil), s...)
	next := make([]float64, n)
	var steps []graph.Step
	for it := 0; it < o.Iterations; it++ {
		for i := range next {
			next[i] = 0
		}
		dangling := 0.0
		for u := graph.NodeID(0); int(u) < n; u++ {
			if p[u] == 0 {
				continue
			}
			steps = graph.Transitions(v, u, &po, steps)
			if len(steps) == 0 {
				dangling += p[u]
				continue
			}
			for _, st := range steps {
				next[st.To] += po.Alpha * p[u] * st.P
			}
		}
		for i := range next {
			next[i] += ((1 - po.Alpha) + po.Alpha*dangling) * s[i]
		}
		p, next = next, p
	}
	var defs []graph.NodeID
	for id := graph.NodeID(0); int(id) < n; id++ {
		if nd := v.Node(id); nd != nil && nd.Sig != "" && shown[id] != "" {
			defs = append(defs, id)
		}
	}
	sort.Slice(defs, func(i, j int) bool {
		if p[defs[i]] != p[defs[j]] {
			return p[defs[i]] > p[defs[j]]
		}
		return defs[i] < defs[j]
	})
	tok := func(b int) int { return (b + contract.DefaultBytesPerToken - 1) / contract.DefaultBytesPerToken }
	limit := o.BudgetTokens * 115 / 100
	var files []string
	byFile := map[string][]string{}
	bytes := 0
	for _, id := range defs {
		if tok(bytes) >= o.BudgetTokens {
			break
		}
		f := shown[id]
		line := "  " + v.Node(id).Sig + "\n"
		cost := len(line)
		if _, ok := byFile[f]; !ok {
			cost += len(f) + 2
		}
		if tok(bytes+cost) > limit {
			continue
		}
		if _, ok := byFile[f]; !ok {
			files = append(files, f)
			byFile[f] = nil
		}
		byFile[f] = append(byFile[f], line)
		bytes += cost
	}
	var b strings.Builder
	for _, f := range files {
		b.WriteString(f + ":\n")
		for _, l := range byFile[f] {
			b.WriteString(l)
		}
	}
	return b.String(), tok(b.Len())
}
