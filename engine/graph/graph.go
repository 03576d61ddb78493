package graph

import (
	"fmt"
	"sort"
)

// NodeKind is what a node stands for.
type NodeKind uint8

// Node kinds.
const (
	File        NodeKind = 1 + iota // a source file
	Package                         // a package, module or namespace
	Type                            // a type: struct, interface, class, enum, trait, alias
	Func                            // a function or method
	Var                             // a package-level variable or constant, or a struct field
	maxNodeKind = Var
)

var nodeKindNames = [...]string{File: "file", Package: "package", Type: "type", Func: "func", Var: "var"}

func (k NodeKind) String() string {
	if k >= File && k <= maxNodeKind {
		return nodeKindNames[k]
	}
	return fmt.Sprintf("NodeKind(%d)", uint8(k))
}

// EdgeKind is the relation an edge records.
type EdgeKind uint8

// Edge kinds. From → To reads "From CALLS To", "File CONTAINS Func",
// "Package DECLARES Type", "File IMPORTS Package", "Type IMPLEMENTS
// Type", "Var TYPED_AS Type", "Func READS Var", "Func MODIFIES Var".
const (
	Contains EdgeKind = 1 + iota
	Declares
	Calls
	References
	Imports
	Implements
	Inherits
	TypedAs
	Reads
	Modifies
	maxEdgeKind = Modifies
)

// NumEdgeKinds is one more than the largest EdgeKind: the length of an
// array indexed by EdgeKind (Weights).
const NumEdgeKinds = int(maxEdgeKind) + 1

var edgeKindNames = [...]string{Contains: "CONTAINS", Declares: "DECLARES", Calls: "CALLS", References: "REFERENCES",
	Imports: "IMPORTS", Implements: "IMPLEMENTS", Inherits: "INHERITS", TypedAs: "TYPED_AS", Reads: "READS", Modifies: "MODIFIES"}

func (k EdgeKind) String() string {
	if k >= Contains && k <= maxEdgeKind {
		return edgeKindNames[k]
	}
	return fmt.Sprintf("EdgeKind(%d)", uint8(k))
}

// ParseEdgeKind returns the kind named s ("CALLS"), or false.
func ParseEdgeKind(s string) (EdgeKind, bool) {
	for k := Contains; k <= maxEdgeKind; k++ {
		if edgeKindNames[k] == s {
			return k, true
		}
	}
	return 0, false
}

// NodeID indexes a node of one Graph (0 … N()-1), or, in a View, of the
// view (base nodes first, then the delta's).
type NodeID uint32

// None is the NodeID of no node.
const None NodeID = 1<<32 - 1

// Node is one vertex. Key identifies it across builds and edits (a Go
// object's package path and name, "net/http.Server.Serve"; a file's
// path): a View resolves an edge into a replaced file by Key. Name is
// what a path serialisation prints ("Server.Serve", "Header"). File is
// the source file's path (a package: its directory). Line and EndLine
// are the definition's 1-based inclusive span (0 when unknown). DocID is
// the chunk (collection document id, ABS_PATH#Lx-Ly) that holds the
// definition, "" for nodes with no chunk of their own (packages, files).
// Sig is the one-line signature a repo map shows ("func (s *Server)
// Serve(l net.Listener) error"), "" when there is none.
type Node struct {
	Kind          NodeKind
	Key           string
	Name          string
	File          string
	Line, EndLine int
	DocID         string
	Sig           string
}

// Edge is one typed relation with its first site's line (1-based, in
// From's file; 0 when unknown) and how many sites it stands for.
type Edge struct {
	From, To NodeID
	Kind     EdgeKind
	Line     uint32
	Count    uint32
}

// Graph is an immutable graph in compressed-sparse-row form: nodes, the
// out-edges of node i at Out[outOff[i]:outOff[i+1]] sorted by (To, Kind),
// and the in-edges likewise (built on load, never stored). Safe for
// concurrent use.
type Graph struct {
	nodes  []Node
	out    []Edge
	outOff []uint32
	in     []Edge // sorted by (To, From)
	inOff  []uint32
	byKey  map[string]NodeID
}

// N is the number of nodes.
func (g *Graph) N() int { return len(g.nodes) }

// NumEdges is the number of edges.
func (g *Graph) NumEdges() int { return len(g.out) }

// Node returns node id (id < N()).
func (g *Graph) Node(id NodeID) *Node { return &g.nodes[id] }

// Out returns id's out-edges, sorted by (To, Kind). Do not modify.
func (g *Graph) Out(id NodeID) []Edge { return g.out[g.outOff[id]:g.outOff[id+1]] }

