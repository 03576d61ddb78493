package graph

import (
	"sort"
	"sync"
	"sync/atomic"
)

// Fragment is what one source file contributes to a graph: the nodes
// whose File is that file, and the edges they own, with both ends named
// by Key. An edge belongs to the fragment of its From node's file; a
// CONTAINS or DECLARES edge from a node that has no file of its own (a
// Package) into one of the fragment's nodes belongs to the fragment too.
// A Fragment with no nodes removes the file. A fragment may carry the
// Package nodes its edges name; they join the view only when no live
// node has their key.
type Fragment struct {
	File  string
	Nodes []Node
	Edges []KeyEdge
}

// KeyEdge is an edge whose ends are named by Key.
type KeyEdge struct {
	From, To    string
	Kind        EdgeKind
	Line, Count uint32
}

// FromFragments builds a graph of the fragments' nodes (unique by Key;
// a Package node may be in several fragments) and their edges (an edge
// whose end no fragment defines is dropped). The graph equals the view a
// Store reaches by applying the same fragments to any base.
func FromFragments(frags []*Fragment) *Graph {
	b := NewBuilder()
	for _, f := range frags {
		for _, n := range f.Nodes {
			b.AddNode(n)
		}
	}
	for _, f := range frags {
		for _, e := range f.Edges {
			from, to := b.Lookup(e.From), b.Lookup(e.To)
			if from != None && to != None {
				b.AddEdgeCount(from, to, e.Kind, int(e.Line), max(e.Count, 1))
			}
		}
	}
	return b.Build()
}

// Store holds the current View of a graph and moves it forward one epoch
// per update. Readers take View() (one atomic load) and keep using that
// immutable view for a whole expansion, so no expansion ever follows an
// edge into a node an edit replaced after it started. Safe for
// concurrent use.
type Store struct {
	mu   sync.Mutex // serialises Apply and SetBase
	cur  atomic.Pointer[View]
	base *baseIndex
}

// baseIndex is what the store derives once per base graph.
type baseIndex struct {
	g      *Graph
	byFile map[string][]NodeID
	byDoc  map[string][]NodeID
}

func newBaseIndex(g *Graph) *baseIndex {
	bi := &baseIndex{g: g, byFile: map[string][]NodeID{}, byDoc: map[string][]NodeID{}}
	for i := range g.nodes {
		n := &g.nodes[i]
		if n.Kind != Package && n.File != "" {
			bi.byFile[n.File] = append(bi.byFile[n.File], NodeID(i))
		}
		if n.DocID != "" {
			bi.byDoc[n.DocID] = append(bi.byDoc[n.DocID], NodeID(i))
		}
	}
	return bi
}

// NewStore returns a store whose first view (epoch 0) is g.
func NewStore(g *Graph) *Store {
	s := &Store{base: newBaseIndex(g)}
	s.cur.Store(buildView(s.base, 0, nil))
	return s
}

// View returns the current view.
func (s *Store) View() *View { return s.cur.Load() }

// Apply replaces, in one step, every node and edge of the fragments'
// files by the fragments' (the old ones are tombstoned, the new ones
// join the delta) and returns the new view's epoch. Cost: O(size of the
// delta + in-degree of the replaced nodes), independent of the graph's
// size.
func (s *Store) Apply(frags ...*Fragment) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.cur.Load()
	e := old.epoch + 1
	delta := make(map[string]deltaFile, len(old.delta)+len(frags))
	for f, d := range old.delta {
		delta[f] = d
	}
	for _, f := range frags {
		delta[f.File] = deltaFile{frag: f, epoch: e}
	}
	s.cur.Store(buildView(s.base, e, delta))
	return e
}

// SetBase installs a rebuilt base graph (a compiler-level build) that
// reflects the sources as of epoch since (the epoch the rebuild started
// at): fragments applied after since stay in the delta over the new
// base, older ones are dropped. It returns the new view's epoch.
func (s *Store) SetBase(g *Graph, since uint64) uint64 {
	bi := newBaseIndex(g)
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.cur.Load()
	e := old.epoch + 1
	delta := map[string]deltaFile{}
	for f, d := range old.delta {
		if d.epoch > since {
			delta[f] = d
		}
	}
	s.base = bi
	s.cur.Store(buildView(bi, e, delta))
	return e
}

