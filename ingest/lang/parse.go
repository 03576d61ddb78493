//go:build cgo

package lang

import (
	"context"
	"errors"
	"fmt"
	"runtime"
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

// Available reports whether the tree-sitter parsers are built in.
func Available() bool { return true }

type grammar struct {
	lang  *sitter.Language
	query *sitter.Query
	// roles and kinds are indexed by capture id: what a capture is
	// (@name, @definition.KIND, @reference.KIND or none of them) and
	// its KIND.
	roles []captureRole
	kinds []string
	// flags is indexed by node symbol: the node types extend and
	// isSignature test, looked up without making the type's string.
	flags []symFlag
	// parsers holds idle parsers of this language, at most
	// GOMAXPROCS; they live as long as the query.
	parsers chan *sitter.Parser
	// walker, when not nil, finds the query's matches by walking the
	// tree in C (tagwalk.go) instead of running the query.
	walker *tagWalker
	err    error
}

type captureRole uint8

const (
	roleOther captureRole = iota
	roleName
	roleDef
	roleRef
)

type symFlag uint8

const (
	flagWrapper     symFlag = 1 << iota // wrapperTypes
	flagDeclWrapper                     // declWrappers
	flagDoc                             // docTypes
	flagSignature                       // always a signature (see isSignature)
	flagMaybeBody                       // a signature when it has no body field
	flagDeclaration                     // declaration or field_declaration
)

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
			cn := g.query.CaptureNameForId(i)
			role, kind := roleOther, ""
			switch {
			case cn == "name":
				role = roleName
			case strings.HasPrefix(cn, "definition."):
				role, kind = roleDef, strings.TrimPrefix(cn, "definition.")
			case strings.HasPrefix(cn, "reference."):
				role, kind = roleRef, strings.TrimPrefix(cn, "reference.")
			}
			g.roles, g.kinds = append(g.roles, role), append(g.kinds, kind)
		}
		g.flags = make([]symFlag, g.lang.SymbolCount())
		for i := range g.flags {
			t := g.lang.SymbolName(sitter.Symbol(i))
			f := &g.flags[i]
			if wrapperTypes[t] {
				*f |= flagWrapper
			}
			if declWrappers[t] {
				*f |= flagDeclWrapper
			}
			if docTypes[t] {
				*f |= flagDoc
			}
			if signatureTypes[t] {
				*f |= flagSignature
			}
			if maybeBodyTypes[t] {
				*f |= flagMaybeBody
			}
			if t == "declaration" || t == "field_declaration" {
				*f |= flagDeclaration
			}
		}
		g.parsers = make(chan *sitter.Parser, runtime.GOMAXPROCS(0))
		g.walker = newTagWalker(tag, g.lang, g.query)
	}
	grammars[tag] = g
	return g, g.err
}

// flag reports whether node n's type has flag f.
func (g *grammar) flag(n *sitter.Node, f symFlag) bool {
	s := int(n.Symbol())
	return s < len(g.flags) && g.flags[s]&f != 0
}

// parser returns an idle parser of the language, or a new one.
func (g *grammar) parser() *sitter.Parser {
	select {
	case p := <-g.parsers:
		return p
	default:
	}
	p := sitter.NewParser()
	p.SetLanguage(g.lang)
	return p
}

// release gives a parser whose last parse completed back to the pool,
// or closes it when the pool is full.
func (g *grammar) release(p *sitter.Parser) {
	select {
	case g.parsers <- p:
	default:
		p.Close()
	}
}

// Parse parses src as the language tag (see Languages) and returns its
// definitions, references and chunk units. Syntax errors are recovered
// from (File.Errors); the error is ErrUnsupported, ErrUnavailable, a
// query that does not compile, or a panic inside the parse.
func Parse(tag string, src []byte) (*File, error) {
	return ParsePhases(tag, src, nil)
}

// ParsePhases is Parse, adding the time of each of its steps to ph
// when ph is not nil.
func ParsePhases(tag string, src []byte, ph *Phases) (f *File, err error) {
	return parsePhases(tag, src, ph, false)
}

