package codegraph

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/callgraph/vta"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
)

// Dynamic names how calls through interfaces and function values are
// resolved.
type Dynamic string

const (
	// DynamicNone records direct calls only (go/types: a call whose callee
	// is a function or a concrete method).
	DynamicNone Dynamic = "none"
	// DynamicCHA adds x/tools/go/callgraph/cha's edges for dynamic call
	// sites: an interface call goes to every method of that name and
	// signature on a type that implements the interface; a function-value
	// call to every function of its signature whose address is taken.
	DynamicCHA Dynamic = "cha"
	// DynamicVTA refines CHA with variable type analysis
	// (x/tools/go/callgraph/vta): only the types and functions that flow
	// to the site. More precise, and several times slower to build.
	DynamicVTA Dynamic = "vta"
)

// GoOptions configures BuildGo. Zero fields take their defaults.
type GoOptions struct {
	// Dynamic resolves interface and function-value calls. Default
	// DynamicVTA (on GOROOT/src's std it adds 20k dynamic CALLS edges
	// where CHA adds 215k, for about twice CHA's build time).
	Dynamic Dynamic
	// Tests includes the packages' _test.go files. Default false.
	Tests bool
	// Chunk is the chunking ingestion used, so that node DocIDs are the
	// collection's chunk ids. Default: ingest's defaults.
	Chunk ingest.Options
}

// GoResult is the outcome of BuildGo.
type GoResult struct {
	// Fragments holds one fragment per Go file (graph.FromFragments
	// builds the graph); package nodes are repeated in each of their
	// files' fragments.
	Fragments []*graph.Fragment
	// PkgOfDir maps a package directory to its import path (the key
	// prefix of the syntax-level update).
	PkgOfDir map[string]string
	// Files is the number of files, SourceBytes their total size.
	Files       int
	SourceBytes int64
	// Errors lists the load and type errors met (the graph covers what
	// type-checked).
	Errors []string
}

// Graph builds the result's graph.
func (r *GoResult) Graph() *graph.Graph { return graph.FromFragments(r.Fragments) }

// Keys. Every key is computable from syntax alone given the package
// path (SyntaxFragment uses them too):
//
//	package   pkg:IMPORTPATH
//	file      file:ABSPATH
//	func      IMPORTPATH.Name
//	method    IMPORTPATH.Recv.Name (Recv the receiver's base type name)
//	type      IMPORTPATH.Name
//	var/const IMPORTPATH.Name
//	field     IMPORTPATH.Type.Field
func pkgKey(path string) string  { return "pkg:" + path }
func fileKey(path string) string { return "file:" + path }

// BuildGo loads the packages matching patterns in dir with
// golang.org/x/tools/go/packages (types and syntax from source) and
// returns their graph as per-file fragments. Nodes: one per package,
// file, top-level func, method, type, var and const, and struct field of
// a top-level type. Edges: package CONTAINS file, package DECLARES and
// file CONTAINS each top-level definition, type CONTAINS its methods and
// fields, file IMPORTS package, CALLS (direct from go/types, dynamic from
// callgraph per o.Dynamic), REFERENCES (a function used as a value, a
// type named), READS and MODIFIES (package-level variables and struct
// fields; an assignment's left side, ++/--, and taking the address
// modify), TYPED_AS (a var, const or field → the named type it has; a
// defined type → the type it is defined from), IMPLEMENTS (a concrete
// named type → an interface of its own package or a package it
// imports). A use inside a function literal or a local declaration
// counts for the enclosing top-level definition. Errors: the load's own
// (packages that fail to type-check are kept, their errors listed).
func BuildGo(ctx context.Context, dir string, patterns []string, o GoOptions) (*GoResult, error) {
	if o.Dynamic == "" {
		o.Dynamic = DynamicVTA
	}
	switch o.Dynamic {
	case DynamicNone, DynamicCHA, DynamicVTA:
	default:
		return nil, fmt.Errorf("codegraph: dynamic call resolution %q (none | cha | vta)", o.Dynamic)
	}
	o.Chunk.EnsureDefaults()
	cfg := &packages.Config{
		Context: ctx, Dir: dir, Tests: o.Tests,
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes |
			packages.NeedTypesInfo | packages.NeedImports | packages.NeedDeps,
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("codegraph: load %v in %s: %w", patterns, dir, err)
	}
	if len(pkgs) == 0 {
		return nil, errors.New("codegraph: no packages matched")
	}
	b := &goBuilder{o: o, res: &GoResult{PkgOfDir: map[string]string{}}, frags: map[string]*graph.Fragment{},
		fieldKey: map[*types.Var]string{}, objFile: map[types.Object]string{}}
	// Tests=true lists a package twice (with and without its tests): keep
	// the largest variant of each path.
	byPath := map[string]*packages.Package{}
	for _, p := range pkgs {
		if q := byPath[p.PkgPath]; q == nil || len(p.Syntax) > len(q.Syntax) {
			byPath[p.PkgPath] = p
		}
		for _, e := range p.Errors {
			b.res.Errors = append(b.res.Errors, e.Error())
		}
	}
	var paths []string
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var list []*packages.Package
	for _, p := range paths {
		if pk := byPath[p]; pk.Types != nil && pk.TypesInfo != nil {
			list = append(list, pk)
		}
	}
	for _, p := range list {
		if err := b.declare(p); err != nil {
			return nil, err
		}
	}
	for _, p := range list {
		b.uses(p)
	}
	b.implements(list)
	if o.Dynamic != DynamicNone {
		b.dynamic(list)
	}
	files := make([]string, 0, len(b.frags))
	for f := range b.frags {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		b.res.Fragments = append(b.res.Fragments, b.frags[f])
	}
	return b.res, nil
}

