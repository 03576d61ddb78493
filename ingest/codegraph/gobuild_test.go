package codegraph

import (
	"context"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stratasearch/strata/engine/graph"
)

// edges lists a graph's edges as "fromKey KIND toKey".
func edges(g *graph.Graph) map[string]bool {
	m := map[string]bool{}
	for i := 0; i < g.N(); i++ {
		for _, e := range g.Out(graph.NodeID(i)) {
			m[g.Node(e.From).Key+" "+e.Kind.String()+" "+g.Node(e.To).Key] = true
		}
	}
	return m
}

func loadTestdata(t *testing.T, dyn Dynamic) (*GoResult, *graph.Graph) {
	t.Helper()
	dir, _ := filepath.Abs("testdata/mod")
	r, err := BuildGo(context.Background(), dir, []string{"./..."}, GoOptions{Dynamic: dyn})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Errors) > 0 {
		t.Fatalf("load errors: %v", r.Errors)
	}
	return r, r.Graph()
}

func TestBuildGoEdges(t *testing.T) {
	_, g := loadTestdata(t, DynamicCHA)
	got := edges(g)
	const s, a = "example.com/mod/store", "example.com/mod/app"
	want := []string{
		s + ".Store.Put CALLS " + s + ".checkLen",      // direct
		s + ".Store.Put CALLS " + s + ".Raw.Encode",    // interface call, CHA
		s + ".Store.Put READS " + s + ".Limit",         // package var read
		s + ".Store.Put MODIFIES " + s + ".Header.Len", // field written through s.hdr.Len
		s + ".Store.Put READS " + s + ".Store.codec",   // field read
		s + ".Store.Put MODIFIES " + s + ".Store.recs",
		s + ".New REFERENCES " + s + ".Store",
		s + ".Raw IMPLEMENTS " + s + ".Codec",
		s + ".Store.hdr TYPED_AS " + s + ".Header",
		s + ".Store.codec TYPED_AS " + s + ".Codec",
		s + ".Store CONTAINS " + s + ".Store.Put",
		s + ".Store CONTAINS " + s + ".Store.recs",
		"pkg:" + s + " DECLARES " + s + ".New",
		a + ".Run CALLS " + s + ".New",
		a + ".Run READS " + a + ".apply",
		a + ".Run MODIFIES " + s + ".Limit",
		a + ".apply CALLS " + s + ".Store.Put",
		"file:" + abs(t, "testdata/mod/app/app.go") + " IMPORTS pkg:" + s,
		"pkg:" + a + " CONTAINS file:" + abs(t, "testdata/mod/app/app.go"),
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("missing edge %s", w)
		}
	}
	// No call edge invented: Run calls only New (apply is read, not a
	// function declaration); checkLen calls nothing.
	for e := range got {
		for _, bad := range []string{s + ".checkLen CALLS", a + ".Run CALLS " + s + ".Store.Put"} {
			if len(e) > len(bad) && e[:len(bad)] == bad {
				t.Errorf("unexpected edge %s", e)
			}
		}
	}
	// Without dynamic resolution the interface call is absent.
	_, g0 := loadTestdata(t, DynamicNone)
	if edges(g0)[s+".Store.Put CALLS "+s+".Raw.Encode"] {
		t.Error("DynamicNone resolved an interface call")
	}
	if !testing.Short() {
		_, gv := loadTestdata(t, DynamicVTA)
		if !edges(gv)[s+".Store.Put CALLS "+s+".Raw.Encode"] {
			t.Error("VTA missed the interface call")
		}
	}
}

func TestBuildGoDocIDs(t *testing.T) {
	_, g := loadTestdata(t, DynamicNone)
	put := g.Lookup("example.com/mod/store.Store.Put")
	if put == graph.None {
		t.Fatal("no Store.Put node")
	}
	n := g.Node(put)
	want := abs(t, "testdata/mod/store/store.go") + "#L34-L43"
	if n.DocID != want || n.Line != 35 || n.Kind != graph.Func {
		t.Errorf("Store.Put: doc %q line %d kind %v, want %q 35 func", n.DocID, n.Line, n.Kind, want)
	}
	if n.Sig != "func (s *Store) Put(v string) bool" {
		t.Errorf("sig %q", n.Sig)
	}
	var kinds []string
	for k := range g.Stats().NodesByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	if len(kinds) != 5 {
		t.Errorf("node kinds %v", kinds)
	}
}

func abs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
