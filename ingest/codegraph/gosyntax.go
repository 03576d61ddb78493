package codegraph

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
)

// SyntaxFragment builds one Go file's fragment from its syntax alone
// (go/parser, no type checking): the fast path after an edit, while a
// BuildGo rebuild may run in the background. pkgPath is the file's
// package import path; v (may be nil) is the current view, used to learn
// the kind of a name the file uses but does not declare. It finds the
// same nodes as BuildGo with the same keys; its edges are those a name
// resolves by scope and import: an unqualified name not declared locally
// is the package's (pkgPath.name), pkg.Name is the imported package's,
// recv.M and recv.f on a method's receiver are the receiver type's
// method and field. Calls through other values (x.M() with x not the
// receiver), dynamic calls and IMPLEMENTS need types and are left to
// BuildGo. Errors: a file that does not parse.
func SyntaxFragment(path string, src []byte, pkgPath string, v *graph.View, chunk ingest.Options) (*graph.Fragment, error) {
	chunk.EnsureDefaults()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("codegraph: %w", err)
	}
	return syntaxFragment(fset, f, path, src, pkgPath, viewKinds(v), chunk, nil), nil
}

// kindFunc tells the kind of the node with a key a file uses but does
// not declare, false when it is unknown.
type kindFunc func(key string) (graph.NodeKind, bool)

// viewKinds looks keys up in v (nil: none known).
func viewKinds(v *graph.View) kindFunc {
	return func(key string) (graph.NodeKind, bool) {
		if v != nil {
			if id := v.Lookup(key); id != graph.None {
				return v.Node(id).Kind, true
			}
		}
		return 0, false
	}
}

// syntaxFragment is SyntaxFragment over a parsed file (f is not
// modified), with kinds for the names the file does not declare.
func syntaxFragment(fset *token.FileSet, f *ast.File, path string, src []byte, pkgPath string, kinds kindFunc, chunk ingest.Options, cache *sigCache) *graph.Fragment {
	line := func(p token.Pos) int { return fset.PositionFor(p, false).Line }
	ch := chunksOf(path, ingest.ChunkGoFile(fset, f, ingest.NewLines(src), chunk))
	fr := &graph.Fragment{File: path}
	pk, fk := pkgKey(pkgPath), fileKey(path)
	fr.Nodes = append(fr.Nodes, graph.Node{Kind: graph.Package, Key: pk, Name: pkgPath, File: filepath.Dir(path)},
		graph.Node{Kind: graph.File, Key: fk, Name: filepath.Base(path), File: path})
	fr.Edges = append(fr.Edges, graph.KeyEdge{From: pk, To: fk, Kind: graph.Contains})
	imports := map[string]string{} // local name → import path
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = p
		fr.Edges = append(fr.Edges, graph.KeyEdge{From: fk, To: pkgKey(p), Kind: graph.Imports, Line: uint32(line(im.Pos()))})
	}
	local := map[string]graph.NodeKind{} // keys this file declares
	add := func(kind graph.NodeKind, key, name string, n ast.Node, owner, sig string) {
		l := line(n.Pos())
		fr.Nodes = append(fr.Nodes, graph.Node{Kind: kind, Key: key, Name: name, File: path, Line: l, EndLine: line(n.End()),
			DocID: ch.at(l), Sig: sig})
		fr.Edges = append(fr.Edges, graph.KeyEdge{From: fk, To: key, Kind: graph.Contains, Line: uint32(l)})
		if owner != "" {
			fr.Edges = append(fr.Edges, graph.KeyEdge{From: owner, To: key, Kind: graph.Contains, Line: uint32(l)})
		} else {
			fr.Edges = append(fr.Edges, graph.KeyEdge{From: pk, To: key, Kind: graph.Declares, Line: uint32(l)})
		}
		local[key] = kind
	}
	type body struct {
		from string
		recv string // receiver name and type, for methods
		rtyp string
		node ast.Node
	}
	var bodies []body
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			key, name, owner := pkgPath+"."+d.Name.Name, d.Name.Name, ""
			var recv string
			var rtyp string
			if d.Recv != nil && len(d.Recv.List) > 0 {
				rtyp = recvTypeName(d.Recv.List[0].Type)
				if rtyp == "" {
					continue
				}
				key, name, owner = pkgPath+"."+rtyp+"."+d.Name.Name, rtyp+"."+d.Name.Name, pkgPath+"."+rtyp
				if len(d.Recv.List[0].Names) > 0 {
					recv = d.Recv.List[0].Names[0].Name
				}
			} else if d.Name.Name == "init" || d.Name.Name == "_" {
				continue
			}
			add(graph.Func, key, name, d, owner, "")
			// Not the declared name itself (a method's name is not in scope).
			for _, n := range []ast.Node{d.Recv, d.Type, d.Body} {
				if n != nil && !reflectNil(n) {
					bodies = append(bodies, body{key, recv, rtyp, n})
				}
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					var n ast.Node = s
					if len(d.Specs) == 1 {
						n = d
					}
					tk := pkgPath + "." + s.Name.Name
					add(graph.Type, tk, s.Name.Name, n, "", "")
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, fl := range st.Fields.List {
							for _, nm := range fieldNames(fl) {
								if nm == "_" {
									continue
								}
								l := line(fl.Pos())
								key := tk + "." + nm
								fr.Nodes = append(fr.Nodes, graph.Node{Kind: graph.Var, Key: key, Name: s.Name.Name + "." + nm, File: path,
									Line: l, EndLine: l, DocID: ch.at(l)})
								fr.Edges = append(fr.Edges, graph.KeyEdge{From: tk, To: key, Kind: graph.Contains, Line: uint32(l)})
								local[key] = graph.Var
							}
						}
					}
					bodies = append(bodies, body{from: tk, node: s.Type})
				case *ast.ValueSpec:
					for i, n := range s.Names {
						if n.Name == "_" {
							continue
						}
						key := pkgPath + "." + n.Name
						add(graph.Var, key, n.Name, s, "", "")
						var init ast.Node
						if i < len(s.Values) {
							init = s.Values[i]
						} else if len(s.Values) == 1 {
							init = s.Values[0]
						}
						if init != nil {
							bodies = append(bodies, body{from: key, node: init})
						}
					}
				}
			}
		}
	}
	sigs := declSigs(fset, f, pkgPath, src, cache)
	for i := range fr.Nodes {
		if s, ok := sigs[fr.Nodes[i].Key]; ok {
			fr.Nodes[i].Sig = s
		}
	}
	kindOf := func(key string) (graph.NodeKind, bool) {
		if k, ok := local[key]; ok {
			return k, true
		}
		return kinds(key)
	}
	top := map[any]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			top[d] = true
		case *ast.GenDecl:
			for _, s := range d.Specs {
				top[s] = true
			}
		}
	}
	// The bodies are disjoint subtrees and a node's marks come from its
	// ancestors, so one pair of mark sets serves them all.
	callee, written := map[ast.Node]bool{}, map[ast.Node]bool{}
	for _, b := range bodies {
		syntaxUses(fr, b.from, b.recv, b.rtyp, b.node, pkgPath, imports, top, kindOf, line, callee, written)
	}
	return fr
}

