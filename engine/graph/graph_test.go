package graph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stratasearch/strata/internal/base"
)

// randomGraph builds a graph of n func nodes with about m random typed
// edges, seeded.
func randomGraph(seed uint64, n, m int) *Graph {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := NewBuilder()
	for i := 0; i < n; i++ {
		b.AddNode(Node{Kind: Func, Key: fmt.Sprintf("p.f%d", i), Name: fmt.Sprintf("f%d", i),
			File: fmt.Sprintf("/src/f%d.go", i%5), Line: 10 * i, EndLine: 10*i + 3, DocID: fmt.Sprintf("/src/f%d.go#L%d-L%d", i%5, 10*i, 10*i+3)})
	}
	kinds := []EdgeKind{Calls, Calls, References, Contains, Reads, Modifies}
	for j := 0; j < m; j++ {
		u, w := rng.IntN(n), rng.IntN(n)
		b.AddEdge(NodeID(u), NodeID(w), kinds[rng.IntN(len(kinds))], 10*u+1+rng.IntN(3))
	}
	return b.Build()
}

// powerIteration is the reference: p ← (1−α)s + α(Σ_u p(u)·P(u,·) + d·s)
// with d the mass on dangling (or hub) rows, iterated to a fixed point,
// over the dense transition matrix.
func powerIteration(v *View, seeds []Seed, o PPROptions) []float64 {
	o.EnsureDefaults()
	n := v.N()
	s := make([]float64, n)
	sum := 0.0
	for _, sd := range seeds {
		s[sd.Node] += sd.Weight
		sum += sd.Weight
	}
	for i := range s {
		s[i] /= sum
	}
	P := make([][]float64, n)
	for u := 0; u < n; u++ {
		P[u] = make([]float64, n)
		for _, st := range Transitions(v, NodeID(u), &o, nil) {
			P[u][st.To] += st.P
		}
	}
	p := append([]float64(nil), s...)
	for it := 0; it < 300; it++ { // 0.85^300 < 1e-21
		q := make([]float64, n)
		d := 0.0
		for u := 0; u < n; u++ {
			row := 0.0
			for w := 0; w < n; w++ {
				q[w] += o.Alpha * p[u] * P[u][w]
				row += P[u][w]
			}
			if row == 0 {
				d += p[u]
			}
		}
		for w := 0; w < n; w++ {
			q[w] += (1-o.Alpha)*s[w] + o.Alpha*d*s[w]
		}
		p = q
	}
	return p
}

func TestPPRMatchesPowerIteration(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		n := 10 + int(seed)*4
		g := randomGraph(seed, n, 3*n)
		v := NewView(g)
		seeds := []Seed{{Node: 0, Weight: 2}, {Node: NodeID(n / 2), Weight: 1}}
		o := PPROptions{Epsilon: 1e-12, MaxPushes: 10_000_000, HubDegree: 8}
		if seed%2 == 0 {
			o.Reverse = 0.5 // backward steps too
		}
		pr, err := PersonalizedPageRank(v, seeds, o)
		if err != nil {
			t.Fatal(err)
		}
		if pr.Capped {
			t.Fatalf("seed %d: capped", seed)
		}
		ref := powerIteration(v, seeds, o)
		l1 := 0.0
		for i := range ref {
			l1 += math.Abs(ref[i] - pr.Score[NodeID(i)])
		}
		if bound := 1e-12 * float64(n) * 10; l1 > bound+1e-9 {
			t.Errorf("seed %d (n=%d): L1 distance to power iteration %.3g", seed, n, l1)
		}
		sum := 0.0
		for _, x := range ref {
			sum += x
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("seed %d: reference mass %v", seed, sum)
		}
	}
}

