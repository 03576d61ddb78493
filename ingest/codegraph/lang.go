package codegraph

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
	"github.com/stratasearch/strata/ingest/lang"
)

// LangResult is the outcome of BuildLang.
type LangResult struct {
	Fragments []*graph.Fragment
	Files     int
	Bytes     int64
	// Refs counts the references seen, Resolved those that became edges.
	Refs, Resolved int
	// Sites records, per resolved CALLS edge, one call site (for judging
	// precision): the caller's file and line and the callee's key.
	Sites []LangSite
	// Errors lists files that did not parse.
	Errors []string
}

// LangSite is one resolved call.
type LangSite struct {
	File   string
	Line   int
	Caller string // key
	Callee string // key
	How    string // the rule that resolved it
}

// langDef is a definition in the tree-wide symbol table.
type langDef struct {
	key, name, symbol, container, file string
	kind                               graph.NodeKind
	signature                          bool
}

type langFile struct {
	path    string
	tag     string
	src     []byte
	f       *lang.File
	imports map[string][]string // a name or module alias → files it comes from
	incl    []string            // files included or imported whole
}

func langNodeKind(k string) graph.NodeKind {
	switch k {
	case "func", "method", "macro":
		return graph.Func
	case "constant", "variable", "field", "declaration":
		return graph.Var
	case "module":
		return graph.Package
	}
	return graph.Type
}