// syntaxFile is one Go file of a syntaxBatch. fset and f are its parse
// (parser.ParseComments) when parsed is set (f nil: it does not parse);
// syntaxBatch parses a file that is not.
type syntaxFile struct {
	path, pkg string
	src       []byte
	parsed    bool
	fset      *token.FileSet
	f         *ast.File
}

// parse parses sf once.
func (sf *syntaxFile) parse() {
	if sf.parsed {
		return
	}
	sf.parsed = true
	sf.fset = token.NewFileSet()
	f, err := parser.ParseFile(sf.fset, sf.path, sf.src, parser.ParseComments)
	if err != nil {
		f = nil
	}
	sf.f = f
}

// parseAll parses the files not yet parsed, one goroutine per core.
func parseAll(files []syntaxFile) {
	parallel(len(files), func(i int) { files[i].parse() })
}

// parallel runs do(0..n-1) on min(GOMAXPROCS, n) goroutines.
func parallel(n int, do func(i int)) {
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for w := min(runtime.GOMAXPROCS(0), n); w > 0; w-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				do(i)
			}
		}()
	}
	wg.Wait()
}

// syntaxBatch builds the fragments of several edited Go files at once,
// as SyntaxFragment does one by one, except that a name one file uses
// and another file of the batch newly declares resolves too (a file
// whose lookups missed such a name is rebuilt from its parse with the
// batch's declarations known). A file that does not parse gets an empty
// fragment.
func syntaxBatch(files []syntaxFile, v *graph.View, chunk ingest.Options, cache *sigCache) []*graph.Fragment {
	chunk.EnsureDefaults()
	type parsed struct {
		fset   *token.FileSet
		f      *ast.File
		missed map[string]bool
	}
	ps := make([]parsed, len(files))
	frags := make([]*graph.Fragment, len(files))
	view := viewKinds(v)
	// The files are independent until the rebuild below: one goroutine
	// per core.
	parallel(len(files), func(i int) {
		sf := &files[i]
		sf.parse()
		if sf.f == nil {
			frags[i] = &graph.Fragment{File: sf.path}
			return
		}
		missed := map[string]bool{}
		ps[i] = parsed{sf.fset, sf.f, missed}
		frags[i] = syntaxFragment(sf.fset, sf.f, sf.path, sf.src, sf.pkg, func(key string) (graph.NodeKind, bool) {
			k, ok := view(key)
			if !ok {
				missed[key] = true
			}
			return k, ok
		}, chunk, cache)
	})
	if len(files) < 2 {
		return frags
	}
	declared := map[string]graph.NodeKind{}
	for _, fr := range frags {
		for _, n := range fr.Nodes {
			if n.Kind != graph.Package && n.Kind != graph.File {
				declared[n.Key] = n.Kind
			}
		}
	}
	both := func(key string) (graph.NodeKind, bool) {
		if k, ok := declared[key]; ok {
			return k, true
		}
		return view(key)
	}
	for i, p := range ps {
		for key := range p.missed {
			if _, ok := declared[key]; ok {
				frags[i] = syntaxFragment(p.fset, p.f, files[i].path, files[i].src, files[i].pkg, both, chunk, cache)
				break
			}
		}
	}
	return frags
}

