// Package lang gives ingestion syntax-aware chunks and symbol tables for
// the languages people index beside Go: Python, JavaScript, TypeScript,
// TSX, Rust, Java, C and C++. It parses with tree-sitter
// (github.com/smacker/go-tree-sitter, which bundles the grammars) and
// finds definitions and references with the tag queries in queries/
// (one tags.scm-style file per language: a pattern captures a whole
// definition as @definition.KIND or a reference as @reference.KIND, and
// its name as @name). For Python, Java and Rust the same patterns are
// also written as a walk of the tree in C (tagwalk.go), which Parse uses
// instead of the query: it gives the same matches for half the time.
//
// # Definitions and chunks
//
// Parse returns a File: every definition (bare name, qualified symbol,
// kind, span, enclosing definition), every reference (name, kind, line,
// enclosing definition) and Decls, the chunk units ingestion cuts the
// file into. A Decl is a function, method, class, struct, enum, union,
// interface, trait, impl block, module/namespace, type alias or macro,
// spanning from its doc comment, decorators or attributes (the comment
// lines directly above it, with no blank line between) to its end; an
// export, template or decorator wrapper belongs to the definition it
// wraps. A class-like definition (class, struct, interface, trait, impl,
// module, enum, union) that holds functions with bodies is split: one
// Decl for its head (from its doc comment to the line before its first
// member) and one per member, recursively; a function keeps whatever it
// nests. Members are qualified by their container: Class.method,
// Outer.Inner.method, "impl Display for Point::fmt" (Rust and C++ join
// with ::). Declarations without a body (prototypes, signatures, fields,
// variables, constants) are not Decls of their own: their names join the
// Decl that holds them, or, at top level, the text around them
// (ingestion's structural chunker cuts the lines no Decl covers).
// A signature whose function has a body in the same file (see Bodied)
// names nothing. Decls are sorted and their line spans never overlap: definitions that
// share a line are merged into one Decl that carries all their names.
//
// # Resources
//
// Each parse creates one tree and query cursor and closes them before it
// returns (Parse's defers are the only place they are made). The
// compiled queries are made once per language and kept for the life of
// the process, and so are idle parsers: a parse takes one from its
// language's pool (or makes one) and hands it back when the parse
// completed, or closes it when the pool already holds GOMAXPROCS or the
// parse failed. An input over MaxParseBytes is ErrTooLarge. A parse is
// also bounded by a wall-clock backstop (ParseTimeout plus
// ParseTimePerKiB per KiB) set far above what real source costs, so that
// which files parse depends on the input and not on the host's load;
// running out of it, like a panic inside a parse, is returned as an
// error.
//
// # Cost
//
// Tree-sitter's own parse takes about half of a file's CPU time and the
// tag query's cursor, which visits every node of the tree, about a third
// (about a sixth where the C walk replaces it); freeing the tree most of
// the rest (langbench -phases measures each step). The doc comments and wrappers of all definitions are found in
// one walk of the tree in C (outer.go), rather than one Parent and
// PrevNamedSibling call each, which tree-sitter answers by walking down
// from the root.
//
// # Without cgo
//
// The bindings are cgo. In a CGO_ENABLED=0 build Available reports
// false and Parse returns ErrUnavailable, so ingestion keeps its
// structural chunker for these languages.
package lang

import (
	"embed"
	"errors"
	"time"
)

// Def is one definition in a file.
type Def struct {
	Name      string // the bare name ("method", "fmt", "bar" for Foo::bar)
	Symbol    string // qualified by its containers ("Class.method")
	Kind      string // func, method, class, interface, trait, impl, struct, enum, union, module, type, macro, constant, variable, field, declaration
	Container string // the enclosing definition's Symbol, "" at top level
	Signature bool   // a function or method without a body (a prototype, an interface method)
	// StartLine and EndLine are 1-based and inclusive; StartByte and
	// EndByte are the definition node's byte range (without doc comments).
	StartLine, EndLine int
	StartByte, EndByte int
}

// Ref is one reference: an identifier used as a call, type, class,
// trait or macro name.
type Ref struct {
	Name      string
	Kind      string // call, type, class, trait, macro
	Line      int    // 1-based
	StartByte int
	EndByte   int
	Enclosing string // Symbol of the innermost definition around it, "" at top level
}

// Decl is one chunk unit: a line span (1-based, inclusive) with the
// symbol and kind of the definition it holds.
type Decl struct {
	StartLine, EndLine int
	Kind               string
	Symbol             string
	Receiver           string   // a method's container name ("Class", "Point" for impl Display for Point)
	Names              []string // the bare names the span declares
}