// TestPPRLocal checks that the run's cost is bounded by the visited
// subgraph: on a long chain, a coarse epsilon visits a prefix only.
func TestPPRLocal(t *testing.T) {
	b := NewBuilder()
	const n = 5000
	for i := 0; i < n; i++ {
		b.AddNode(Node{Kind: Func, Key: fmt.Sprint(i), Name: fmt.Sprint(i)})
	}
	for i := 0; i+1 < n; i++ {
		b.AddEdge(NodeID(i), NodeID(i+1), Calls, 0)
	}
	v := NewView(b.Build())
	pr, err := PersonalizedPageRank(v, []Seed{{Node: 0, Weight: 1}}, PPROptions{Epsilon: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	if pr.Visited > 100 || pr.Pushes > 6667 {
		t.Errorf("visited %d nodes with %d pushes on a %d-node chain", pr.Visited, pr.Pushes, n)
	}
	if pr.Score[1] <= pr.Score[2] || pr.Score[2] <= pr.Score[3] {
		t.Errorf("scores do not decay along the chain: %v %v %v", pr.Score[1], pr.Score[2], pr.Score[3])
	}
}

func TestTransitionsWeights(t *testing.T) {
	b := NewBuilder()
	for _, k := range []string{"u", "call", "ref", "cont", "caller"} {
		b.AddNode(Node{Kind: Func, Key: k, Name: k})
	}
	b.AddEdge(0, 1, Calls, 1)
	b.AddEdge(0, 2, References, 2)
	b.AddEdge(0, 3, Contains, 3)
	b.AddEdge(4, 0, Calls, 4)
	v := NewView(b.Build())
	o := PPROptions{Reverse: 0.5}
	o.EnsureDefaults()
	// Weights 1, 0.5, 0.1 forward and 1×0.5 backward: total 2.1.
	want := map[NodeID]float64{1: 1 / 2.1, 2: 0.5 / 2.1, 3: 0.1 / 2.1, 4: 0.5 / 2.1}
	got := Transitions(v, 0, &o, nil)
	if len(got) != 4 {
		t.Fatalf("got %d steps", len(got))
	}
	for _, st := range got {
		if math.Abs(st.P-want[st.To]) > 1e-12 {
			t.Errorf("step to %d: P %v, want %v", st.To, st.P, want[st.To])
		}
		if st.Backward != (st.To == 4) {
			t.Errorf("step to %d: backward %v", st.To, st.Backward)
		}
	}
	fwd := PPROptions{}
	fwd.EnsureDefaults()
	if got := Transitions(v, 0, &fwd, nil); len(got) != 3 || math.Abs(got[0].P+got[1].P+got[2].P-1) > 1e-12 {
		t.Errorf("forward only: %+v", got)
	}
	o.HubDegree = 3 // node 0 has degree 4: a hub, not expanded
	if got := Transitions(v, 0, &o, nil); len(got) != 0 {
		t.Errorf("hub expanded: %v", got)
	}
}

func TestExpandBudgetAndPath(t *testing.T) {
	// entry -CALLS-> mid -CALLS-> root -READS-> hdr; noise referenced by entry.
	b := NewBuilder()
	add := func(k NodeKind, key, file string) NodeID {
		return b.AddNode(Node{Kind: k, Key: key, Name: key, File: file, DocID: file + "#" + key})
	}
	entry := add(Func, "handlePacket", "/r/net.go")
	mid := add(Func, "deserialize", "/r/parser.go")
	hdr := add(Type, "Header", "/r/schema.go")
	root := add(Func, "checkLen", "/r/parser.go")
	noise := add(Var, "logger", "/r/log.go")
	b.AddEdge(entry, mid, Calls, 3)
	b.AddEdge(mid, root, Calls, 7)
	b.AddEdge(root, hdr, Reads, 9)
	b.AddEdge(entry, noise, References, 4)
	v := NewView(b.Build())
	tokens := map[string]int{"/r/net.go#handlePacket": 30, "/r/parser.go#deserialize": 40, "/r/parser.go#checkLen": 50,
		"/r/schema.go#Header": 20, "/r/log.go#logger": 1000}
	ex, err := Expand(v, []Seed{{Node: entry, Weight: 1}}, ExpandOptions{BudgetTokens: 140, Tokens: func(d string) int { return tokens[d] }})
	if err != nil {
		t.Fatal(err)
	}
	if ex.TokensUsed != 140 {
		t.Fatalf("used %d of 140", ex.TokensUsed)
	}
	var got []string
	paths := map[string]string{}
	for _, c := range ex.Chosen {
		got = append(got, c.DocID)
		paths[c.DocID] = FormatPath(v, c.Path)
	}
	if len(got) != 4 || got[0] != "/r/net.go#handlePacket" {
		t.Fatalf("chosen %v", got)
	}
	if p := paths["/r/schema.go#Header"]; p != "handlePacket() -> CALLS parser.go:deserialize() -> CALLS parser.go:checkLen() -> READS schema.go:Header" {
		t.Errorf("path %q", p)
	}
	if ex.Skipped != 1 {
		t.Errorf("skipped %d, want 1 (the logger)", ex.Skipped)
	}
	if _, err := Expand(v, nil, ExpandOptions{BudgetTokens: 10}); err == nil {
		t.Error("no seeds: no error")
	}
}

func TestCodecRoundTrip(t *testing.T) {
	g := randomGraph(3, 200, 900)
	g.nodes[5].Sig = "func f5(x int) error"
	var buf bytes.Buffer
	if _, err := Encode(&buf, g); err != nil {
		t.Fatal(err)
	}
	h, err := Decode(buf.Bytes(), "x.graph")
	if err != nil {
		t.Fatal(err)
	}
	if h.N() != g.N() || h.NumEdges() != g.NumEdges() {
		t.Fatalf("decoded %d nodes %d edges, want %d %d", h.N(), h.NumEdges(), g.N(), g.NumEdges())
	}
	for i := 0; i < g.N(); i++ {
		if *g.Node(NodeID(i)) != *h.Node(NodeID(i)) {
			t.Fatalf("node %d: %+v != %+v", i, *h.Node(NodeID(i)), *g.Node(NodeID(i)))
		}
		a, c := g.Out(NodeID(i)), h.Out(NodeID(i))
		if len(a) != len(c) {
			t.Fatalf("node %d: %d out-edges, want %d", i, len(c), len(a))
		}
		for j := range a {
			if a[j] != c[j] {
				t.Fatalf("node %d edge %d: %+v != %+v", i, j, c[j], a[j])
			}
		}
		if len(g.In(NodeID(i))) != len(h.In(NodeID(i))) {
			t.Fatalf("node %d: in-degree differs", i)
		}
	}
	dir := t.TempDir()
	if _, err := WriteFile(dir+"/g", g); err != nil {
		t.Fatal(err)
	}
	if h, err := ReadFile(dir + "/g"); err != nil || h.N() != g.N() {
		t.Fatalf("ReadFile: %v", err)
	}
}

func TestCodecCorrupt(t *testing.T) {
	g := randomGraph(4, 30, 60)
	good := AppendEncoded(nil, g)
	// Every truncation and every single-byte flip is refused with a
	// CorruptError naming the path.
	for n := 0; n < len(good); n++ {
		_, err := Decode(good[:n], "t.graph")
		var ce *base.CorruptError
		if !errors.As(err, &ce) || ce.Path != "t.graph" {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	for i := 0; i < len(good); i++ {
		b := append([]byte(nil), good...)
		b[i] ^= 0x41
		if _, err := Decode(b, "t.graph"); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flip at %d: %v", i, err)
		}
	}
	// A newer version is refused at the version's offset.
	b := append([]byte(nil), good...)
	b[len(magic)] = 9
	var ce *base.CorruptError
	if _, err := Decode(b, "t.graph"); !errors.As(err, &ce) || ce.Offset != int64(len(magic)) {
		t.Fatalf("version 9: %v", err)
	}
	// A body error past a valid checksum reports its own offset.
	body := withCRC(append(append([]byte(nil), good[:len(good)-trailerSize]...), 0x05))
	if _, err := Decode(body, "t.graph"); !errors.As(err, &ce) || ce.Offset != int64(len(good)-trailerSize) {
		t.Fatalf("trailing byte: %v", err)
	}
}

// withCRC appends a valid trailer to an encoding without one.
func withCRC(b []byte) []byte {
	var t [4]byte
	c := crcOf(b[headerSize:])
	t[0], t[1], t[2], t[3] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
	return append(append(b, t[:]...), endMagic...)
}

func FuzzDecode(f *testing.F) {
	f.Add(AppendEncoded(nil, randomGraph(1, 5, 8)))
	f.Add(AppendEncoded(nil, randomGraph(2, 1, 0)))
	f.Add(AppendEncoded(nil, NewBuilder().Build()))
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(b []byte) {
			g, err := Decode(b, "fuzz")
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error not ErrCorrupt: %v", err)
				}
				return
			}
			// A decoded graph re-encodes to an equal graph.
			h, err := Decode(AppendEncoded(nil, g), "re")
			if err != nil || h.N() != g.N() || h.NumEdges() != g.NumEdges() {
				t.Fatalf("re-encode: %v", err)
			}
		}
		check(data)
		// The same bytes past the checksum, so mutations reach the sections.
		if len(data) >= headerSize+trailerSize {
			check(withCRC(append([]byte(nil), data[:len(data)-trailerSize]...)))
		}
	})
}

// TestCodecStringBomb: a string table whose every entry repeats its
// predecessor plus one byte would decode to quadratically many bytes; it
// is refused as corrupt instead.
func TestCodecStringBomb(t *testing.T) {
	const n = 40000
	b := append([]byte(magic), 1, 0, 0, 0)
	b = binary.AppendUvarint(b, n)
	for i := 0; i < n; i++ {
		p := i
		b = binary.AppendUvarint(b, uint64(p))
		b = append(b, 1, 'a')
	}
	b = append(b, 0) // no nodes
	b = withCRC(b)
	_, err := Decode(b, "bomb")
	var ce *base.CorruptError
	if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "expands") {
		t.Fatalf("bomb: %v", err)
	}
}
