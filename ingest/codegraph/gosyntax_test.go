package codegraph

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
)

// TestSyntaxFragmentMatchesTypes: on every file of the testdata module,
// the syntax-level fragment has exactly BuildGo's nodes, and each of its
// edges is one BuildGo (types) found.
func TestSyntaxFragmentMatchesTypes(t *testing.T) {
	r, g := loadTestdata(t, DynamicNone)
	typed := edges(g)
	v := graph.NewView(g)
	for _, fr := range r.Fragments {
		src, err := os.ReadFile(fr.File)
		if err != nil {
			t.Fatal(err)
		}
		pkg := fr.Nodes[0].Name
		sf, err := SyntaxFragment(fr.File, src, pkg, v, ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if a, b := nodeList(sf.Nodes), nodeList(fr.Nodes); a != b {
			t.Errorf("%s: nodes\n%s\nwant\n%s", fr.File, a, b)
		}
		sg := graph.FromFragments(append(otherFragments(r, fr.File), sf))
		n := 0
		for e := range edges(sg) {
			if !typed[e] {
				t.Errorf("%s: syntax edge %s not in the typed graph", fr.File, e)
			}
			n++
		}
		if n == 0 {
			t.Errorf("%s: no edges", fr.File)
		}
	}
}

func otherFragments(r *GoResult, file string) []*graph.Fragment {
	var out []*graph.Fragment
	for _, f := range r.Fragments {
		if f.File != file {
			out = append(out, f)
		}
	}
	return out
}

func nodeList(ns []graph.Node) string {
	var out []string
	for _, n := range ns {
		out = append(out, strings.Join([]string{n.Kind.String(), n.Key, n.Name, n.DocID, n.Sig}, "|"))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestSyntaxUpdate edits store.go (checkLen renamed checkSize, a new
// function) through the fast path and checks the view: the new edges are
// there, the replaced node is gone, and app.go's call into store.go
// still resolves.
func TestSyntaxUpdate(t *testing.T) {
	r, g := loadTestdata(t, DynamicCHA)
	st := graph.NewStore(g)
	file := abs(t, "testdata/mod/store/store.go")
	src, _ := os.ReadFile(file)
	edited := strings.ReplaceAll(string(src), "checkLen", "checkSize") + "\n// Reset empties s.\nfunc (s *Store) Reset() { s.recs = nil; Limit = checkSize(nil) }\n"
	fr, err := SyntaxFragment(file, []byte(edited), r.PkgOfDir[abs(t, "testdata/mod/store")], st.View(), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Apply(fr)
	v := st.View()
	const s = "example.com/mod/store"
	if v.Lookup(s+".checkLen") != graph.None || v.Lookup(s+".checkSize") == graph.None {
		t.Fatal("rename not visible")
	}
	has := func(from, kind, to string) bool {
		id := v.Lookup(from)
		found := false
		v.Out(id, func(e graph.Edge) bool {
			if e.Kind.String() == kind && v.Node(e.To).Key == to {
				found = true
			}
			return true
		})
		return found
	}
	for _, w := range [][3]string{
		{s + ".Store.Put", "CALLS", s + ".checkSize"},
		{s + ".Store.Reset", "CALLS", s + ".checkSize"},
		{s + ".Store.Reset", "MODIFIES", s + ".Store.recs"},
		{s + ".Store.Reset", "MODIFIES", s + ".Limit"},
		{"example.com/mod/app.Run", "CALLS", s + ".New"}, // from an unchanged file into the edited one
		{"example.com/mod/app.apply", "CALLS", s + ".Store.Put"},
	} {
		if !has(w[0], w[1], w[2]) {
			t.Errorf("missing %v", w)
		}
	}
	// Callers of Put (in app.go) are seen from the new node.
	callers := 0
	v.In(v.Lookup(s+".Store.Put"), func(e graph.Edge) bool {
		if e.Kind == graph.Calls {
			callers++
		}
		return true
	})
	if callers != 1 {
		t.Errorf("Put has %d callers in the view, want 1", callers)
	}
}
