package graph

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
)

// program is a model source tree: per file, the functions it defines and
// the calls each makes (by key); fragment turns a file into a Fragment.
type program map[string]map[string][]string

func (p program) fragment(file string) *Fragment {
	f := &Fragment{File: file}
	f.Nodes = append(f.Nodes, Node{Kind: Package, Key: "pkg", Name: "pkg", File: "/src"})
	fns := p[file]
	names := make([]string, 0, len(fns))
	for fn := range fns {
		names = append(names, fn)
	}
	sort.Strings(names)
	for i, fn := range names {
		f.Nodes = append(f.Nodes, Node{Kind: Func, Key: fn, Name: fn, File: file, Line: i + 1, EndLine: i + 1, DocID: file + "#" + fn})
		f.Edges = append(f.Edges, KeyEdge{From: "pkg", To: fn, Kind: Declares})
		for _, c := range fns[fn] {
			f.Edges = append(f.Edges, KeyEdge{From: fn, To: c, Kind: Calls, Line: uint32(i + 1), Count: 1})
		}
	}
	return f
}

func (p program) all() []*Fragment {
	var out []*Fragment
	for _, f := range p.files() {
		out = append(out, p.fragment(f))
	}
	return out
}

func (p program) files() []string {
	var fs []string
	for f := range p {
		fs = append(fs, f)
	}
	sort.Strings(fs)
	return fs
}

// edgeSet lists a view's live edges as "from KIND to" by key, sorted,
// read both from Out and from In.
func edgeSet(v *View) (out, in []string) {
	for id := NodeID(0); int(id) < v.N(); id++ {
		if !v.Live(id) {
			continue
		}
		v.Out(id, func(e Edge) bool {
			if !v.Live(e.To) {
				out = append(out, "DEAD TARGET")
			}
			out = append(out, fmt.Sprintf("%s %s %s", v.Node(e.From).Key, e.Kind, v.Node(e.To).Key))
			return true
		})
		v.In(id, func(e Edge) bool {
			if !v.Live(e.From) {
				in = append(in, "DEAD SOURCE")
			}
			in = append(in, fmt.Sprintf("%s %s %s", v.Node(e.From).Key, e.Kind, v.Node(e.To).Key))
			return true
		})
	}
	sort.Strings(out)
	sort.Strings(in)
	return out, in
}

func liveKeys(v *View) []string {
	var ks []string
	for id := NodeID(0); int(id) < v.N(); id++ {
		if n := v.Node(id); n != nil {
			ks = append(ks, n.Key)
		}
	}
	sort.Strings(ks)
	return ks
}