// File is what Parse finds in one file.
type File struct {
	Lang  string
	Defs  []Def // sorted by StartByte, outer before inner
	Refs  []Ref // sorted by StartByte
	Decls []Decl
	// Errors reports whether the parse recovered from syntax errors.
	Errors bool
}

// Phases receives the time each step of a parse took, read from Clock
// (the calling thread's CPU time, say, with the goroutine locked to its
// thread); ParsePhases adds to the fields, so one Phases can sum a run.
type Phases struct {
	Clock func() time.Duration
	Parse time.Duration // tree-sitter's parse of the source
	Query time.Duration // running the tag query and reading its captures
	Build time.Duration // doc comments, nesting, symbols, Decls
	Free  time.Duration // closing the tree and the query cursor
}

// MaxParseBytes is the largest input Parse parses; a larger one is
// ErrTooLarge (ingestion then cuts it by structure). This is the bound
// that decides which files get tree-sitter chunks: it depends on the
// input alone, never on the machine's speed or load.
var MaxParseBytes = 4 << 20

// ParseTimeout and ParseTimePerKiB set the wall-clock backstop of one
// parse: ParseTimeout plus ParseTimePerKiB for every KiB of input (132 s
// for 1 MiB). The backstop keeps a parse that tree-sitter's error
// recovery makes pathological (a megabyte of random text takes seconds)
// from holding a worker indefinitely. It is set far above what real
// source costs (0.1–1 ms of CPU per KiB, a few hundred ms for the
// slowest real headers), so that a loaded host's slower parse of a real
// file stays inside it; a parse that runs out of it is an error. It is
// still a clock: a process starved for long enough can run out of it.
// Tree-sitter's runtime in go.mod's bindings offers no deterministic
// operation budget (only this clock and a cancellation flag).
var (
	ParseTimeout    = 30 * time.Second
	ParseTimePerKiB = 100 * time.Millisecond
)

// ParseBudget is the wall-clock backstop of a parse of n bytes.
func ParseBudget(n int) time.Duration {
	return ParseTimeout + time.Duration(n/1024)*ParseTimePerKiB
}

// ErrUnavailable is returned by Parse in builds without cgo.
var ErrUnavailable = errors.New("lang: tree-sitter parsers need cgo")

// ErrUnsupported is returned by Parse for a language tag with no grammar.
var ErrUnsupported = errors.New("lang: no grammar for this language")

// ErrTooLarge is returned by Parse for an input over MaxParseBytes.
var ErrTooLarge = errors.New("lang: input over MaxParseBytes")

//go:embed queries/*.scm
var queryFS embed.FS

// Languages lists the language tags Parse accepts (ingest.Lang's tags).
func Languages() []string {
	return []string{"python", "javascript", "typescript", "tsx", "rust", "java", "c", "cpp"}
}

// Supported reports whether Parse accepts the language tag (in a build
// with cgo).
func Supported(lang string) bool {
	for _, l := range Languages() {
		if l == lang {
			return true
		}
	}
	return false
}

// Query returns the tag query source kept for a language.
func Query(lang string) (string, error) {
	name := lang
	if lang == "tsx" {
		name = "typescript"
	}
	b, err := queryFS.ReadFile("queries/" + name + ".scm")
	if err != nil {
		return "", ErrUnsupported
	}
	return string(b), nil
}

// sep is the qualifier separator of a language's symbols.
func sep(lang string) string {
	switch lang {
	case "rust", "cpp":
		return "::"
	}
	return "."
}

// chunkKinds are the kinds a Decl is made of; containerKinds are split
// into their members.
var (
	chunkKinds = map[string]bool{"func": true, "method": true, "class": true, "interface": true, "trait": true,
		"impl": true, "struct": true, "enum": true, "union": true, "module": true, "type": true, "macro": true}
	containerKinds = map[string]bool{"class": true, "interface": true, "trait": true, "impl": true,
		"struct": true, "enum": true, "union": true, "module": true}
)

// Bodied returns the symbols of the functions and methods in defs that
// have a body. A signature with one of these symbols (a TypeScript
// overload, a C++ method declared in its class and defined below it)
// does not name the chunk around it: the definition's chunk does.
func Bodied(defs []Def) map[string]bool {
	m := map[string]bool{}
	for _, d := range defs {
		if !d.Signature && (d.Kind == "func" || d.Kind == "method") {
			m[d.Symbol] = true
		}
	}
	return m
}
