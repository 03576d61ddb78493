package graph

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"path"
	"sort"
	"strings"
)

// PPROptions are the parameters of personalized PageRank. The zero value
// of a field means its default (EnsureDefaults).
type PPROptions struct {
	// Alpha is the probability of following an edge (PPR α) in
	// p = (1−α)·s + α·Pᵀp; 1−α is the teleport probability. Default 0.85.
	Alpha float64
	// Epsilon is the push threshold ε_PPR: a node is pushed while its
	// residual exceeds Epsilon, and a node whose score stays below it is
	// cut. Default 1e-4. The L1 error of the scores is at most the residual
	// mass left, < Epsilon × (nodes visited).
	Epsilon float64
	// Weights is the transition weight of an edge kind, followed forward
	// (caller → callee). Defaults: CALLS 1.0, READS 1.0, MODIFIES 1.0,
	// REFERENCES 0.5, TYPED_AS 0.5, IMPLEMENTS 0.5, INHERITS 0.5,
	// CONTAINS 0.1, DECLARES 0.1, IMPORTS 0.05. A negative weight turns a
	// kind off.
	Weights [NumEdgeKinds]float64
	// Reverse, when positive, lets the walk follow edges backwards too
	// (callee → caller, field → reader) at Weights[kind] × Reverse.
	// Default 0: forward only, P is the out-edge transition matrix (on the
	// multi-hop benchmark of bench/results/notes/graph.md, backward steps
	// at 0.5 halve the success rate: the mass climbs to callers).
	Reverse float64
	// HubDegree bounds the degree (in + out edges) of a node that is
	// expanded: a node above it (a logger, an allocator, a mutex) keeps
	// the mass it receives but does not pass it on (its α share returns to
	// the seeds, as a dangling node's does), and an edge into it is
	// weighted down by HubDegree/degree. Default 64.
	HubDegree int
	// MaxPushes caps the number of pushes (the work) of one run. Default
	// 200,000.
	MaxPushes int
}

// DefaultWeights returns the default transition weights by edge kind.
func DefaultWeights() [NumEdgeKinds]float64 {
	var w [NumEdgeKinds]float64
	w[Calls], w[Reads], w[Modifies] = 1, 1, 1
	w[References], w[TypedAs], w[Implements], w[Inherits] = 0.5, 0.5, 0.5, 0.5
	w[Contains], w[Declares] = 0.1, 0.1
	w[Imports] = 0.05
	return w
}

// EnsureDefaults fills zero fields with their defaults.
func (o *PPROptions) EnsureDefaults() {
	if o.Alpha == 0 {
		o.Alpha = 0.85
	}
	if o.Epsilon == 0 {
		o.Epsilon = 1e-4
	}
	var zero [NumEdgeKinds]float64
	if o.Weights == zero {
		o.Weights = DefaultWeights()
	}
	if o.HubDegree == 0 {
		o.HubDegree = 64
	}
	if o.MaxPushes == 0 {
		o.MaxPushes = 200_000
	}
}

// Validate reports every out-of-range field.
func (o *PPROptions) Validate() error {
	var errs []error
	if !(o.Alpha > 0 && o.Alpha < 1) {
		errs = append(errs, fmt.Errorf("graph: alpha %v outside (0, 1)", o.Alpha))
	}
	if !(o.Epsilon > 0 && o.Epsilon < 1) {
		errs = append(errs, fmt.Errorf("graph: epsilon %v outside (0, 1)", o.Epsilon))
	}
	if o.HubDegree < 1 {
		errs = append(errs, fmt.Errorf("graph: hub degree %d below 1", o.HubDegree))
	}
	if o.MaxPushes < 1 {
		errs = append(errs, fmt.Errorf("graph: max pushes %d below 1", o.MaxPushes))
	}
	return errors.Join(errs...)
}

// Step is one transition of the walk: to a neighbour, with its
// probability, over an edge of a kind, forward or backward.
type Step struct {
	To       NodeID
	P        float64
	Kind     EdgeKind
	Backward bool
	Line     uint32
}

// Transitions returns u's transition row: its live out-edges (and, with
// Reverse > 0, its in-edges backward) with probabilities proportional to
// Weights[kind] (× Reverse backwards) × min(1, HubDegree/degree(to)),
// summing to 1, or nil when u is dangling or a hub (degree above
// HubDegree). Edges to the same neighbour are separate steps. o must
// have its defaults.
func Transitions(v *View, u NodeID, o *PPROptions, dst []Step) []Step {
	dst = dst[:0]
	if v.Degree(u) > o.HubDegree {
		return dst
	}
	hub := func(to NodeID) float64 {
		if d := v.Degree(to); d > o.HubDegree {
			return float64(o.HubDegree) / float64(d)
		}
		return 1
	}
	total := 0.0
	v.Out(u, func(e Edge) bool {
		if w := o.Weights[e.Kind]; w > 0 {
			w *= hub(e.To)
			dst = append(dst, Step{To: e.To, P: w, Kind: e.Kind, Line: e.Line})
			total += w
		}
		return true
	})
	if o.Reverse > 0 {
		v.In(u, func(e Edge) bool {
			if w := o.Weights[e.Kind] * o.Reverse; w > 0 {
				w *= hub(e.From)
				dst = append(dst, Step{To: e.From, P: w, Kind: e.Kind, Backward: true, Line: e.Line})
				total += w
			}
			return true
		})
	}
	if total == 0 {
		return dst[:0]
	}
	for i := range dst {
		dst[i].P /= total
	}
	return dst
}

