package ingest

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/stratasearch/strata/ingest/lang"
)

// Chunk is one line span of a source file, 1-based and inclusive: the bytes
// from the start of line StartLine through the end of line EndLine
// including its newline (engine.ReadSpan's convention for #Lx-Ly).
type Chunk struct {
	StartLine, EndLine int
	// Kind is func, method, type, const, var, package (Go); func, method,
	// class, interface, trait, impl, struct, enum, union, module, type,
	// macro or decl (the other languages of package lang); or text.
	Kind string
	// Symbol is the declared name ("EqualFold", "Builder.WriteString" for
	// a method; the first name of a group; "Class.method", "impl Display
	// for Point::fmt" in other languages), "" for text.
	Symbol string
	// Receiver is the receiver's base type name of a method ("Builder"),
	// or a method's class in other languages.
	Receiver string
	// Names lists every name a declaration (group) declares.
	Names []string
}

// Lines indexes the lines of a file: Start[i] is the byte offset of line
// i+1; line i+1 ends at Start[i+1] (or len(src) for the last line). A file
// ending in '\n' has no empty line after it.
type Lines struct {
	src   []byte
	Start []int
}

// NewLines indexes src's lines. O(len(src)).
func NewLines(src []byte) *Lines {
	l := &Lines{src: src}
	if len(src) == 0 {
		return l
	}
	l.Start = append(l.Start, 0)
	for i, c := range src {
		if c == '\n' && i+1 < len(src) {
			l.Start = append(l.Start, i+1)
		}
	}
	return l
}

// N is the number of lines.
func (l *Lines) N() int { return len(l.Start) }

// Span returns the bytes of lines from..to (1-based, inclusive), including
// the final newline: exactly what engine.ReadSpan reads for #Lfrom-Lto.
func (l *Lines) Span(from, to int) []byte {
	end := len(l.src)
	if to < len(l.Start) {
		end = l.Start[to]
	}
	return l.src[l.Start[from-1]:end]
}

// Line returns line i (1-based) without its newline.
func (l *Lines) Line(i int) []byte {
	return bytes.TrimSuffix(l.Span(i, i), []byte{'\n'})
}

// Lang maps a file name to a language tag (by extension; "text" when
// unknown).
func Lang(name string) string {
	base := filepath.Base(name)
	switch base {
	case "Makefile", "makefile", "GNUmakefile":
		return "make"
	case "Dockerfile":
		return "dockerfile"
	case "go.mod", "go.sum", "go.work":
		return "gomod"
	}
	switch strings.ToLower(filepath.Ext(base)) {
	case ".go":
		return "go"
	case ".md", ".markdown":
		return "markdown"
	case ".s":
		return "asm"
	case ".c", ".h":
		return "c"
	case ".cc", ".cpp", ".hpp", ".cxx", ".hh", ".hxx":
		return "cpp"
	case ".py":
		return "python"
	case ".js", ".mjs", ".cjs", ".jsx":
		return "javascript"
	case ".ts", ".mts", ".cts":
		return "typescript"
	case ".tsx":
		return "tsx"
	case ".json":
		return "json"
	case ".yaml", ".yml":
		return "yaml"
	case ".sh", ".bash", ".bat", ".rc":
		return "shell"
	case ".html", ".htm", ".tmpl", ".xml", ".svg":
		return "markup"
	case ".rs":
		return "rust"
	case ".java":
		return "java"
	case ".proto":
		return "proto"
	case ".toml", ".ini", ".cfg":
		return "config"
	}
	return "text"
}

// LangOf is Lang with the file's bytes: a ".h" header is C++ ("cpp")
// when its first 64 KiB show a construct C does not have (a namespace,
// a template, an access specifier, std::, a C++ standard header), as
// GitHub Linguist's heuristics decide, and C otherwise.
func LangOf(name string, src []byte) string {
	tag := Lang(name)
	if tag == "c" && strings.EqualFold(filepath.Ext(name), ".h") {
		if len(src) > 64<<10 {
			src = src[:64<<10]
		}
		if cppHeader.Match(src) {
			return "cpp"
		}
	}
	return tag
}

