//go:build cgo

package lang

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/c"
	"github.com/smacker/go-tree-sitter/cpp"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/rust"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// ParseTimeout bounds one parse; a file that takes longer is an error
// (ingestion then cuts it by structure).
var ParseTimeout = 2 * time.Second

// Available reports whether the tree-sitter parsers are built in.
func Available() bool { return true }

type grammar struct {
	lang     *sitter.Language
	query    *sitter.Query
	captures []string // capture id → name
	err      error
}

var (
	grammarsMu sync.Mutex
	grammars   = map[string]*grammar{}
)

func language(tag string) *sitter.Language {
	switch tag {
	case "python":
		return python.GetLanguage()
	case "javascript":
		return javascript.GetLanguage()
	case "typescript":
		return typescript.GetLanguage()
	case "tsx":
		return tsx.GetLanguage()
	case "rust":
		return rust.GetLanguage()
	case "java":
		return java.GetLanguage()
	case "c":
		return c.GetLanguage()
	case "cpp":
		return cpp.GetLanguage()
	}
	return nil
}

// grammarFor returns the language's grammar and compiled tag query, made
// once and kept for the life of the process.
func grammarFor(tag string) (*grammar, error) {
	grammarsMu.Lock()
	defer grammarsMu.Unlock()
	if g, ok := grammars[tag]; ok {
		return g, g.err
	}
	g := &grammar{lang: language(tag)}
	if g.lang == nil {
		return nil, ErrUnsupported
	}
	src, err := Query(tag)
	if err == nil {
		g.query, err = sitter.NewQuery([]byte(src), g.lang)
	}
	if err != nil {
		g.err = fmt.Errorf("lang: %s query: %w", tag, err)
	} else {
		for i := uint32(0); i < g.query.CaptureCount(); i++ {
			g.captures = append(g.captures, g.query.CaptureNameForId(i))
		}
	}
	grammars[tag] = g
	return g, g.err
}

// Parse parses src as the language tag (see Languages) and returns its
// definitions, references and chunk units. Syntax errors are recovered
// from (File.Errors); the error is ErrUnsupported, ErrUnavailable, a
// query that does not compile, or a panic inside the parse.
func Parse(tag string, src []byte) (f *File, err error) {
	g, err := grammarFor(tag)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("lang: %s parse: panic: %v", tag, r)
		}
	}()
	// Every tree-sitter object of a parse is made and closed here.
	parser := sitter.NewParser()
	defer parser.Close()
	parser.SetLanguage(g.lang)
	parser.SetOperationLimit(int(ParseTimeout.Microseconds()))
	tree, err := parser.ParseCtx(context.Background(), nil, src)
	if err != nil || tree == nil {
		return nil, fmt.Errorf("lang: %s parse of %d bytes failed: %v", tag, len(src), err)
	}
	defer tree.Close()
	qc := sitter.NewQueryCursor()
	defer qc.Close()
	root := tree.RootNode()
	qc.Exec(g.query, root)
	p := &parse{tag: tag, src: src, lines: newLineIndex(src)}
	p.collect(g, qc)
	f = &File{Lang: tag, Errors: root.HasError()}
	p.build(f)
	return f, nil
}

// def is a definition during a parse.
type def struct {
	Def
	node     *sitter.Node
	pattern  uint16
	chunkLo  int // first byte of the chunk: wrappers, doc comments, decorators
	outerLo  int // the wrapper's byte range (nesting is computed on it)
	outerHi  int
	parent   int // index in parse.defs, -1 at top level
	children []int
	qual     string // container qualifier of a C++ name (Foo of Foo::bar)
}

type parse struct {
	tag   string
	src   []byte
	lines lineIndex
	defs  []*def
	refs  []Ref
	// bodied are the symbols of the file's functions with a body.
	bodied map[string]bool
}