// Seed is one teleport target with its weight (a hit's score); weights
// are normalised to sum to 1.
type Seed struct {
	Node   NodeID
	Weight float64
}

// PPR is the outcome of one run: the scores of the nodes it reached.
type PPR struct {
	Score   map[NodeID]float64
	Pushes  int  // pushes done
	Visited int  // nodes that received mass
	Capped  bool // MaxPushes stopped the run before every residual fell below Epsilon
}

// PersonalizedPageRank approximates p = (1−α)s + αPᵀp (P the Transitions
// rows; a dangling or hub row returns its α share to s) with the push
// method of Andersen, Chung and Lang ("Local graph partitioning using
// PageRank vectors", FOCS 2006): p = 0, r = s; while some node u has
// r(u) > ε: p(u) += (1−α)r(u), each step u→w gets α·P(u,w)·r(u),
// r(u) = 0. Every push moves at least (1−α)ε of mass into p, so a run
// makes at most 1/((1−α)ε) pushes and its cost is bounded by the edges
// of the nodes it pushes — the visited subgraph — not by the graph.
// Seeds that are not live are ignored; an error for no live seed with a
// positive weight, or bad options.
func PersonalizedPageRank(v *View, seeds []Seed, o PPROptions) (*PPR, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	s := map[NodeID]float64{}
	sum := 0.0
	for _, sd := range seeds {
		if sd.Weight > 0 && !math.IsInf(sd.Weight, 0) && v.Live(sd.Node) {
			s[sd.Node] += sd.Weight
			sum += sd.Weight
		}
	}
	if sum == 0 {
		return nil, errors.New("graph: no live seed with a positive weight")
	}
	seedIDs := make([]NodeID, 0, len(s))
	for id := range s {
		s[id] /= sum
		seedIDs = append(seedIDs, id)
	}
	sort.Slice(seedIDs, func(i, j int) bool { return seedIDs[i] < seedIDs[j] })
	p := map[NodeID]float64{}
	r := map[NodeID]float64{}
	var queue []NodeID
	queued := map[NodeID]bool{}
	push := func(id NodeID, m float64) {
		r[id] += m
		if r[id] > o.Epsilon && !queued[id] {
			queued[id] = true
			queue = append(queue, id)
		}
	}
	for _, id := range seedIDs {
		push(id, s[id])
	}
	res := &PPR{Score: p}
	var steps []Step
	for len(queue) > 0 {
		if res.Pushes >= o.MaxPushes {
			res.Capped = true
			break
		}
		u := queue[0]
		queue = queue[1:]
		queued[u] = false
		ru := r[u]
		if ru <= o.Epsilon {
			continue
		}
		res.Pushes++
		r[u] = 0
		p[u] += (1 - o.Alpha) * ru
		steps = Transitions(v, u, &o, steps)
		if len(steps) == 0 {
			for _, id := range seedIDs {
				push(id, o.Alpha*ru*s[id])
			}
			continue
		}
		for _, st := range steps {
			push(st.To, o.Alpha*ru*st.P)
		}
	}
	for id := range r {
		if _, ok := p[id]; !ok {
			res.Visited++
		}
	}
	res.Visited += len(p)
	return res, nil
}

// ExpandOptions bound one expansion.
type ExpandOptions struct {
	PPR PPROptions
	// BudgetTokens is the token budget S_max the chosen chunks must fit.
	BudgetTokens int
	// Tokens returns the cost in tokens of a chunk (a DocID); nil counts
	// every chunk as 1.
	Tokens func(docID string) int
	// Cut drops a chunk whose best node scores below it. Default: PPR
	// Epsilon.
	Cut float64
}

// Chosen is one chunk an expansion selected.
type Chosen struct {
	DocID  string
	Node   NodeID // the chunk's best-scoring node
	Score  float64
	Tokens int
	Seed   bool // the node is a seed
	// Path is the best path from a seed to Node (Path[0] is the seed).
	Path []Step
}

// Expansion is the result of Expand.
type Expansion struct {
	Chosen       []Chosen
	TokensUsed   int
	BudgetTokens int
	Skipped      int // chunks above the cut that did not fit in the budget
	PPR          *PPR
}