var cppHeader = regexp.MustCompile(`(?m)^\s*(?:namespace\s+\w+\s*\{|template\s*<|(?:public|private|protected)\s*:\s*$|#\s*include\s*<(?:cstdint|cstddef|cstdlib|cstring|string|vector|map|set|list|array|memory|utility|algorithm|functional|tuple|optional|bitset|queue|stack|unordered_map|unordered_set|iostream|istream|ostream|sstream|type_traits|limits|chrono|atomic|mutex|thread)>|class\s+\w+(?:\s+final)?\s*(?::\s*(?:public|private|protected)?\s*\w|\{))|\bstd::\w`)

// ChunkFile chunks a file's bytes: Go source by declaration (ChunkGo),
// the languages of package lang by definition (ChunkLang), and everything
// else — Go that does not parse, and every language in a build without
// cgo — by structure (ChunkText). Spans never overlap unless
// OverlapLines > 0, are sorted, and are unique.
func ChunkFile(name string, src []byte, o Options) []Chunk {
	return chunkFile(name, src, NewLines(src), o, nil)
}

// ParsedGo is a Go file a caller has parsed (parser.ParseComments, into
// Fset) from Src, to be chunked without another parse.
type ParsedGo struct {
	Src  []byte
	Fset *token.FileSet
	File *ast.File
}

// chunkFile is ChunkFile over src's lines; pre, if not nil and parsed
// from exactly src, is the Go file's parse, chunked by ChunkGoFile.
func chunkFile(name string, src []byte, lines *Lines, o Options, pre *ParsedGo) []Chunk {
	tag := LangOf(name, src)
	if tag == "go" {
		if pre != nil && pre.File != nil && bytes.Equal(pre.Src, src) {
			return ChunkGoFile(pre.Fset, pre.File, lines, o)
		}
		if cs, ok := ChunkGo(src, lines, o); ok {
			return cs
		}
	}
	if useLang && lang.Supported(tag) {
		if cs, ok := ChunkLang(tag, src, lines, o); ok {
			return cs
		}
	}
	return ChunkText(lines, 1, lines.N(), tag == "markdown", o)
}

// Chunker names the chunker ChunkFile uses for a file in this build:
// "tree-sitter" for the languages of package lang when its parsers are
// built in, "" for the others (Go's go/parser and the structural cut,
// which every earlier manifest recorded implicitly). Index re-chunks a
// file whose manifest entry names another.
func Chunker(name string) string {
	if useLang && lang.Available() && lang.Supported(Lang(name)) {
		return "tree-sitter"
	}
	return ""
}

// useLang switches ChunkLang on; the search-quality test turns it off to
// measure the structural chunker it replaced.
var useLang = true