func (p *parse) collect(g *grammar, qc *sitter.QueryCursor) {
	seen := map[[2]uint32]int{}
	defNames := map[uint32]bool{}
	var refs []Ref
	var refPattern []uint16
	refAt := map[uint32]int{}
	for {
		m, ok := qc.NextMatch()
		if !ok {
			break
		}
		var name, whole *sitter.Node
		var kind string
		isDef := false
		for _, c := range m.Captures {
			cn := g.captures[c.Index]
			switch {
			case cn == "name":
				name = c.Node
			case strings.HasPrefix(cn, "definition."):
				whole, kind, isDef = c.Node, strings.TrimPrefix(cn, "definition."), true
			case strings.HasPrefix(cn, "reference."):
				whole, kind = c.Node, strings.TrimPrefix(cn, "reference.")
			}
		}
		if name == nil || whole == nil {
			continue
		}
		if !isDef {
			// A name matched by several reference patterns keeps the
			// first pattern's kind (the specific ones come first).
			b := name.StartByte()
			if i, dup := refAt[b]; dup {
				if m.PatternIndex < refPattern[i] {
					refs[i].Kind, refPattern[i] = kind, m.PatternIndex
				}
				continue
			}
			refAt[b] = len(refs)
			refPattern = append(refPattern, m.PatternIndex)
			refs = append(refs, Ref{Name: name.Content(p.src), Kind: kind,
				Line: int(name.StartPoint().Row) + 1, StartByte: int(b), EndByte: int(name.EndByte())})
			continue
		}
		key := [2]uint32{whole.StartByte(), whole.EndByte()}
		if i, dup := seen[key]; dup {
			// The same node matched by several patterns: the first
			// pattern in the query file wins.
			if m.PatternIndex >= p.defs[i].pattern {
				continue
			}
			p.defs[i] = nil
		}
		d := &def{node: whole, pattern: m.PatternIndex, parent: -1}
		d.Kind = kind
		d.Name = strings.TrimSpace(name.Content(p.src))
		if sep := "::"; p.tag == "cpp" && strings.Contains(d.Name, sep) {
			i := strings.LastIndex(d.Name, sep)
			d.qual, d.Name = strings.TrimSpace(d.Name[:i]), strings.TrimSpace(d.Name[i+len(sep):])
		}
		d.StartByte, d.EndByte = int(whole.StartByte()), int(whole.EndByte())
		d.StartLine = int(whole.StartPoint().Row) + 1
		d.EndLine = p.endLine(whole)
		if (d.Kind == "func" || d.Kind == "method") && p.isSignature(whole) {
			d.Signature = true
			if t := whole.Type(); t == "declaration" || t == "field_declaration" {
				d.Kind = "declaration"
			}
		}
		seen[key] = len(p.defs)
		p.defs = append(p.defs, d)
		defNames[name.StartByte()] = true
	}
	out := p.defs[:0]
	for _, d := range p.defs {
		if d != nil {
			out = append(out, d)
		}
	}
	p.defs = out
	for _, r := range refs {
		if !defNames[uint32(r.StartByte)] {
			p.refs = append(p.refs, r)
		}
	}
}

// isSignature reports whether a function-like node has no body.
func (p *parse) isSignature(n *sitter.Node) bool {
	switch n.Type() {
	case "method_signature", "abstract_method_signature", "function_signature", "function_signature_item",
		"declaration", "field_declaration":
		return true
	case "method_declaration", "constructor_declaration", "function_item":
		return n.ChildByFieldName("body") == nil
	}
	return false
}

// endLine is the 1-based last line of a node (a node ending at a line
// start ends on the line before).
func (p *parse) endLine(n *sitter.Node) int {
	e := n.EndPoint()
	if e.Column == 0 && e.Row > n.StartPoint().Row {
		return int(e.Row)
	}
	return int(e.Row) + 1
}

var wrapperTypes = map[string]bool{
	"decorated_definition": true, "export_statement": true, "template_declaration": true,
	"ambient_declaration": true,
}