// reflectNil reports a typed nil node (a *ast.FieldList or *ast.BlockStmt
// that is nil inside the interface).
func reflectNil(n ast.Node) bool {
	switch x := n.(type) {
	case *ast.FieldList:
		return x == nil
	case *ast.BlockStmt:
		return x == nil
	case *ast.FuncType:
		return x == nil
	}
	return false
}

func fieldNames(fl *ast.Field) []string {
	if len(fl.Names) > 0 {
		out := make([]string, len(fl.Names))
		for i, n := range fl.Names {
			out[i] = n.Name
		}
		return out
	}
	// An embedded field is named by its type.
	if n := recvTypeName(fl.Type); n != "" {
		return []string{n}
	}
	if s, ok := fl.Type.(*ast.SelectorExpr); ok {
		return []string{s.Sel.Name}
	}
	if st, ok := fl.Type.(*ast.StarExpr); ok {
		if s, ok := st.X.(*ast.SelectorExpr); ok {
			return []string{s.Sel.Name}
		}
	}
	return nil
}

// recvTypeName returns T for T, *T, T[K], *T[K, V].
func recvTypeName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// declSigs prints each top-level declaration's head: a func without its
// body, "type T struct", "var X T".
func declSigs(fset *token.FileSet, f *ast.File, pkgPath string, src []byte, cache *sigCache) map[string]string {
	out := map[string]string{}
	var buf bytes.Buffer
	// sig is clipSig of the printed node n, from the cache when the
	// source text of [from, n.End()) is known (kind tells the cases
	// apart).
	sig := func(kind byte, from token.Pos, n ast.Node, print func() (string, bool)) (string, bool) {
		var key string
		if cache != nil && src != nil {
			if tf := fset.File(from); tf != nil && tf == fset.File(n.End()) {
				lo, hi := tf.Offset(from), tf.Offset(n.End())
				if 0 <= lo && lo <= hi && hi <= len(src) {
					key = string(kind) + string(src[lo:hi])
					if s, ok := cache.get(key); ok {
						return s, true
					}
				}
			}
		}
		s, ok := print()
		if ok && key != "" {
			cache.put(key, s)
		}
		return s, ok
	}
	printed := func(n any) (string, bool) {
		buf.Reset()
		if printer.Fprint(&buf, fset, n) != nil {
			return "", false
		}
		return buf.String(), true
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			key := pkgPath + "." + d.Name.Name
			if d.Recv != nil && len(d.Recv.List) > 0 {
				key = pkgPath + "." + recvTypeName(d.Recv.List[0].Type) + "." + d.Name.Name
			}
			// The head is printed from the func keyword through the
			// result list: that span's text.
			if s, ok := sig('f', d.Pos(), d.Type, func() (string, bool) {
				h := *d
				h.Body, h.Doc = nil, nil
				s, ok := printed(&h)
				return clipSig(s), ok
			}); ok {
				out[key] = s
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					kind := ""
					switch s.Type.(type) {
					case *ast.StructType:
						kind = "struct"
					case *ast.InterfaceType:
						kind = "interface"
					default:
						kind, _ = sig('t', s.Type.Pos(), s.Type, func() (string, bool) { return printed(s.Type) })
					}
					out[pkgPath+"."+s.Name.Name] = clipSig("type " + s.Name.Name + " " + kind)
				case *ast.ValueSpec:
					typ := ""
					if s.Type != nil {
						if t, ok := sig('t', s.Type.Pos(), s.Type, func() (string, bool) { return printed(s.Type) }); ok {
							typ = " " + t
						}
					}
					for _, n := range s.Names {
						out[pkgPath+"."+n.Name] = clipSig(d.Tok.String() + " " + n.Name + typ)
					}
				}
			}
		}
	}
	return out
}