// parsePhases is ParsePhases; viaQuery runs the tag query even where the
// language has a tagWalker.
func parsePhases(tag string, src []byte, ph *Phases, viaQuery bool) (f *File, err error) {
	g, err := grammarFor(tag)
	if err != nil {
		return nil, err
	}
	if len(src) > MaxParseBytes {
		return nil, fmt.Errorf("%w: %s input of %d bytes (max %d)", ErrTooLarge, tag, len(src), MaxParseBytes)
	}
	clock := func() time.Duration { return 0 }
	if ph != nil && ph.Clock != nil {
		clock = ph.Clock
	}
	var t0, t1, t2, t3 time.Duration
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("lang: %s parse: panic: %v", tag, r)
		}
	}()
	// Every tree-sitter object of a parse is made here and closed, or
	// (a parser that completed its parse) handed back to the pool,
	// before Parse returns.
	t0 = clock()
	tree, err := g.parse(src)
	if err != nil {
		return nil, fmt.Errorf("lang: %s parse of %d bytes failed: %v", tag, len(src), err)
	}
	var qc *sitter.QueryCursor
	done := false
	defer func() {
		if qc != nil {
			qc.Close()
		}
		tree.Close()
		if ph != nil && done {
			t4 := clock()
			ph.Parse += t1 - t0
			ph.Query += t2 - t1
			ph.Build += t3 - t2
			ph.Free += t4 - t3
		}
	}()
	t1 = clock()
	root := tree.RootNode()
	p := &parse{g: g, root: root, tag: tag, src: src, lines: newLineIndex(src)}
	walked := false
	if g.walker != nil && !viaQuery {
		p.collect(func(fn func(tagMatch)) { walked = g.walker.matches(tree, fn) })
	}
	if !walked {
		qc = sitter.NewQueryCursor()
		qc.Exec(g.query, root)
		p.collect(func(fn func(tagMatch)) { p.queryMatches(qc, fn) })
	}
	t2 = clock()
	f = &File{Lang: tag, Errors: root.HasError()}
	p.build(f)
	t3 = clock()
	done = true
	return f, nil
}

// parse parses src with a parser from the pool. A parser that fails or
// panics is closed, not pooled: it may hold a half-done parse.
func (g *grammar) parse(src []byte) (tree *sitter.Tree, err error) {
	parser := g.parser()
	ok := false
	defer func() {
		if ok {
			g.release(parser)
		} else {
			parser.Close()
		}
	}()
	parser.SetOperationLimit(int(ParseBudget(len(src)).Microseconds()))
	tree, err = parser.ParseCtx(context.Background(), nil, src)
	if err == nil && tree == nil {
		err = errors.New("no tree")
	}
	ok = err == nil
	return tree, err
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
	g    *grammar
	root *sitter.Node
	// perDef has build call extend per definition instead of
	// extendAll (the reference it is benchmarked against).
	perDef bool
	tag    string
	src    []byte
	lines  lineIndex
	defs   []*def
	refs   []Ref
	// bodied are the symbols of the file's functions with a body.
	bodied map[string]bool
}

// tagMatch is one match of a tag pattern: its index in the query file,
// its @name's byte range and, for a definition, the node it captures.
type tagMatch struct {
	pattern        uint16
	kind           string
	isDef          bool
	nameLo, nameHi uint32
	whole          *sitter.Node // the @definition node; nil for a reference
}

// queryMatches runs the tag query's cursor qc (Exec'd on the root) and
// calls fn for every match that has a @name and a @definition or
// @reference capture.
func (p *parse) queryMatches(qc *sitter.QueryCursor, fn func(m tagMatch)) {
	g := p.g
	for {
		m, ok := qc.NextMatch()
		if !ok {
			break
		}
		var name, whole *sitter.Node
		var kind string
		isDef := false
		for _, c := range m.Captures {
			switch g.roles[c.Index] {
			case roleName:
				name = c.Node
			case roleDef:
				whole, kind, isDef = c.Node, g.kinds[c.Index], true
			case roleRef:
				whole, kind = c.Node, g.kinds[c.Index]
			}
		}
		if name == nil || whole == nil {
			continue
		}
		tm := tagMatch{pattern: m.PatternIndex, kind: kind, isDef: isDef, nameLo: name.StartByte(), nameHi: name.EndByte()}
		if isDef {
			tm.whole = whole
		}
		fn(tm)
	}
}