// declWrappers are C and C++ declarations that wrap a type definition
// beginning where they begin (struct Output { … }; in a class body is a
// field_declaration around a struct_specifier): the doc comment above is
// their sibling, not the definition's.
var declWrappers = map[string]bool{
	"field_declaration": true, "declaration": true, "type_definition": true,
}

var docTypes = map[string]bool{
	"comment": true, "line_comment": true, "block_comment": true, "decorator": true,
	"attribute_item": true, "marker_annotation": true, "annotation": true,
}

// extend finds a definition's wrapper and the doc comments, decorators
// and attributes directly above it.
func (p *parse) extend(d *def) {
	n := d.node
	for {
		par := n.Parent()
		if par == nil || !(wrapperTypes[par.Type()] || declWrappers[par.Type()] && par.StartByte() == n.StartByte()) {
			break
		}
		n = par
	}
	d.outerLo, d.outerHi = int(n.StartByte()), int(n.EndByte())
	lo := d.outerLo
	row := n.StartPoint().Row
	for s := n.PrevNamedSibling(); s != nil && docTypes[s.Type()]; s = s.PrevNamedSibling() {
		if s.EndPoint().Row+1 < row || !p.lineStarts(int(s.StartByte())) {
			break
		}
		lo, row = int(s.StartByte()), s.StartPoint().Row
	}
	d.chunkLo = lo
	if end := p.endLine(n); end > d.EndLine {
		d.EndLine = end
	}
}

// lineStarts reports whether only blanks precede byte b on its line.
func (p *parse) lineStarts(b int) bool {
	for i := b - 1; i >= 0 && p.src[i] != '\n'; i-- {
		if p.src[i] != ' ' && p.src[i] != '\t' {
			return false
		}
	}
	return true
}

func (p *parse) build(f *File) {
	for _, d := range p.defs {
		p.extend(d)
	}
	sort.SliceStable(p.defs, func(i, j int) bool {
		a, b := p.defs[i], p.defs[j]
		if a.outerLo != b.outerLo {
			return a.outerLo < b.outerLo
		}
		return a.outerHi > b.outerHi
	})
	s := sep(p.tag)
	var stack []int
	var roots []int
	for i, d := range p.defs {
		for len(stack) > 0 && p.defs[stack[len(stack)-1]].outerHi < d.outerHi {
			stack = stack[:len(stack)-1]
		}
		for len(stack) > 0 && p.defs[stack[len(stack)-1]].outerHi <= d.outerLo {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			d.parent = stack[len(stack)-1]
			p.defs[d.parent].children = append(p.defs[d.parent].children, i)
		} else {
			roots = append(roots, i)
		}
		stack = append(stack, i)
		qual := d.Name
		if d.qual != "" {
			qual = d.qual + s + d.Name
		}
		if d.Kind == "impl" {
			qual = p.implName(d)
		}
		if d.parent >= 0 {
			par := p.defs[d.parent]
			d.Container = par.Symbol
			if d.Kind == "func" && containerKinds[par.Kind] && par.Kind != "module" {
				d.Kind = "method"
			}
			qual = par.Symbol + s + qual
		}
		if d.qual != "" && d.Kind == "func" {
			d.Kind = "method" // Foo::bar defined outside its class
		}
		d.Symbol = qual
		f.Defs = append(f.Defs, d.Def)
	}
	// References: the innermost enclosing definition, by byte range.
	sort.Slice(p.refs, func(i, j int) bool { return p.refs[i].StartByte < p.refs[j].StartByte })
	stack = stack[:0]
	di := 0
	for _, r := range p.refs {
		for di < len(p.defs) && p.defs[di].outerLo <= r.StartByte {
			for len(stack) > 0 && p.defs[stack[len(stack)-1]].outerHi <= p.defs[di].outerLo {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, di)
			di++
		}
		for len(stack) > 0 && p.defs[stack[len(stack)-1]].outerHi <= r.StartByte {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			r.Enclosing = p.defs[stack[len(stack)-1]].Symbol
		}
		f.Refs = append(f.Refs, r)
	}
	p.bodied = Bodied(f.Defs)
	for _, i := range roots {
		f.Decls = p.decls(f.Decls, i)
	}
}