// sigCache remembers what declSigs printed, by the source text printed
// (kind byte first): the printed head, whitespace collapsed, depends on
// that text alone. Each generation keeps the entries looked up or added
// since the last rotate and drops the rest, so the cache holds the
// declarations of one batch of files. Safe for concurrent use.
type sigCache struct {
	mu        sync.Mutex
	prev, cur map[string]string
}

func (c *sigCache) get(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.cur[key]; ok {
		return s, true
	}
	s, ok := c.prev[key]
	if ok {
		c.putLocked(key, s)
	}
	return s, ok
}

func (c *sigCache) put(key, s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(key, s)
}

func (c *sigCache) putLocked(key, s string) {
	if c.cur == nil {
		c.cur = map[string]string{}
	}
	c.cur[key] = s
}

// rotate starts a generation: entries not used since the last rotate go.
func (c *sigCache) rotate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.prev, c.cur = c.cur, nil
}

func clipSig(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

// syntaxUses records what the declaration node (keyed from) uses, by
// name resolution without types. callee and written collect the nodes
// below n that are called and written (the caller may share them between
// disjoint subtrees).
func syntaxUses(fr *graph.Fragment, from, recv, rtyp string, n ast.Node, pkgPath string, imports map[string]string, top map[any]bool,
	kindOf func(string) (graph.NodeKind, bool), line func(token.Pos) int, callee, written map[ast.Node]bool) {
	var lhs func(e ast.Expr)
	lhs = func(e ast.Expr) {
		switch x := e.(type) {
		case *ast.ParenExpr:
			lhs(x.X)
		case *ast.Ident:
			written[x] = true
		case *ast.SelectorExpr:
			written[x] = true
		case *ast.IndexExpr:
			lhs(x.X)
		case *ast.StarExpr:
			lhs(x.X)
		}
	}
	// mark records, at a call, an assignment, ++/-- or &x, which of the
	// nodes below it are called or written. The walk below is pre-order,
	// so a node is marked before it is reached.
	mark := func(n ast.Node) {
		switch x := n.(type) {
		case *ast.CallExpr:
			fun := ast.Unparen(x.Fun)
			if ix, ok := fun.(*ast.IndexExpr); ok {
				fun = ix.X
			} else if ix, ok := fun.(*ast.IndexListExpr); ok {
				fun = ix.X
			}
			callee[fun] = true
		case *ast.AssignStmt:
			if x.Tok != token.DEFINE {
				for _, e := range x.Lhs {
					lhs(e)
				}
			}
		case *ast.IncDecStmt:
			lhs(x.X)
		case *ast.UnaryExpr:
			if x.Op == token.AND {
				lhs(x.X)
			}
		}
	}
	emit := func(key string, at ast.Node, pos token.Pos) {
		if key == from {
			return
		}
		k, ok := kindOf(key)
		if !ok {
			return
		}
		var kind graph.EdgeKind
		switch k {
		case graph.Func:
			kind = graph.References
			if callee[at] {
				kind = graph.Calls
			}
		case graph.Type:
			kind = graph.References
		case graph.Var:
			kind = graph.Reads
			if written[at] {
				kind = graph.Modifies
			}
		default:
			return
		}
		fr.Edges = append(fr.Edges, graph.KeyEdge{From: from, To: key, Kind: kind, Line: uint32(line(pos)), Count: 1})
	}
	var walk func(n ast.Node) bool
	walk = func(n ast.Node) bool {
		mark(n)
		switch x := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok {
				if p, ok := imports[id.Name]; ok && id.Obj == nil && !top[id] {
					emit(p+"."+x.Sel.Name, x, x.Sel.Pos())
					return false
				}
				if recv != "" && id.Name == recv && id.Obj != nil && id.Obj.Kind == ast.Var {
					emit(pkgPath+"."+rtyp+"."+x.Sel.Name, x, x.Sel.Pos())
					return false
				}
			}
			ast.Inspect(x.X, walk)
			return false // x.Sel is a field or method of an unknown type
		case *ast.KeyValueExpr:
			// A composite literal's key may be a field name: skip it.
			if _, ok := x.Key.(*ast.Ident); ok {
				ast.Inspect(x.Value, walk)
				return false
			}
		case *ast.Ident:
			// Unresolved (declared in another file of the package, or
			// universe) or resolved to this file's top level.
			if (x.Obj == nil || top[x.Obj.Decl]) && x.Name != "_" {
				emit(pkgPath+"."+x.Name, x, x.Pos())
			}
		}
		return true
	}
	ast.Inspect(n, walk)
}