// BuildLang builds the graph fragments of source files in the languages
// of package ingest/lang (Python, JavaScript, TypeScript, TSX, Rust,
// Java, C, C++), from their tree-sitter symbol tables, resolving each
// reference by scope and import, most specific first:
//
//  1. self.N / this.N (and in Java and C++ a bare N) inside a method: a
//     member N of the enclosing class in the same file;
//  2. a bare N: a top-level definition of the same file;
//  3. a name imported by the file (Python from m import N, JS/TS import
//     {N} from './m', Java import a.b.N, C/C++ #include "h": what h
//     declares), or M.N with M an imported module: the definition in
//     the imported file (for a C/C++ prototype, the function's body in
//     the tree when exactly one file defines it);
//  4. a definition of the same directory, when exactly one has that name;
//  5. the tree's only definition with that name (or its one body).
//
// Rules 4 and 5 never bind a builtin (print, len, malloc, …), a name the
// enclosing definition binds (a parameter, an assignment) or a name the
// file imports from a module that does not define it.
//
// x.N with x anything else is left unresolved (it needs types). A call
// becomes CALLS, a type, class or trait reference REFERENCES, from the
// enclosing definition (the file at top level). Nodes: the file, its
// directory's package node, and every definition (func/method/macro →
// Func; constants, variables, fields → Var; others → Type), keyed
// "lang:PATH#Symbol", with DocID the ingest chunk holding the
// definition's first line. Errors: none; a file that does not read or
// parse is listed in Errors and contributes its file node only.
func BuildLang(files []string, chunk ingest.Options) *LangResult {
	chunk.EnsureDefaults()
	res := &LangResult{}
	var lfs []*langFile
	suffix := map[string][]string{} // path suffixes (a/b.py, b.py) → files; absolute paths too
	for _, p := range files {
		tag := ingest.Lang(p)
		if !lang.Supported(tag) {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			res.Errors = append(res.Errors, err.Error())
			continue
		}
		f, err := lang.Parse(tag, src)
		if err != nil {
			res.Errors = append(res.Errors, p+": "+err.Error())
			continue
		}
		res.Files++
		res.Bytes += int64(len(src))
		lfs = append(lfs, &langFile{path: p, tag: tag, src: src, f: f})
		suffix[filepath.ToSlash(p)] = append(suffix[filepath.ToSlash(p)], p)
		parts := strings.Split(filepath.ToSlash(p), "/")
		for i := len(parts) - 1; i >= 0 && i >= len(parts)-4; i-- {
			s := strings.Join(parts[i:], "/")
			suffix[s] = append(suffix[s], p)
		}
	}
	byFile := map[string]map[string][]*langDef{}
	byDir := map[string]map[string][]*langDef{}
	global := map[string][]*langDef{}
	defKey := func(file, symbol string) string { return "lang:" + file + "#" + symbol }
	add := func(m map[string]map[string][]*langDef, k string, d *langDef) {
		if m[k] == nil {
			m[k] = map[string][]*langDef{}
		}
		m[k][d.name] = append(m[k][d.name], d)
	}
	for _, lf := range lfs {
		for _, d := range lf.f.Defs {
			ld := &langDef{key: defKey(lf.path, d.Symbol), name: d.Name, symbol: d.Symbol, container: d.Container, file: lf.path,
				kind: langNodeKind(d.Kind), signature: d.Signature}
			add(byFile, lf.path, ld)
			if d.Container == "" {
				add(byDir, filepath.Dir(lf.path), ld)
				global[d.Name] = append(global[d.Name], ld)
			} else if ld.kind == graph.Func {
				global[d.Name] = append(global[d.Name], ld)
			}
		}
		lf.imports, lf.incl = langImports(lf, suffix)
	}
	// bodied returns the one definition with a body among ds (a C
	// prototype's function), or the only one.
	pick := func(ds []*langDef) *langDef {
		if len(ds) == 1 {
			return ds[0]
		}
		var body []*langDef
		for _, d := range ds {
			if !d.signature {
				body = append(body, d)
			}
		}
		if len(body) == 1 {
			return body[0]
		}
		return nil
	}
	topLevel := func(ds []*langDef) []*langDef {
		var out []*langDef
		for _, d := range ds {
			if d.container == "" {
				out = append(out, d)
			}
		}
		return out
	}
	for _, lf := range lfs {
		ch := fileChunks(lf.path, lf.src, chunk)
		fr := &graph.Fragment{File: lf.path}
		pk := pkgKey(filepath.Dir(lf.path))
		fk := fileKey(lf.path)
		fr.Nodes = append(fr.Nodes, graph.Node{Kind: graph.Package, Key: pk, Name: filepath.Base(filepath.Dir(lf.path)), File: filepath.Dir(lf.path)},
			graph.Node{Kind: graph.File, Key: fk, Name: filepath.Base(lf.path), File: lf.path})
		fr.Edges = append(fr.Edges, graph.KeyEdge{From: pk, To: fk, Kind: graph.Contains})
		for _, inc := range lf.incl {
			fr.Edges = append(fr.Edges, graph.KeyEdge{From: fk, To: fileKey(inc), Kind: graph.Imports})
		}
		lines := ingest.NewLines(lf.src)
		for _, d := range lf.f.Defs {
			key := defKey(lf.path, d.Symbol)
			sig := ""
			if d.StartLine >= 1 && d.StartLine <= lines.N() {
				sig = clipSig(string(lines.Line(d.StartLine)))
			}
			fr.Nodes = append(fr.Nodes, graph.Node{Kind: langNodeKind(d.Kind), Key: key, Name: d.Symbol, File: lf.path,
				Line: d.StartLine, EndLine: d.EndLine, DocID: ch.at(d.StartLine), Sig: sig})
			owner := fk
			if d.Container != "" {
				owner = defKey(lf.path, d.Container)
			}
			fr.Edges = append(fr.Edges, graph.KeyEdge{From: owner, To: key, Kind: graph.Contains, Line: uint32(d.StartLine)})
		}
		defsHere := byFile[lf.path]
		for _, r := range lf.f.Refs {
			res.Refs++
			from := fk
			container := ""
			if r.Enclosing != "" {
				from = defKey(lf.path, r.Enclosing)
				for _, d := range defsHere[lastPart(r.Enclosing, lf.tag)] {
					if d.symbol == r.Enclosing {
						container = d.container
					}
				}
			}
			qual, recv := qualifier(lf.src, r.StartByte)
			var to *langDef
			how := ""
			switch {
			case qual && (recv == "self" || recv == "this" || recv == "cls"):
				if container != "" {
					for _, d := range defsHere[r.Name] {
						if d.container == container {
							to, how = d, "member"
						}
					}
				}
			case qual:
				for _, file := range lf.imports[recv] {
					if t := pick(topLevel(byFile[file][r.Name])); t != nil {
						to, how = t, "module"
					}
				}
			default:
				// A bare name is a class member only where the language
				// says so (Java, C++); in Python, JS, TS and Rust it needs
				// self./this.
				if container != "" && (lf.tag == "java" || lf.tag == "cpp") {
					for _, d := range defsHere[r.Name] {
						if d.container == container && d.key != from {
							to, how = d, "member"
						}
					}
				}
				if to == nil {
					if t := pick(topLevel(defsHere[r.Name])); t != nil {
						to, how = t, "file"
					}
				}
				if to == nil {
					var cands []*langDef
					for _, file := range lf.imports[r.Name] {
						cands = append(cands, topLevel(byFile[file][r.Name])...)
					}
					for _, file := range lf.incl {
						cands = append(cands, topLevel(byFile[file][r.Name])...)
					}
					if t := pick(cands); t != nil {
						to, how = t, "import"
						if t.signature { // a prototype: the body elsewhere
							if b := pick(global[r.Name]); b != nil {
								to = b
							}
						}
					}
				}
				// The weak rules skip builtins, names the enclosing
				// definition binds itself (a parameter, an assignment), and
				// names the file imports from a module that does not define
				// them (a re-export from C: struct's pack).
				_, imported := lf.imports[r.Name]
				weak := to == nil && !imported && !builtin(lf.tag, r.Name) && !bindsLocally(lf, r.Enclosing, r.Name)
				if weak {
					if t := pick(byDir[filepath.Dir(lf.path)][r.Name]); t != nil {
						to, how = t, "directory"
					}
				}
				if weak && to == nil {
					if t := pick(global[r.Name]); t != nil && len(global[r.Name]) <= 2 {
						to, how = t, "unique"
					}
				}
			}
			if to == nil || to.key == from {
				continue
			}
			kind := graph.References
			if r.Kind == "call" || r.Kind == "macro" {
				if to.kind != graph.Func && to.kind != graph.Type { // a call of a variable
					continue
				}
				kind = graph.Calls
			}
			res.Resolved++
			fr.Edges = append(fr.Edges, graph.KeyEdge{From: from, To: to.key, Kind: kind, Line: uint32(r.Line), Count: 1})
			if kind == graph.Calls {
				res.Sites = append(res.Sites, LangSite{File: lf.path, Line: r.Line, Caller: from, Callee: to.key, How: how})
			}
		}
		res.Fragments = append(res.Fragments, fr)
	}
	sort.Slice(res.Fragments, func(i, j int) bool { return res.Fragments[i].File < res.Fragments[j].File })
	return res
}