// collect gathers the definitions and references of the matches that
// each calls its argument with (queryMatches or a tagWalker's).
func (p *parse) collect(each func(fn func(m tagMatch))) {
	g := p.g
	seen := map[[2]uint32]int{}
	defNames := map[uint32]bool{}
	var refs []Ref
	var refPattern []uint16
	refAt := map[uint32]int{}
	each(func(m tagMatch) {
		kind, isDef := m.kind, m.isDef
		if !isDef {
			// A name matched by several reference patterns keeps the
			// first pattern's kind (the specific ones come first).
			b := m.nameLo
			if i, dup := refAt[b]; dup {
				if m.pattern < refPattern[i] {
					refs[i].Kind, refPattern[i] = kind, m.pattern
				}
				return
			}
			refAt[b] = len(refs)
			refPattern = append(refPattern, m.pattern)
			e := m.nameHi
			refs = append(refs, Ref{Name: string(p.src[b:e]), Kind: kind,
				Line: p.lines.line(int(b)), StartByte: int(b), EndByte: int(e)})
			return
		}
		whole := m.whole
		key := [2]uint32{whole.StartByte(), whole.EndByte()}
		if i, dup := seen[key]; dup {
			// The same node matched by several patterns: the first
			// pattern in the query file wins.
			if m.pattern >= p.defs[i].pattern {
				return
			}
			p.defs[i] = nil
		}
		d := &def{node: whole, pattern: m.pattern, parent: -1}
		d.Kind = kind
		d.Name = strings.TrimSpace(string(p.src[m.nameLo:m.nameHi]))
		if sep := "::"; p.tag == "cpp" && strings.Contains(d.Name, sep) {
			i := strings.LastIndex(d.Name, sep)
			d.qual, d.Name = strings.TrimSpace(d.Name[:i]), strings.TrimSpace(d.Name[i+len(sep):])
		}
		d.StartByte, d.EndByte = int(whole.StartByte()), int(whole.EndByte())
		d.StartLine = int(whole.StartPoint().Row) + 1
		d.EndLine = p.endLine(whole)
		if (d.Kind == "func" || d.Kind == "method") && p.isSignature(whole) {
			d.Signature = true
			if g.flag(whole, flagDeclaration) {
				d.Kind = "declaration"
			}
		}
		seen[key] = len(p.defs)
		p.defs = append(p.defs, d)
		defNames[m.nameLo] = true
	})
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
	switch {
	case p.g.flag(n, flagSignature):
		return true
	case p.g.flag(n, flagMaybeBody):
		return n.ChildByFieldName("body") == nil
	}
	return false
}

// signatureTypes are always signatures; maybeBodyTypes are when they
// have no body.
var (
	signatureTypes = map[string]bool{"method_signature": true, "abstract_method_signature": true,
		"function_signature": true, "function_signature_item": true, "declaration": true, "field_declaration": true}
	maybeBodyTypes = map[string]bool{"method_declaration": true, "constructor_declaration": true, "function_item": true}
)

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
		if par == nil || !(p.g.flag(par, flagWrapper) || p.g.flag(par, flagDeclWrapper) && par.StartByte() == n.StartByte()) {
			break
		}
		n = par
	}
	d.outerLo, d.outerHi = int(n.StartByte()), int(n.EndByte())
	lo := d.outerLo
	row := n.StartPoint().Row
	for s := n.PrevNamedSibling(); s != nil && p.g.flag(s, flagDoc); s = s.PrevNamedSibling() {
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
	if p.perDef {
		for _, d := range p.defs {
			p.extend(d)
		}
	} else {
		p.extendAll(p.root)
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