type deltaFile struct {
	frag  *Fragment
	epoch uint64
}

// View is one epoch of a graph: (base − tombstones) ∪ delta. Base node
// ids are the base graph's; delta nodes follow them (Base().N() + i). A
// base edge into a tombstoned node is followed to the delta node with the
// same Key, if there is one (the caller's file did not change, so its
// call still names that function), and dropped otherwise; one from a
// Package node into a tombstoned node is dropped (the fragment re-states
// it). Immutable; safe for concurrent use.
type View struct {
	epoch uint64
	base  *baseIndex
	dead  []uint64 // bitset over base nodes
	delta map[string]deltaFile

	dnodes   []Node
	dkey     map[string]NodeID
	dout     map[NodeID][]Edge // out-edges of delta nodes and fragment edges from base nodes
	din      map[NodeID][]Edge // in-edges from delta nodes, and redirected base in-edges of delta nodes
	ddoc     map[string][]NodeID
	numDelta int
}

// NewView returns a view of g alone (epoch 0, no delta).
func NewView(g *Graph) *View { return buildView(newBaseIndex(g), 0, nil) }

func buildView(bi *baseIndex, epoch uint64, delta map[string]deltaFile) *View {
	g := bi.g
	v := &View{epoch: epoch, base: bi, delta: delta, dead: make([]uint64, (g.N()+63)/64),
		dkey: map[string]NodeID{}, dout: map[NodeID][]Edge{}, din: map[NodeID][]Edge{}, ddoc: map[string][]NodeID{}}
	for f := range delta {
		for _, id := range bi.byFile[f] {
			v.dead[id/64] |= 1 << (id % 64)
		}
	}
	files := make([]string, 0, len(delta))
	for f := range delta {
		files = append(files, f)
	}
	sort.Strings(files) // delta ids do not depend on map order
	for _, f := range files {
		for _, n := range delta[f].frag.Nodes {
			id := NodeID(g.N() + len(v.dnodes))
			if _, dup := v.dkey[n.Key]; dup {
				continue
			}
			if n.Kind == Package && g.Lookup(n.Key) != None {
				continue // packages outlive their files' edits
			}
			v.dnodes = append(v.dnodes, n)
			v.dkey[n.Key] = id
			if n.DocID != "" {
				v.ddoc[n.DocID] = append(v.ddoc[n.DocID], id)
			}
		}
	}
	v.numDelta = len(v.dnodes)
	// Delta edges, merged by (From, To, Kind) as a Builder merges them.
	merged := map[edgeKey]int{}
	var dedges []Edge
	for _, f := range files {
		for _, ke := range delta[f].frag.Edges {
			from, to := v.Lookup(ke.From), v.Lookup(ke.To)
			if from == None || to == None {
				continue
			}
			k := edgeKey{from, to, ke.Kind}
			if i, ok := merged[k]; ok {
				e := &dedges[i]
				e.Count += max(ke.Count, 1)
				if ke.Line > 0 && (e.Line == 0 || ke.Line < e.Line) {
					e.Line = ke.Line
				}
				continue
			}
			merged[k] = len(dedges)
			dedges = append(dedges, Edge{From: from, To: to, Kind: ke.Kind, Line: ke.Line, Count: max(ke.Count, 1)})
		}
	}
	for _, e := range dedges {
		v.dout[e.From] = append(v.dout[e.From], e)
		v.din[e.To] = append(v.din[e.To], e)
	}
	// Callers in unchanged files keep their edges into a replaced node
	// whose key the delta still defines.
	for i := range v.dnodes {
		id := NodeID(g.N() + i)
		old := g.Lookup(v.dnodes[i].Key)
		if old == None || !v.isDead(old) {
			continue
		}
		for _, e := range g.In(old) {
			if v.isDead(e.From) || g.nodes[e.From].Kind == Package {
				continue
			}
			e.To = id
			v.din[id] = append(v.din[id], e)
		}
	}
	return v
}

func (v *View) isDead(id NodeID) bool { return v.dead[id/64]&(1<<(id%64)) != 0 }