// ChunkLang chunks source in one of lang.Languages with its tree-sitter
// parser: each lang.Decl (a definition from its doc comment, decorators
// or attributes to its end; a class-like definition split into its head
// and its members) is a chunk with its kind, qualified symbol and names,
// and one longer than MaxDeclBytes is split by ChunkText into pieces that
// keep them, as ChunkGo does. The lines between definitions (imports,
// top-level statements, fields after the last method) are cut by
// ChunkText; a piece that declares names (variables, constants,
// fields, prototypes of functions defined elsewhere) is kind decl and
// carries them; a piece with no
// letter or digit (a closing brace) is dropped. ok is false when the
// parser is unavailable (no cgo) or fails.
func ChunkLang(tag string, src []byte, lines *Lines, o Options) (cs []Chunk, ok bool) {
	f, err := lang.Parse(tag, src)
	if err != nil {
		return nil, false
	}
	defs, bodied := f.Defs, lang.Bodied(f.Defs)
	gap := func(lo, hi int) {
		for _, p := range ChunkText(lines, lo, hi, false, o) {
			if !hasWord(lines.Span(p.StartLine, p.EndLine)) {
				continue
			}
			for _, d := range defs {
				if d.StartLine >= p.StartLine && d.StartLine <= p.EndLine && !(d.Signature && bodied[d.Symbol]) {
					if p.Symbol == "" {
						p.Kind, p.Symbol = "decl", d.Symbol
					}
					p.Names = append(p.Names, d.Name)
				}
			}
			cs = append(cs, p)
		}
	}
	next := 1
	for _, d := range f.Decls {
		if d.StartLine < next || d.EndLine > lines.N() {
			continue
		}
		if d.StartLine > next {
			gap(next, d.StartLine-1)
		}
		next = d.EndLine + 1
		c := Chunk{StartLine: d.StartLine, EndLine: d.EndLine, Kind: d.Kind, Symbol: d.Symbol, Receiver: d.Receiver, Names: d.Names}
		if len(lines.Span(c.StartLine, c.EndLine)) > o.MaxDeclBytes {
			for _, p := range ChunkText(lines, c.StartLine, c.EndLine, false, o) {
				p.Kind, p.Symbol, p.Receiver, p.Names = c.Kind, c.Symbol, c.Receiver, c.Names
				cs = appendChunk(cs, p)
			}
			continue
		}
		cs = appendChunk(cs, c)
	}
	if next <= lines.N() {
		gap(next, lines.N())
	}
	return cs, true
}

// hasWord reports whether b holds a letter or digit.
func hasWord(b []byte) bool {
	for _, r := range string(b) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// ChunkGo chunks Go source with go/parser: the package clause with its doc
// comment (only when there is one), and each top-level function, method,
// type, const and var declaration (a parenthesised group is one chunk),
// each from its doc comment through its end. Import declarations are not
// chunks. A declaration longer than MaxDeclBytes is split by ChunkText
// into pieces that keep its symbol. The parse skips the statements of
// top-level function bodies (blankFuncBodies), so only the declarations
// must parse: ok is false when they do not.
func ChunkGo(src []byte, lines *Lines, o Options) (cs []Chunk, ok bool) {
	buf := blankBodies.Get().(*[]byte)
	defer blankBodies.Put(buf)
	fset := token.NewFileSet()
	var f *ast.File
	var err error
	if skel, blanked := blankFuncBodies(src, buf); blanked {
		f, err = parser.ParseFile(fset, "", skel, parser.ParseComments|parser.SkipObjectResolution)
	}
	if f == nil || err != nil {
		fset = token.NewFileSet()
		if f, err = parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution); err != nil {
			return nil, false
		}
	}
	return ChunkGoFile(fset, f, lines, o), true
}

// ChunkGoFile is ChunkGo over a file already parsed (with
// parser.ParseComments) into fset, for callers that parse it anyway:
// the same chunks as ChunkGo on the file's source, whose lines are lines.
func ChunkGoFile(fset *token.FileSet, f *ast.File, lines *Lines, o Options) (cs []Chunk) {
	// Physical lines: //line directives must not move spans.
	line := func(p token.Pos) int { return fset.PositionFor(p, false).Line }
	cs = chunkGoDecls(line, f, lines, o)
	return appendGoComments(cs, line, f, lines, o)
}