// In returns id's in-edges (Edge.From is the source), sorted by (From,
// Kind). Do not modify.
func (g *Graph) In(id NodeID) []Edge { return g.in[g.inOff[id]:g.inOff[id+1]] }

// Lookup returns the node with key, or None.
func (g *Graph) Lookup(key string) NodeID {
	if id, ok := g.byKey[key]; ok {
		return id
	}
	return None
}

// Builder collects nodes and edges; Build freezes them. Nodes are unique
// by Key (AddNode returns the existing id for a known key, merging empty
// fields). Edges are unique by (From, To, Kind): adding one again adds
// its Count and keeps the smallest non-zero Line. Not safe for
// concurrent use.
type Builder struct {
	nodes []Node
	byKey map[string]NodeID
	edges map[edgeKey]*Edge
}

type edgeKey struct {
	from, to NodeID
	kind     EdgeKind
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{byKey: map[string]NodeID{}, edges: map[edgeKey]*Edge{}}
}

// N is the number of nodes added so far.
func (b *Builder) N() int { return len(b.nodes) }

// Node returns an added node (to fill in fields after AddNode).
func (b *Builder) Node(id NodeID) *Node { return &b.nodes[id] }

// Lookup returns the id of the node with key, or None.
func (b *Builder) Lookup(key string) NodeID {
	if id, ok := b.byKey[key]; ok {
		return id
	}
	return None
}

// AddNode adds n (or finds the node with n.Key, filling its empty
// fields from n) and returns its id.
func (b *Builder) AddNode(n Node) NodeID {
	if id, ok := b.byKey[n.Key]; ok {
		o := &b.nodes[id]
		if o.Name == "" {
			o.Name = n.Name
		}
		if o.File == "" {
			o.File = n.File
		}
		if o.Line == 0 {
			o.Line, o.EndLine = n.Line, n.EndLine
		}
		if o.DocID == "" {
			o.DocID = n.DocID
		}
		if o.Sig == "" {
			o.Sig = n.Sig
		}
		return id
	}
	id := NodeID(len(b.nodes))
	b.nodes = append(b.nodes, n)
	b.byKey[n.Key] = id
	return id
}

// AddEdge adds one site of a from → to relation of the given kind at
// line (0 when unknown). A self-loop is kept (a recursive call).
func (b *Builder) AddEdge(from, to NodeID, kind EdgeKind, line int) {
	b.AddEdgeCount(from, to, kind, line, 1)
}

// AddEdgeCount adds count sites of a relation at once.
func (b *Builder) AddEdgeCount(from, to NodeID, kind EdgeKind, line int, count uint32) {
	k := edgeKey{from, to, kind}
	if e, ok := b.edges[k]; ok {
		e.Count += count
		if line > 0 && (e.Line == 0 || uint32(line) < e.Line) {
			e.Line = uint32(line)
		}
		return
	}
	b.edges[k] = &Edge{From: from, To: to, Kind: kind, Line: uint32(max(line, 0)), Count: count}
}

// Build freezes the builder into a Graph. The builder must not be used
// afterwards.
func (b *Builder) Build() *Graph {
	edges := make([]Edge, 0, len(b.edges))
	for _, e := range b.edges {
		edges = append(edges, *e)
	}
	return newGraph(b.nodes, edges)
}

// newGraph sorts edges into CSR form. Every edge's ends must be < len(nodes).
func newGraph(nodes []Node, edges []Edge) *Graph {
	sort.Slice(edges, func(i, j int) bool {
		a, c := edges[i], edges[j]
		if a.From != c.From {
			return a.From < c.From
		}
		if a.To != c.To {
			return a.To < c.To
		}
		return a.Kind < c.Kind
	})
	g := &Graph{nodes: nodes, out: edges, byKey: make(map[string]NodeID, len(nodes))}
	for i := range nodes {
		g.byKey[nodes[i].Key] = NodeID(i)
	}
	g.outOff = offsets(len(nodes), len(edges), func(i int) NodeID { return edges[i].From })
	in := make([]Edge, len(edges))
	copy(in, edges)
	sort.SliceStable(in, func(i, j int) bool { return in[i].To < in[j].To }) // stable: From order kept
	g.in = in
	g.inOff = offsets(len(nodes), len(in), func(i int) NodeID { return in[i].To })
	return g
}

// offsets returns the n+1 CSR offsets of m items sorted by node(i).
func offsets(n, m int, node func(int) NodeID) []uint32 {
	off := make([]uint32, n+1)
	for i := 0; i < m; i++ {
		off[node(i)+1]++
	}
	for i := 1; i <= n; i++ {
		off[i] += off[i-1]
	}
	return off
}