// builtins lists names a language provides without a definition in the
// tree (Python's builtins, JavaScript's globals, C's libc); the weak
// resolution rules never bind them.
var builtins = map[string]map[string]bool{
	"python": setOf("print", "len", "str", "int", "float", "bool", "list", "dict", "set", "tuple", "type", "object", "repr", "open",
		"range", "isinstance", "issubclass", "getattr", "setattr", "hasattr", "delattr", "super", "iter", "next", "min", "max", "sum",
		"sorted", "reversed", "enumerate", "zip", "map", "filter", "any", "all", "abs", "round", "hash", "id", "format", "vars", "dir",
		"callable", "chr", "ord", "hex", "oct", "bin", "bytes", "bytearray", "frozenset", "property", "staticmethod", "classmethod",
		"Exception", "ValueError", "TypeError", "KeyError", "IndexError", "RuntimeError", "OSError", "AttributeError", "NotImplementedError",
		"StopIteration", "compile", "eval", "exec", "globals", "locals", "input", "divmod", "pow", "slice", "memoryview", "complex", "ascii"),
	"javascript": setOf("require", "parseInt", "parseFloat", "String", "Number", "Boolean", "Object", "Array", "Map", "Set", "Promise",
		"Error", "TypeError", "Symbol", "JSON", "Math", "Date", "RegExp", "setTimeout", "clearTimeout", "setInterval", "console", "isNaN"),
	"c": setOf("printf", "fprintf", "sprintf", "snprintf", "malloc", "calloc", "realloc", "free", "memcpy", "memset", "memmove",
		"strlen", "strcmp", "strncmp", "strcpy", "strncpy", "abort", "exit", "assert", "sizeof"),
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func builtin(tag, name string) bool {
	switch tag {
	case "typescript", "tsx":
		tag = "javascript"
	case "cpp":
		tag = "c"
	}
	return builtins[tag][name]
}

// bindsLocally reports whether the definition enclosing a reference
// binds name itself: a parameter on its first line or an assignment
// "name =" in its span.
func bindsLocally(lf *langFile, enclosing, name string) bool {
	if enclosing == "" {
		return false
	}
	for _, d := range lf.f.Defs {
		if d.Symbol != enclosing || d.EndByte > len(lf.src) || d.StartByte > d.EndByte {
			continue
		}
		body := lf.src[d.StartByte:d.EndByte]
		first := body
		if i := strings.IndexByte(string(body), '\n'); i >= 0 {
			first = body[:i]
		}
		re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
		if re.Match(first) {
			return true
		}
		return regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\s*=[^=]`).Match(body)
	}
	return false
}

func lastPart(symbol, tag string) string {
	sep := "."
	if tag == "rust" || tag == "cpp" {
		sep = "::"
	}
	return symbol[strings.LastIndex(symbol, sep)+len(sep):]
}

// qualifier reports whether the name at byte at is qualified (x.N,
// x->N, x::N) and the qualifier's last identifier.
func qualifier(src []byte, at int) (bool, string) {
	i := at
	switch {
	case i >= 1 && src[i-1] == '.':
		i--
	case i >= 2 && (string(src[i-2:i]) == "->" || string(src[i-2:i]) == "::"):
		i -= 2
	default:
		return false, ""
	}
	j := i
	for j > 0 && (isIdent(src[j-1])) {
		j--
	}
	return true, string(src[j:i])
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '$'
}

var (
	pyImport     = regexp.MustCompile(`(?m)^[ \t]*import[ \t]+([\w.]+)(?:[ \t]+as[ \t]+(\w+))?`)
	pyFrom       = regexp.MustCompile(`(?m)^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(?:\(([^)]*)\)|([\w \t,*]+))`)
	jsImport     = regexp.MustCompile(`(?m)^\s*import\s+(.+?)\s+from\s+['"]([^'"]+)['"]`)
	jsRequire    = regexp.MustCompile(`(?:const|let|var)\s+(\w+)\s*=\s*require\(\s*['"]([^'"]+)['"]\s*\)`)
	cInclude     = regexp.MustCompile(`(?m)^\s*#\s*include\s+"([^"]+)"`)
	javaImport   = regexp.MustCompile(`(?m)^\s*import\s+(?:static\s+)?([\w.]+)\.(\w+|\*)\s*;`)
	jsExtensions = []string{"", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", "/index.ts", "/index.js"}
)

// langImports returns what a file imports: names and module aliases →
// the files they come from, and files imported whole.
func langImports(lf *langFile, suffix map[string][]string) (map[string][]string, []string) {
	imp := map[string][]string{}
	var whole []string
	dir := filepath.Dir(lf.path)
	src := string(lf.src)
	exists := func(p string) bool { _, ok := suffix[filepath.ToSlash(p)]; return ok }
	bySuffix := func(s string) []string {
		if fs := suffix[s]; len(fs) == 1 {
			return fs
		}
		return nil
	}
	switch lf.tag {
	case "python":
		module := func(m string) []string {
			if strings.HasPrefix(m, ".") {
				d := dir
				for strings.HasPrefix(m, "..") {
					d, m = filepath.Dir(d), m[1:]
				}
				m = strings.TrimPrefix(m, ".")
				base := filepath.Join(d, filepath.FromSlash(strings.ReplaceAll(m, ".", "/")))
				for _, c := range []string{base + ".py", filepath.Join(base, "__init__.py")} {
					if exists(c) {
						return []string{c}
					}
				}
				return nil
			}
			p := strings.ReplaceAll(m, ".", "/")
			if fs := bySuffix(p + ".py"); fs != nil {
				return fs
			}
			return bySuffix(p + "/__init__.py")
		}
		for _, m := range pyImport.FindAllStringSubmatch(src, -1) {
			alias := m[2]
			if alias == "" {
				alias = m[1][strings.LastIndex(m[1], ".")+1:]
			}
			imp[alias] = append(imp[alias], module(m[1])...)
		}
		for _, m := range pyFrom.FindAllStringSubmatch(src, -1) {
			fs := module(m[1])
			for _, n := range strings.Split(m[2]+m[3], ",") {
				f := strings.Fields(n)
				if len(f) == 0 {
					continue
				}
				name := f[len(f)-1] // "x as y" → y
				if f[0] == "*" {
					whole = append(whole, fs...)
					continue
				}
				imp[name] = append(imp[name], fs...)
				// from pkg import module, from . import module
				sub := m[1] + "." + f[0]
				if strings.HasSuffix(m[1], ".") {
					sub = m[1] + f[0]
				}
				imp[name] = append(imp[name], module(sub)...)
			}
		}
	case "javascript", "typescript", "tsx":
		resolve := func(spec string) []string {
			if !strings.HasPrefix(spec, ".") {
				return nil
			}
			base := filepath.Join(dir, filepath.FromSlash(spec))
			for _, e := range jsExtensions {
				if exists(base + e) {
					return []string{base + e}
				}
			}
			return nil
		}
		for _, m := range jsImport.FindAllStringSubmatch(src, -1) {
			fs := resolve(m[2])
			clause := m[1]
			if i := strings.Index(clause, "{"); i >= 0 {
				j := strings.Index(clause, "}")
				if j > i {
					for _, n := range strings.Split(clause[i+1:j], ",") {
						f := strings.Fields(n)
						if len(f) > 0 {
							imp[f[len(f)-1]] = append(imp[f[len(f)-1]], fs...)
						}
					}
				}
				clause = clause[:i]
			}
			for _, n := range strings.Split(clause, ",") {
				f := strings.Fields(n)
				if len(f) > 0 && f[0] != "type" {
					imp[f[len(f)-1]] = append(imp[f[len(f)-1]], fs...) // default or * as ns
				}
			}
		}
		for _, m := range jsRequire.FindAllStringSubmatch(src, -1) {
			imp[m[1]] = append(imp[m[1]], resolve(m[2])...)
		}
	case "c", "cpp":
		for _, m := range cInclude.FindAllStringSubmatch(src, -1) {
			p := filepath.Join(dir, filepath.FromSlash(m[1]))
			if exists(p) {
				whole = append(whole, p)
			} else if fs := bySuffix(m[1]); fs != nil {
				whole = append(whole, fs...)
			}
		}
	case "java":
		for _, m := range javaImport.FindAllStringSubmatch(src, -1) {
			p := strings.ReplaceAll(m[1], ".", "/")
			if m[2] == "*" {
				continue
			}
			imp[m[2]] = append(imp[m[2]], bySuffix(p+"/"+m[2]+".java")...)
		}
	}
	return imp, whole
}