// appendGoComments adds to cs (the declaration chunks of f, in line
// order) the comments that no declaration holds: those between or after
// top-level declarations (a note at the end of a file, a commented-out
// declaration). Each run of such comments between two declarations is
// cut by ChunkText into kind text chunks. Comments before the package
// clause other than the package doc (copyright headers, build
// constraints), comments inside import declarations, directive-only
// comments (//go:…) and repeats of a floating comment already seen in
// the file are not chunked. The result stays in line order.
func appendGoComments(cs []Chunk, line func(token.Pos) int, f *ast.File, lines *Lines, o Options) []Chunk {
	if len(f.Comments) == 0 {
		return cs
	}
	// covered: the line spans that are chunks already or imports, in order.
	type span struct{ lo, hi int }
	covered := make([]span, 0, len(cs)+2)
	for _, c := range cs {
		covered = append(covered, span{c.StartLine, c.EndLine})
	}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			covered = append(covered, span{line(g.Pos()), line(g.End())})
		}
	}
	slices.SortFunc(covered, func(a, b span) int { return a.lo - b.lo })
	pkgLine := line(f.Package)
	var runs []span // floating comment runs, each between two covered spans
	var seen map[string]bool
	ci := 0
	for _, g := range f.Comments {
		lo, hi := line(g.Pos()), line(g.End())
		if lo <= pkgLine || hi > lines.N() {
			continue
		}
		for ci < len(covered) && covered[ci].hi < lo {
			ci++
		}
		if ci < len(covered) && covered[ci].lo <= hi {
			continue // inside (or on a line of) a declaration or import
		}
		// Directives only (//go:…, //line) say nothing to search for; a
		// comment repeated in the file (a generator's banner before every
		// function) is chunked once.
		text := g.Text()
		if text == "" || seen[text] {
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[text] = true
		// Merge with the previous run when no covered span lies between.
		if n := len(runs); n > 0 && (ci == 0 || covered[ci-1].hi < runs[n-1].lo) {
			runs[n-1].hi = hi
			continue
		}
		runs = append(runs, span{lo, hi})
	}
	if len(runs) == 0 {
		return cs
	}
	out := make([]Chunk, 0, len(cs)+len(runs))
	i := 0
	for _, r := range runs {
		for i < len(cs) && cs[i].StartLine < r.lo {
			out = append(out, cs[i])
			i++
		}
		out = append(out, ChunkText(lines, r.lo, r.hi, false, o)...)
	}
	return append(out, cs[i:]...)
}

// chunkGoDecls returns the package-doc and declaration chunks of
// ChunkGoFile, in line order.
func chunkGoDecls(line func(token.Pos) int, f *ast.File, lines *Lines, o Options) (cs []Chunk) {
	if f.Doc != nil {
		cs = append(cs, Chunk{StartLine: line(f.Doc.Pos()), EndLine: line(f.Name.End()), Kind: "package",
			Symbol: f.Name.Name, Names: []string{f.Name.Name}})
	}
	for _, d := range f.Decls {
		var c Chunk
		switch d := d.(type) {
		case *ast.FuncDecl:
			c = Chunk{StartLine: line(d.Pos()), EndLine: line(d.End()), Kind: "func", Symbol: d.Name.Name}
			if d.Doc != nil {
				c.StartLine = line(d.Doc.Pos())
			}
			if d.Recv != nil && len(d.Recv.List) > 0 {
				c.Kind = "method"
				c.Receiver = recvName(d.Recv.List[0].Type)
				c.Symbol = c.Receiver + "." + d.Name.Name
			}
			c.Names = []string{d.Name.Name}
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			c = Chunk{StartLine: line(d.Pos()), EndLine: line(d.End()), Kind: d.Tok.String()}
			if d.Doc != nil {
				c.StartLine = line(d.Doc.Pos())
			}
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					c.Names = append(c.Names, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name != "_" {
							c.Names = append(c.Names, n.Name)
						}
					}
				}
			}
			if len(c.Names) > 0 {
				c.Symbol = c.Names[0]
			}
		default:
			continue
		}
		if c.StartLine < 1 || c.EndLine < c.StartLine || c.EndLine > lines.N() {
			continue
		}
		if n := len(lines.Span(c.StartLine, c.EndLine)); n > o.MaxDeclBytes {
			for _, p := range ChunkText(lines, c.StartLine, c.EndLine, false, o) {
				p.Kind, p.Symbol, p.Receiver, p.Names = c.Kind, c.Symbol, c.Receiver, c.Names
				cs = appendChunk(cs, p)
			}
			continue
		}
		cs = appendChunk(cs, c)
	}
	return cs
}