// TestViewMatchesRebuild applies random edits (functions renamed, added,
// removed; calls rewired; files deleted) through Store.Apply and checks
// after each that the view's nodes and edges equal a graph built from
// scratch from the edited program, and that no edge leads into a
// replaced node.
func TestViewMatchesRebuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	p := program{}
	nf := 0
	newFn := func() string { nf++; return fmt.Sprintf("f%d", nf) }
	for i := 0; i < 8; i++ {
		file := fmt.Sprintf("/src/%d.go", i)
		p[file] = map[string][]string{}
		for j := 0; j < 4; j++ {
			p[file][newFn()] = nil
		}
	}
	allFns := func() []string {
		var fs []string
		for _, file := range p.files() {
			for fn := range p[file] {
				fs = append(fs, fn)
			}
		}
		sort.Strings(fs)
		return fs
	}
	rewire := func(file string) {
		fs := allFns()
		for fn := range p[file] {
			var calls []string
			for k := rng.IntN(4); k > 0; k-- {
				calls = append(calls, fs[rng.IntN(len(fs))])
			}
			p[file][fn] = calls
		}
	}
	for _, file := range p.files() {
		rewire(file)
	}
	st := NewStore(FromFragments(p.all()))
	for step := 0; step < 40; step++ {
		var edited []*Fragment
		for _, file := range p.files() {
			if rng.IntN(4) != 0 {
				continue
			}
			switch rng.IntN(5) {
			case 0: // rename a function
				for fn := range p[file] {
					calls := p[file][fn]
					delete(p[file], fn)
					p[file][newFn()] = calls
					break
				}
			case 1:
				p[file][newFn()] = nil
			case 2:
				if step%7 == 3 {
					delete(p, file) // the file is gone
					edited = append(edited, &Fragment{File: file})
					continue
				}
			}
			rewire(file)
			edited = append(edited, p.fragment(file))
		}
		if step%10 == 9 {
			st.SetBase(FromFragments(p.all()), st.View().Epoch())
		} else {
			st.Apply(edited...)
		}
		v := st.View()
		want := NewView(FromFragments(p.all()))
		if a, b := fmt.Sprint(liveKeys(v)), fmt.Sprint(liveKeys(want)); a != b {
			t.Fatalf("step %d: nodes\n%s\nwant\n%s", step, a, b)
		}
		gotOut, gotIn := edgeSet(v)
		wantOut, _ := edgeSet(want)
		if a, b := fmt.Sprint(gotOut), fmt.Sprint(wantOut); a != b {
			t.Fatalf("step %d: out-edges\n%s\nwant\n%s", step, a, b)
		}
		if a, b := fmt.Sprint(gotIn), fmt.Sprint(wantOut); a != b {
			t.Fatalf("step %d: in-edges\n%s\nwant\n%s", step, a, b)
		}
		// The view folded into a graph of its own has the same nodes and
		// edges, with the same lines and counts.
		folded := NewView(v.Graph())
		if a, b := fmt.Sprint(liveKeys(folded)), fmt.Sprint(liveKeys(want)); a != b {
			t.Fatalf("step %d: folded nodes\n%s\nwant\n%s", step, a, b)
		}
		if a, b := fmt.Sprint(edgeSites(folded)), fmt.Sprint(edgeSites(want)); a != b {
			t.Fatalf("step %d: folded edges\n%s\nwant\n%s", step, a, b)
		}
		if a, b := fmt.Sprint(edgeSites(v)), fmt.Sprint(edgeSites(want)); a != b {
			t.Fatalf("step %d: edge sites\n%s\nwant\n%s", step, a, b)
		}
		if step%10 == 4 {
			st.SetBase(v.Graph(), v.Epoch())
		}
	}
}

// edgeSites lists a view's live out-edges with their line and count.
func edgeSites(v *View) []string {
	var out []string
	for id := NodeID(0); int(id) < v.N(); id++ {
		v.Out(id, func(e Edge) bool {
			out = append(out, fmt.Sprintf("%s %s %s @%d x%d", v.Node(e.From).Key, e.Kind, v.Node(e.To).Key, e.Line, e.Count))
			return true
		})
	}
	sort.Strings(out)
	return out
}

// TestViewSnapshotIsolation: a view taken before an edit keeps its nodes
// and edges after Apply moves the store on.
func TestViewSnapshotIsolation(t *testing.T) {
	p := program{"/a.go": {"a": {"b"}}, "/b.go": {"b": nil}}
	st := NewStore(FromFragments(p.all()))
	before := st.View()
	p["/b.go"] = map[string][]string{"c": nil}
	p["/a.go"]["a"] = []string{"c"}
	st.Apply(p.fragment("/a.go"), p.fragment("/b.go"))
	if before.Lookup("b") == None || before.Lookup("c") != None {
		t.Fatal("old view changed")
	}
	after := st.View()
	if after.Lookup("b") != None || after.Lookup("c") == None || after.Epoch() != before.Epoch()+1 {
		t.Fatal("new view wrong")
	}
	if got := after.ByDoc("/b.go#c"); len(got) != 1 {
		t.Fatalf("ByDoc: %v", got)
	}
}