type goBuilder struct {
	o     GoOptions
	res   *GoResult
	frags map[string]*graph.Fragment
	// fieldKey names the fields of top-level struct types.
	fieldKey map[*types.Var]string
	// objFile is the file that declares each top-level object.
	objFile map[types.Object]string
	fset    *token.FileSet
}

func (b *goBuilder) frag(file string) *graph.Fragment {
	f := b.frags[file]
	if f == nil {
		f = &graph.Fragment{File: file}
		b.frags[file] = f
	}
	return f
}

// objKey returns the key of a top-level object (or a field, method of a
// top-level type), or "" for anything local.
func (b *goBuilder) objKey(obj types.Object) string {
	if obj == nil || obj.Pkg() == nil {
		return ""
	}
	switch o := obj.(type) {
	case *types.Func:
		return FuncKey(o)
	case *types.Var:
		if o.IsField() {
			return b.fieldKey[o.Origin()]
		}
		if o.Parent() != o.Pkg().Scope() {
			return ""
		}
		return o.Pkg().Path() + "." + o.Name()
	case *types.Const, *types.TypeName:
		if o.Parent() != o.Pkg().Scope() {
			return ""
		}
		return o.Pkg().Path() + "." + o.Name()
	}
	return ""
}

// FuncKey returns the graph key of a top-level function or of a method
// of a named non-interface type ("PATH.Name", "PATH.Recv.Name"), "" for
// anything else (a local function, an interface method).
func FuncKey(o *types.Func) string {
	if o == nil || o.Pkg() == nil {
		return ""
	}
	o = o.Origin()
	sig, _ := o.Type().(*types.Signature)
	if sig != nil && sig.Recv() != nil {
		name := recvBase(sig.Recv().Type())
		if name == "" {
			return "" // an interface method
		}
		return o.Pkg().Path() + "." + name + "." + o.Name()
	}
	if o.Parent() != o.Pkg().Scope() {
		return ""
	}
	return o.Pkg().Path() + "." + o.Name()
}

// SSAFuncKey returns the key of the top-level definition an SSA function
// belongs to (a closure: its outermost parent; an instantiation: its
// origin), "" for synthetic functions (wrappers, thunks, package init).
func SSAFuncKey(fn *ssa.Function) string {
	for fn != nil && fn.Parent() != nil {
		fn = fn.Parent()
	}
	if fn == nil {
		return ""
	}
	if o := fn.Origin(); o != nil {
		fn = o
	}
	f, _ := fn.Object().(*types.Func)
	return FuncKey(f)
}

// recvBase returns the name of a receiver's named type (T for *T, T[K]),
// "" for an interface.
func recvBase(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	switch n := types.Unalias(t).(type) {
	case *types.Named:
		if _, iface := n.Underlying().(*types.Interface); iface {
			return ""
		}
		return n.Obj().Name()
	}
	return ""
}

// namedKey returns the key of the package-level named type a type
// expression denotes through pointers, slices, arrays, maps (the value)
// and channels, or "".
func (b *goBuilder) namedKey(t types.Type) string {
	for i := 0; i < 8; i++ {
		switch u := types.Unalias(t).(type) {
		case *types.Named:
			return b.objKey(u.Origin().Obj())
		case *types.Pointer:
			t = u.Elem()
		case *types.Slice:
			t = u.Elem()
		case *types.Array:
			t = u.Elem()
		case *types.Map:
			t = u.Elem()
		case *types.Chan:
			t = u.Elem()
		default:
			return ""
		}
	}
	return ""
}