// appendChunk appends c, merging it into the previous chunk when both
// have the same span (two declarations on one line), so ids stay unique.
func appendChunk(cs []Chunk, c Chunk) []Chunk {
	if n := len(cs); n > 0 && cs[n-1].StartLine == c.StartLine && cs[n-1].EndLine == c.EndLine {
		cs[n-1].Names = append(cs[n-1].Names, c.Names...)
		return cs
	}
	return append(cs, c)
}

// recvName returns the base type name of a receiver type expression:
// T, *T, T[K], *T[K, V] → T.
func recvName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// ChunkText splits lines lo..hi (1-based, inclusive) by structure into
// chunks of at most ChunkBytes (a single longer line is a chunk of its
// own). Cut points are preferred, best first: before a Markdown heading
// (with markdown, a heading always starts a chunk), after a blank line
// (paragraph end), where the brace/bracket depth is back to zero, and
// anywhere otherwise; among the best the latest wins. Leading and trailing
// blank lines are trimmed from every chunk; blank-only ranges yield none.
// Consecutive chunks repeat OverlapLines lines. O(hi-lo) lines.
func ChunkText(lines *Lines, lo, hi int, markdown bool, o Options) []Chunk {
	if hi > lines.N() {
		hi = lines.N()
	}
	n := hi - lo + 1
	if n <= 0 {
		return nil
	}
	blank := make([]bool, n)
	heading := make([]bool, n)
	depth0 := make([]bool, n) // depth is zero after line lo+i
	size := make([]int, n)
	d := 0
	for i := 0; i < n; i++ {
		ln := lines.Line(lo + i)
		size[i] = len(lines.Span(lo+i, lo+i))
		t := bytes.TrimSpace(ln)
		blank[i] = len(t) == 0
		heading[i] = markdown && len(t) > 0 && t[0] == '#'
		for _, c := range ln {
			switch c {
			case '{', '(', '[':
				d++
			case '}', ')', ']':
				if d > 0 {
					d--
				}
			}
		}
		depth0[i] = d == 0
	}
	// score of a cut before line index j (j > 0).
	score := func(j int) int {
		switch {
		case heading[j]:
			return 3
		case blank[j-1]:
			return 2
		case depth0[j-1]:
			return 1
		}
		return 0
	}
	var out []Chunk
	emit := func(s, e int) { // indexes, inclusive
		for s <= e && blank[s] {
			s++
		}
		for e >= s && blank[e] {
			e--
		}
		if s <= e {
			out = append(out, Chunk{StartLine: lo + s, EndLine: lo + e, Kind: "text"})
		}
	}
	s := 0
	for s < n {
		for s < n && blank[s] {
			s++
		}
		if s >= n {
			break
		}
		acc, best, bestScore := 0, -1, -1
		cut := n
		for j := s; j < n; j++ {
			if j > s {
				if heading[j] {
					cut = j
					break
				}
				if sc := score(j); sc >= bestScore {
					best, bestScore = j, sc
				}
				if acc+size[j] > o.ChunkBytes {
					cut = j
					if bestScore > 0 {
						cut = best
					}
					break
				}
			}
			acc += size[j]
		}
		emit(s, cut-1)
		if cut >= n {
			break
		}
		next := cut - o.OverlapLines
		if next <= s {
			next = s + 1
		}
		if next > cut {
			next = cut
		}
		s = next
	}
	return dedupe(out)
}

// dedupe drops chunks with the same span as the previous one (possible
// with overlap after trimming).
func dedupe(cs []Chunk) []Chunk {
	out := cs[:0]
	for _, c := range cs {
		if k := len(out); k > 0 && out[k-1].StartLine == c.StartLine && out[k-1].EndLine == c.EndLine {
			continue
		}
		out = append(out, c)
	}
	return out
}