// implName is "impl Trait for Type" or "impl Type".
func (p *parse) implName(d *def) string {
	typ := d.Name
	if t := d.node.ChildByFieldName("type"); t != nil {
		typ = t.Content(p.src)
	}
	if tr := d.node.ChildByFieldName("trait"); tr != nil {
		return "impl " + tr.Content(p.src) + " for " + typ
	}
	return "impl " + typ
}

func (p *parse) chunkable(d *def) bool {
	return chunkKinds[d.Kind] && !d.Signature
}

// decls appends the chunk units of definition i.
func (p *parse) decls(out []Decl, i int) []Decl {
	d := p.defs[i]
	if !p.chunkable(d) {
		return out
	}
	start := p.lines.line(d.chunkLo)
	dc := Decl{StartLine: start, EndLine: d.EndLine, Kind: d.Kind, Symbol: d.Symbol}
	if d.Kind != "impl" {
		dc.Names = []string{d.Name}
	}
	if d.Kind == "method" && d.qual != "" {
		dc.Receiver = baseType(d.qual)
	} else if d.Kind == "method" && d.parent >= 0 {
		par := p.defs[d.parent]
		dc.Receiver = par.Name
		if par.Kind == "impl" {
			if t := par.node.ChildByFieldName("type"); t != nil {
				dc.Receiver = baseType(t.Content(p.src))
			}
		}
	}
	var members []int
	if containerKinds[d.Kind] {
		for _, c := range d.children {
			if p.chunkable(p.defs[c]) {
				members = append(members, c)
			}
		}
	}
	if len(members) > 0 {
		if first := p.lines.line(p.defs[members[0]].chunkLo); first > start {
			dc.EndLine = first - 1
			// The head's names: the body-less members above the first.
			for _, c := range d.children {
				if cd := p.defs[c]; !p.chunkable(cd) && cd.StartLine <= dc.EndLine && !(cd.Signature && p.bodied[cd.Symbol]) {
					dc.Names = append(dc.Names, cd.Name)
				}
			}
			out = appendDecl(out, dc)
			for _, c := range members {
				out = p.decls(out, c)
			}
			return out
		}
	}
	if containerKinds[d.Kind] {
		var walk func(int)
		walk = func(k int) {
			for _, c := range p.defs[k].children {
				cd := p.defs[c]
				if cd.Kind != "impl" && !(cd.Signature && p.bodied[cd.Symbol]) {
					dc.Names = append(dc.Names, cd.Name)
				}
				if containerKinds[cd.Kind] {
					walk(c)
				}
			}
		}
		walk(i)
	}
	return appendDecl(out, dc)
}

// baseType strips generics and references: "&'a Foo<T>" → "Foo".
func baseType(s string) string {
	s = strings.TrimLeft(s, "&*' ")
	if i := strings.IndexAny(s, "<( "); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndex(s, "::"); i >= 0 {
		s = s[i+2:]
	}
	return s
}

// appendDecl appends d, merging it into the previous Decl when their
// lines overlap.
func appendDecl(out []Decl, d Decl) []Decl {
	if d.EndLine < d.StartLine {
		return out
	}
	if n := len(out); n > 0 && d.StartLine <= out[n-1].EndLine {
		last := &out[n-1]
		last.Names = append(last.Names, d.Names...)
		if d.EndLine > last.EndLine {
			last.EndLine = d.EndLine
		}
		return out
	}
	return append(out, d)
}

// lineIndex maps byte offsets to 1-based lines.
type lineIndex []int

func newLineIndex(src []byte) lineIndex {
	l := lineIndex{0}
	for i, c := range src {
		if c == '\n' {
			l = append(l, i+1)
		}
	}
	return l
}

func (l lineIndex) line(b int) int {
	return sort.Search(len(l), func(i int) bool { return l[i] > b })
}