// Expand runs PersonalizedPageRank from seeds, groups the nodes reached
// by chunk (DocID; nodes without one — packages, files — carry mass but
// are never chosen), cuts chunks scoring below Cut, and adds chunks in
// score order while they fit in BudgetTokens (a chunk that does not fit
// is skipped and smaller ones after it are still tried). Each chosen
// chunk carries the most probable path from a seed to its node
// (Dijkstra over −log P on the visited subgraph).
func Expand(v *View, seeds []Seed, o ExpandOptions) (*Expansion, error) {
	o.PPR.EnsureDefaults()
	if o.BudgetTokens <= 0 {
		return nil, fmt.Errorf("graph: token budget %d below 1", o.BudgetTokens)
	}
	if o.Cut == 0 {
		o.Cut = o.PPR.Epsilon
	}
	pr, err := PersonalizedPageRank(v, seeds, o.PPR)
	if err != nil {
		return nil, err
	}
	type cand struct {
		doc   string
		node  NodeID
		score float64
	}
	best := map[string]cand{}
	for id, sc := range pr.Score {
		n := v.Node(id)
		if n == nil || n.DocID == "" || sc < o.Cut {
			continue
		}
		if c, ok := best[n.DocID]; !ok || sc > c.score || (sc == c.score && id < c.node) {
			best[n.DocID] = cand{n.DocID, id, sc}
		}
	}
	cands := make([]cand, 0, len(best))
	for _, c := range best {
		cands = append(cands, c)
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].score != cands[j].score {
			return cands[i].score > cands[j].score
		}
		return cands[i].doc < cands[j].doc
	})
	isSeed := map[NodeID]bool{}
	for _, s := range seeds {
		isSeed[s.Node] = true
	}
	ex := &Expansion{BudgetTokens: o.BudgetTokens, PPR: pr}
	for _, c := range cands {
		t := 1
		if o.Tokens != nil {
			t = o.Tokens(c.doc)
		}
		if ex.TokensUsed+t > o.BudgetTokens {
			ex.Skipped++
			continue
		}
		ex.TokensUsed += t
		ex.Chosen = append(ex.Chosen, Chosen{DocID: c.doc, Node: c.node, Score: c.score, Tokens: t, Seed: isSeed[c.node]})
	}
	paths := bestPaths(v, seeds, pr, &o.PPR)
	for i := range ex.Chosen {
		ex.Chosen[i].Path = paths(ex.Chosen[i].Node)
	}
	return ex, nil
}

// bestPaths runs Dijkstra from the seeds over the nodes the run reached,
// edge cost −log P(step), and returns a function giving the path to a
// node (nil for an unreached one).
func bestPaths(v *View, seeds []Seed, pr *PPR, o *PPROptions) func(NodeID) []Step {
	dist := map[NodeID]float64{}
	prev := map[NodeID]Step{} // the step into a node; To is the node, Line the site, and From kept in from
	from := map[NodeID]NodeID{}
	h := &distHeap{}
	for _, s := range seeds {
		if v.Live(s.Node) {
			if _, ok := dist[s.Node]; !ok {
				dist[s.Node] = 0
				heap.Push(h, distItem{s.Node, 0})
			}
		}
	}
	var steps []Step
	for h.Len() > 0 {
		it := heap.Pop(h).(distItem)
		if it.d > dist[it.id] {
			continue
		}
		steps = Transitions(v, it.id, o, steps)
		for _, st := range steps {
			if _, reached := pr.Score[st.To]; !reached {
				continue
			}
			d := it.d - math.Log(st.P)
			if old, ok := dist[st.To]; !ok || d < old {
				dist[st.To] = d
				prev[st.To] = st
				from[st.To] = it.id
				heap.Push(h, distItem{st.To, d})
			}
		}
	}
	return func(id NodeID) []Step {
		if _, ok := dist[id]; !ok {
			return nil
		}
		var rev []Step
		for {
			st, ok := prev[id]
			if !ok {
				rev = append(rev, Step{To: id, P: 1})
				break
			}
			rev = append(rev, st)
			id = from[id]
		}
		for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
			rev[i], rev[j] = rev[j], rev[i]
		}
		return rev
	}
}

type distItem struct {
	id NodeID
	d  float64
}

type distHeap []distItem

func (h distHeap) Len() int { return len(h) }
func (h distHeap) Less(i, j int) bool {
	if h[i].d != h[j].d {
		return h[i].d < h[j].d
	}
	return h[i].id < h[j].id
}
func (h distHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *distHeap) Push(x any)   { *h = append(*h, x.(distItem)) }
func (h *distHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// FormatPath serialises a path compactly: the seed's name, then for each
// step " -> KIND file:name" forward or " <- KIND file:name" backward (the
// next node is the edge's source: "f() <- CALLS a.go:g()" reads "g calls
// f"); functions get "()", file is the base name of the node's file.
func FormatPath(v *View, p []Step) string {
	var b strings.Builder
	for i, st := range p {
		n := v.Node(st.To)
		if n == nil {
			continue
		}
		if i > 0 {
			if st.Backward {
				b.WriteString(" <- ")
			} else {
				b.WriteString(" -> ")
			}
			b.WriteString(st.Kind.String())
			b.WriteByte(' ')
			if n.File != "" && n.Kind != Package {
				b.WriteString(path.Base(n.File))
				b.WriteByte(':')
			}
		}
		b.WriteString(n.Name)
		if n.Kind == Func {
			b.WriteString("()")
		}
	}
	return b.String()
}