// Epoch is the view's epoch (0 for a new store; +1 per Apply or SetBase).
func (v *View) Epoch() uint64 { return v.epoch }

// Base returns the base graph.
func (v *View) Base() *Graph { return v.base.g }

// DeltaNodes is the number of nodes in the delta.
func (v *View) DeltaNodes() int { return v.numDelta }

// N is the size of the view's id space: base nodes plus delta nodes
// (tombstoned base ids included).
func (v *View) N() int { return v.base.g.N() + v.numDelta }

// Live reports whether id is a node of this view.
func (v *View) Live(id NodeID) bool {
	nb := NodeID(v.base.g.N())
	if id < nb {
		return !v.isDead(id)
	}
	return int(id-nb) < v.numDelta
}

// Node returns node id, or nil when id is not live in this view.
func (v *View) Node(id NodeID) *Node {
	nb := NodeID(v.base.g.N())
	if id < nb {
		if v.isDead(id) {
			return nil
		}
		return &v.base.g.nodes[id]
	}
	if int(id-nb) < v.numDelta {
		return &v.dnodes[id-nb]
	}
	return nil
}

// Lookup returns the live node with key (the delta's first), or None.
func (v *View) Lookup(key string) NodeID {
	if id, ok := v.dkey[key]; ok {
		return id
	}
	if id := v.base.g.Lookup(key); id != None && !v.isDead(id) {
		return id
	}
	return None
}

// ByDoc returns the live nodes whose DocID is doc.
func (v *View) ByDoc(doc string) []NodeID {
	var out []NodeID
	for _, id := range v.base.byDoc[doc] {
		if !v.isDead(id) {
			out = append(out, id)
		}
	}
	return append(out, v.ddoc[doc]...)
}

// Out calls fn for each live out-edge of id until fn returns false.
func (v *View) Out(id NodeID, fn func(Edge) bool) {
	g := v.base.g
	if int(id) < g.N() {
		if v.isDead(id) {
			return
		}
		pkg := g.nodes[id].Kind == Package
		for _, e := range g.Out(id) {
			if v.isDead(e.To) {
				if pkg {
					continue
				}
				to, ok := v.dkey[g.nodes[e.To].Key]
				if !ok {
					continue
				}
				e.To = to
			}
			if !fn(e) {
				return
			}
		}
	}
	for _, e := range v.dout[id] {
		if !fn(e) {
			return
		}
	}
}

// In calls fn for each live in-edge of id (Edge.From is the source)
// until fn returns false.
func (v *View) In(id NodeID, fn func(Edge) bool) {
	g := v.base.g
	if int(id) < g.N() {
		if v.isDead(id) {
			return
		}
		for _, e := range g.In(id) {
			if v.isDead(e.From) {
				continue
			}
			if !fn(e) {
				return
			}
		}
	}
	for _, e := range v.din[id] {
		if !fn(e) {
			return
		}
	}
}

// Degree returns the number of id's out- and in-edges: exact for delta
// nodes, an upper bound for base nodes (tombstoned neighbours counted),
// in O(1).
func (v *View) Degree(id NodeID) int {
	g := v.base.g
	d := len(v.dout[id]) + len(v.din[id])
	if int(id) < g.N() {
		d += int(g.outOff[id+1]-g.outOff[id]) + int(g.inOff[id+1]-g.inOff[id])
	}
	return d
}

// Graph returns the view as a graph of its own: its live nodes,
// renumbered densely in view-id order, and their live edges. It is what
// SetBase installs to fold the delta into the base, and what WriteFile
// persists after live updates; NewView(v.Graph()) has v's nodes and
// edges. Cost O(N + E) of the view.
func (v *View) Graph() *Graph {
	b := NewBuilder()
	ids := make([]NodeID, v.N())
	for id := range ids {
		ids[id] = None
		if n := v.Node(NodeID(id)); n != nil {
			ids[id] = b.AddNode(*n)
		}
	}
	for id := range ids {
		if ids[id] == None {
			continue
		}
		v.Out(NodeID(id), func(e Edge) bool {
			if to := ids[e.To]; to != None {
				b.AddEdgeCount(ids[id], to, e.Kind, int(e.Line), e.Count)
			}
			return true
		})
	}
	return b.Build()
}