// chunks maps each line of a file to the chunk id that holds it.
type chunks struct {
	ids   []string
	start []int
	end   []int
}

func (c *chunks) at(line int) string {
	i := sort.Search(len(c.start), func(i int) bool { return c.end[i] >= line })
	if i < len(c.start) && c.start[i] <= line {
		return c.ids[i]
	}
	return ""
}

func fileChunks(path string, src []byte, o ingest.Options) *chunks {
	return chunksOf(path, ingest.ChunkFile(path, src, o))
}

func chunksOf(path string, cs []ingest.Chunk) *chunks {
	c := &chunks{}
	for _, ch := range cs {
		c.ids = append(c.ids, ingest.ChunkID(path, fmt.Sprintf("L%d-L%d", ch.StartLine, ch.EndLine)))
		c.start = append(c.start, ch.StartLine)
		c.end = append(c.end, ch.EndLine)
	}
	return c
}

// declare adds p's package, file and definition nodes and their
// structural edges.
func (b *goBuilder) declare(p *packages.Package) error {
	b.fset = p.Fset
	pk := pkgKey(p.PkgPath)
	pkgNode := graph.Node{Kind: graph.Package, Key: pk, Name: p.PkgPath}
	for _, f := range p.Syntax {
		path := p.Fset.PositionFor(f.Package, false).Filename
		if path == "" || !strings.HasSuffix(path, ".go") {
			continue
		}
		if pkgNode.File == "" {
			pkgNode.File = filepath.Dir(path)
			b.res.PkgOfDir[pkgNode.File] = p.PkgPath
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("codegraph: %w", err)
		}
		b.res.Files++
		b.res.SourceBytes += int64(len(src))
		ch := fileChunks(path, src, b.o.Chunk)
		sigs := declSigs(p.Fset, f, p.PkgPath, nil, nil)
		fr := b.frag(path)
		fk := fileKey(path)
		fr.Nodes = append(fr.Nodes, pkgNode, graph.Node{Kind: graph.File, Key: fk, Name: filepath.Base(path), File: path})
		fr.Edges = append(fr.Edges, graph.KeyEdge{From: pk, To: fk, Kind: graph.Contains})
		for _, im := range f.Imports {
			if pn, ok := p.Imports[strings.Trim(im.Path.Value, `"`)]; ok {
				fr.Edges = append(fr.Edges, graph.KeyEdge{From: fk, To: pkgKey(pn.PkgPath), Kind: graph.Imports, Line: uint32(b.line(im.Pos()))})
			}
		}
		add := func(kind graph.NodeKind, obj types.Object, name string, node ast.Node, owner string) string {
			key := b.objKey(obj)
			if key == "" {
				return ""
			}
			l, e := b.line(node.Pos()), b.line(node.End())
			fr.Nodes = append(fr.Nodes, graph.Node{Kind: kind, Key: key, Name: name, File: path, Line: l, EndLine: e,
				DocID: ch.at(l), Sig: sigs[key]})
			fr.Edges = append(fr.Edges, graph.KeyEdge{From: fk, To: key, Kind: graph.Contains, Line: uint32(l)})
			if owner != "" {
				fr.Edges = append(fr.Edges, graph.KeyEdge{From: owner, To: key, Kind: graph.Contains, Line: uint32(l)})
			} else {
				fr.Edges = append(fr.Edges, graph.KeyEdge{From: pk, To: key, Kind: graph.Declares, Line: uint32(l)})
			}
			b.objFile[obj] = path
			return key
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				obj := p.TypesInfo.Defs[d.Name]
				if obj == nil {
					continue
				}
				name, owner := d.Name.Name, ""
				if d.Recv != nil && len(d.Recv.List) > 0 {
					if r := recvBase(obj.Type().(*types.Signature).Recv().Type()); r != "" {
						name, owner = r+"."+d.Name.Name, p.PkgPath+"."+r
					}
				}
				add(graph.Func, obj, name, d, owner)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						obj := p.TypesInfo.Defs[s.Name]
						if obj == nil {
							continue
						}
						var node ast.Node = s
						if len(d.Specs) == 1 {
							node = d
						}
						tk := add(graph.Type, obj, s.Name.Name, node, "")
						if tk == "" {
							continue
						}
						if st, ok := obj.Type().Underlying().(*types.Struct); ok {
							if stx, ok := s.Type.(*ast.StructType); ok {
								b.fields(fr, path, ch, tk, s.Name.Name, st, stx)
							}
						}
					case *ast.ValueSpec:
						kind := graph.Var
						for _, n := range s.Names {
							if n.Name == "_" {
								continue
							}
							if obj := p.TypesInfo.Defs[n]; obj != nil {
								add(kind, obj, n.Name, s, "")
							}
						}
					}
				}
			}
		}
	}
	return nil
}

// fields adds the named fields of a top-level struct type.
func (b *goBuilder) fields(fr *graph.Fragment, path string, ch *chunks, tk, tname string, st *types.Struct, stx *ast.StructType) {
	for i := 0; i < st.NumFields(); i++ {
		v := st.Field(i)
		if v.Name() == "_" {
			continue
		}
		key := tk + "." + v.Name()
		b.fieldKey[v] = key
		l := b.line(v.Pos())
		fr.Nodes = append(fr.Nodes, graph.Node{Kind: graph.Var, Key: key, Name: tname + "." + v.Name(), File: path,
			Line: l, EndLine: l, DocID: ch.at(l)})
		fr.Edges = append(fr.Edges, graph.KeyEdge{From: tk, To: key, Kind: graph.Contains, Line: uint32(l)})
	}
}

func (b *goBuilder) line(p token.Pos) int { return b.fset.PositionFor(p, false).Line }

// uses adds the CALLS, REFERENCES, READS, MODIFIES and TYPED_AS edges of
// p's declarations.
func (b *goBuilder) uses(p *packages.Package) {
	b.fset = p.Fset
	info := p.TypesInfo
	for _, f := range p.Syntax {
		path := p.Fset.PositionFor(f.Package, false).Filename
		fr := b.frags[path]
		if fr == nil {
			continue
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if from := b.objKey(info.Defs[d.Name]); from != "" {
					b.body(fr, info, from, d)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						obj := info.Defs[s.Name]
						from := b.objKey(obj)
						if from == "" {
							continue
						}
						// A defined type TYPED_AS the named type it is defined from.
						if tv, ok := info.Types[s.Type]; ok {
							if to := b.namedKey(tv.Type); to != "" && to != from {
								fr.Edges = append(fr.Edges, graph.KeyEdge{From: from, To: to, Kind: graph.TypedAs, Line: uint32(b.line(s.Pos()))})
							}
						}
						if st, ok := obj.Type().Underlying().(*types.Struct); ok {
							for i := 0; i < st.NumFields(); i++ {
								v := st.Field(i)
								if fk := b.fieldKey[v]; fk != "" {
									if to := b.namedKey(v.Type()); to != "" {
										fr.Edges = append(fr.Edges, graph.KeyEdge{From: fk, To: to, Kind: graph.TypedAs, Line: uint32(b.line(v.Pos()))})
									}
								}
							}
						}
						b.body(fr, info, from, s.Type)
					case *ast.ValueSpec:
						for i, n := range s.Names {
							obj := info.Defs[n]
							from := b.objKey(obj)
							if from == "" {
								continue
							}
							if to := b.namedKey(obj.Type()); to != "" {
								fr.Edges = append(fr.Edges, graph.KeyEdge{From: from, To: to, Kind: graph.TypedAs, Line: uint32(b.line(n.Pos()))})
							}
							if i < len(s.Values) {
								b.body(fr, info, from, s.Values[i])
							} else if len(s.Values) == 1 {
								b.body(fr, info, from, s.Values[0])
							}
						}
					}
				}
			}
		}
	}
}

// body walks a declaration's syntax and records what from uses.
func (b *goBuilder) body(fr *graph.Fragment, info *types.Info, from string, n ast.Node) {
	if n == nil {
		return
	}
	callee := map[*ast.Ident]bool{} // idents in a call's function position
	written := map[*ast.Ident]bool{}
	lhs := func(e ast.Expr) {
		for {
			switch x := e.(type) {
			case *ast.ParenExpr:
				e = x.X
				continue
			case *ast.Ident:
				written[x] = true
			case *ast.SelectorExpr:
				written[x.Sel] = true
			case *ast.IndexExpr:
				e = x.X // a[i] = v modifies a's elements
				continue
			case *ast.StarExpr:
				e = x.X
				continue
			}
			return
		}
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			fun := ast.Unparen(x.Fun)
			if ix, ok := fun.(*ast.IndexExpr); ok { // f[T](…)
				fun = ix.X
			} else if ix, ok := fun.(*ast.IndexListExpr); ok {
				fun = ix.X
			}
			var id *ast.Ident
			switch f := fun.(type) {
			case *ast.Ident:
				id = f
			case *ast.SelectorExpr:
				id = f.Sel
			}
			if id != nil {
				callee[id] = true
			}
			if fn := typeutil.StaticCallee(info, x); fn != nil {
				if to := b.objKey(fn); to != "" {
					fr.Edges = append(fr.Edges, graph.KeyEdge{From: from, To: to, Kind: graph.Calls, Line: uint32(b.line(x.Lparen)), Count: 1})
				}
			}
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
		return true
	})
	ast.Inspect(n, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok {
			return true
		}
		obj := info.Uses[id]
		if obj == nil {
			return true
		}
		to := b.objKey(obj)
		if to == "" || to == from {
			return true
		}
		line := uint32(b.line(id.Pos()))
		var kind graph.EdgeKind
		switch obj.(type) {
		case *types.Func:
			if callee[id] {
				return true // a call: recorded above
			}
			kind = graph.References
		case *types.TypeName:
			kind = graph.References
		case *types.Var, *types.Const:
			kind = graph.Reads
			if written[id] {
				kind = graph.Modifies
			}
		default:
			return true
		}
		fr.Edges = append(fr.Edges, graph.KeyEdge{From: from, To: to, Kind: kind, Line: line, Count: 1})
		return true
	})
}

// implements adds T IMPLEMENTS I for each concrete named type T and each
// non-empty interface I declared in T's package or one it imports.
func (b *goBuilder) implements(list []*packages.Package) {
	ifaces := map[*types.Package][]*types.TypeName{}
	for _, p := range list {
		sc := p.Types.Scope()
		for _, name := range sc.Names() {
			if tn, ok := sc.Lookup(name).(*types.TypeName); ok && !tn.IsAlias() {
				if it, ok := tn.Type().Underlying().(*types.Interface); ok && it.NumMethods() > 0 {
					ifaces[p.Types] = append(ifaces[p.Types], tn)
				}
			}
		}
	}
	for _, p := range list {
		cands := append([]*types.TypeName(nil), ifaces[p.Types]...)
		for _, im := range p.Types.Imports() {
			cands = append(cands, ifaces[im]...)
		}
		sc := p.Types.Scope()
		for _, name := range sc.Names() {
			tn, ok := sc.Lookup(name).(*types.TypeName)
			if !ok || tn.IsAlias() {
				continue
			}
			if _, iface := tn.Type().Underlying().(*types.Interface); iface {
				continue
			}
			if named, ok := tn.Type().(*types.Named); ok && named.TypeParams().Len() > 0 {
				continue
			}
			from := b.objKey(tn)
			fr := b.frags[b.objFile[tn]]
			if from == "" || fr == nil {
				continue
			}
			ptr := types.NewPointer(tn.Type())
			for _, ic := range cands {
				it := ic.Type().Underlying().(*types.Interface)
				if types.Implements(tn.Type(), it) || types.Implements(ptr, it) {
					if to := b.objKey(ic); to != "" {
						fr.Edges = append(fr.Edges, graph.KeyEdge{From: from, To: to, Kind: graph.Implements, Line: uint32(b.line(tn.Pos()))})
					}
				}
			}
		}
	}
}

// dynamic adds the CALLS edges of dynamic call sites (interface method
// calls, function-value calls) that callgraph resolves.
func (b *goBuilder) dynamic(list []*packages.Package) {
	prog, _ := ssautil.Packages(list, ssa.InstantiateGenerics)
	prog.Build()
	cg := cha.CallGraph(prog)
	if b.o.Dynamic == DynamicVTA {
		cg = vta.CallGraph(ssautil.AllFunctions(prog), cg)
	}
	cg.DeleteSyntheticNodes()
	_ = callgraph.GraphVisitEdges(cg, func(e *callgraph.Edge) error {
		if e.Site == nil || e.Site.Common().StaticCallee() != nil {
			return nil // direct calls come from go/types
		}
		from, file := b.ssaKey(e.Caller.Func)
		to, _ := b.ssaKey(e.Callee.Func)
		if from == "" || to == "" || from == to {
			return nil
		}
		if fr := b.frags[file]; fr != nil {
			fr.Edges = append(fr.Edges, graph.KeyEdge{From: from, To: to, Kind: graph.Calls,
				Line: uint32(prog.Fset.PositionFor(e.Site.Pos(), false).Line), Count: 1})
		}
		return nil
	})
}

// ssaKey returns SSAFuncKey(fn) and the file declaring that definition.
func (b *goBuilder) ssaKey(fn *ssa.Function) (string, string) {
	for fn != nil && fn.Parent() != nil {
		fn = fn.Parent()
	}
	if fn == nil {
		return "", ""
	}
	if o := fn.Origin(); o != nil {
		fn = o
	}
	f, _ := fn.Object().(*types.Func)
	if f == nil {
		return "", ""
	}
	return FuncKey(f), b.objFile[f.Origin()]
}
