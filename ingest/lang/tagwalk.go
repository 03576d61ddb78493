//go:build cgo

package lang

/*
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>

// The tree-sitter types and functions used here, as declared by the
// api.h that github.com/smacker/go-tree-sitter compiles into the binary
// (the same declarations as outer.go's).
typedef uint16_t TSSymbol;
typedef uint16_t TSFieldId;
typedef struct TSTree TSTree;
typedef struct TSLanguage TSLanguage;
TSSymbol ts_language_symbol_for_name(const TSLanguage *, const char *, uint32_t, bool);
TSFieldId ts_language_field_id_for_name(const TSLanguage *, const char *, uint32_t);
typedef struct TSNode { uint32_t context[4]; const void *id; const TSTree *tree; } TSNode;
typedef struct TSTreeCursor { const void *tree; const void *id; uint32_t context[3]; } TSTreeCursor;
TSSymbol ts_node_symbol(TSNode);
uint32_t ts_node_start_byte(TSNode);
uint32_t ts_node_end_byte(TSNode);
bool ts_node_is_named(TSNode);
TSTreeCursor ts_tree_cursor_new(TSNode);
void ts_tree_cursor_delete(TSTreeCursor *);
void ts_tree_cursor_reset(TSTreeCursor *, TSNode);
TSNode ts_tree_cursor_current_node(const TSTreeCursor *);
TSFieldId ts_tree_cursor_current_field_id(const TSTreeCursor *);
bool ts_tree_cursor_goto_first_child(TSTreeCursor *);
bool ts_tree_cursor_goto_next_sibling(TSTreeCursor *);
bool ts_tree_cursor_goto_parent(TSTreeCursor *);

// One match of a tag pattern: its index in the query file, its @name's
// byte range and the node it captures as @definition or @reference.
typedef struct {
	TSNode whole;
	uint32_t name_lo, name_hi;
	uint32_t pattern;
} tag_match;

typedef struct {
	tag_match *m;
	uint32_t n, cap;
	int oom;
	TSTreeCursor kid;   // a second cursor, for a node's children
	TSTreeCursor kid2;  // and a third, for a child's children
	TSTreeCursor kid3;
	TSTreeCursor kid4;  // and a fourth, for a class body's statements
} matches;

static void emit(matches *ms, uint32_t pattern, TSNode name, TSNode whole) {
	if (ms->oom) return;
	if (ms->n == ms->cap) {
		uint32_t c = ms->cap * 2 + 64;
		tag_match *p = realloc(ms->m, c * sizeof *p);
		if (!p) { ms->oom = 1; return; }
		ms->m = p;
		ms->cap = c;
	}
	tag_match *t = &ms->m[ms->n++];
	t->whole = whole;
	t->name_lo = ts_node_start_byte(name);
	t->name_hi = ts_node_end_byte(name);
	t->pattern = pattern;
}

// The Python grammar's symbols and fields the patterns of
// queries/python.scm name, filled in by the Go side.
typedef struct {
	TSSymbol identifier, class_definition, function_definition, module, expression_statement,
		assignment, lambda, block, call, attribute, argument_list;
	TSFieldId name, left, right, body, function, attribute_f, superclasses;
} py_syms;

// next_child moves cursor c, which stands on a child of some node, to
// the first sibling from there on (itself included) with field f (any
// field when f is 0) and symbol s; it reports whether there is one.
static bool next_child(TSTreeCursor *c, TSFieldId f, TSSymbol s) {
	do {
		if ((f == 0 || ts_tree_cursor_current_field_id(c) == f) && ts_node_symbol(ts_tree_cursor_current_node(c)) == s) return true;
	} while (ts_tree_cursor_goto_next_sibling(c));
	return false;
}

// has_child reports whether node n has a child with field f and symbol s.
static bool has_child(TSTreeCursor *c, TSNode n, TSFieldId f, TSSymbol s) {
	ts_tree_cursor_reset(c, n);
	if (!ts_tree_cursor_goto_first_child(c)) return false;
	return next_child(c, f, s);
}

// py_assign emits pattern p for each child assignment of statement st
// whose left is an identifier (and, when lambda_only, whose right is a
// lambda), capturing st.
static void py_assign(matches *ms, const py_syms *y, TSNode st, uint32_t p, bool lambda_only) {
	TSTreeCursor *c = &ms->kid2;
	ts_tree_cursor_reset(c, st);
	if (!ts_tree_cursor_goto_first_child(c)) return;
	for (bool more = true; more && next_child(c, 0, y->assignment); more = ts_tree_cursor_goto_next_sibling(c)) {
		TSNode a = ts_tree_cursor_current_node(c);
		if (lambda_only && !has_child(&ms->kid3, a, y->right, y->lambda)) continue;
		TSTreeCursor *d = &ms->kid3;
		ts_tree_cursor_reset(d, a);
		if (!ts_tree_cursor_goto_first_child(d)) continue;
		for (bool m2 = true; m2 && next_child(d, y->left, y->identifier); m2 = ts_tree_cursor_goto_next_sibling(d)) {
			emit(ms, p, ts_tree_cursor_current_node(d), st);
		}
	}
}

// py_node emits the matches of queries/python.scm rooted at node n.
static void py_node(matches *ms, const py_syms *y, TSNode n) {
	TSSymbol s = ts_node_symbol(n);
	TSTreeCursor *c = &ms->kid;
	if (s == y->class_definition) {
		// 0: (class_definition name: (identifier) @name) @definition.class
		ts_tree_cursor_reset(c, n);
		if (ts_tree_cursor_goto_first_child(c)) {
			for (bool more = true; more && next_child(c, y->name, y->identifier); more = ts_tree_cursor_goto_next_sibling(c)) {
				emit(ms, 0, ts_tree_cursor_current_node(c), n);
			}
		}
		// 4: (class_definition body: (block (expression_statement
		//      (assignment left: (identifier) @name)) @definition.field))
		ts_tree_cursor_reset(c, n);
		if (ts_tree_cursor_goto_first_child(c)) {
			for (bool more = true; more && next_child(c, y->body, y->block); more = ts_tree_cursor_goto_next_sibling(c)) {
				// The statements are the block's children (py_assign uses
				// kid2 and kid3).
				TSTreeCursor *st = &ms->kid4;
				ts_tree_cursor_reset(st, ts_tree_cursor_current_node(c));
				if (!ts_tree_cursor_goto_first_child(st)) continue;
				for (bool m2 = true; m2 && next_child(st, 0, y->expression_statement); m2 = ts_tree_cursor_goto_next_sibling(st)) {
					py_assign(ms, y, ts_tree_cursor_current_node(st), 4, false);
				}
			}
		}
		// 7: (class_definition superclasses: (argument_list (identifier) @name) @reference.class)
		ts_tree_cursor_reset(c, n);
		if (ts_tree_cursor_goto_first_child(c)) {
			for (bool more = true; more && next_child(c, y->superclasses, y->argument_list); more = ts_tree_cursor_goto_next_sibling(c)) {
				TSNode al = ts_tree_cursor_current_node(c);
				TSTreeCursor *d = &ms->kid2;
				ts_tree_cursor_reset(d, al);
				if (!ts_tree_cursor_goto_first_child(d)) continue;
				for (bool m2 = true; m2 && next_child(d, 0, y->identifier); m2 = ts_tree_cursor_goto_next_sibling(d)) {
					emit(ms, 7, ts_tree_cursor_current_node(d), al);
				}
			}
		}
	} else if (s == y->function_definition) {
		// 1: (function_definition name: (identifier) @name) @definition.func
		ts_tree_cursor_reset(c, n);
		if (ts_tree_cursor_goto_first_child(c)) {
			for (bool more = true; more && next_child(c, y->name, y->identifier); more = ts_tree_cursor_goto_next_sibling(c)) {
				emit(ms, 1, ts_tree_cursor_current_node(c), n);
			}
		}
	} else if (s == y->module) {
		// 2: (module (expression_statement (assignment left: (identifier) @name right: (lambda))) @definition.func)
		// 3: (module (expression_statement (assignment left: (identifier) @name)) @definition.constant)
		ts_tree_cursor_reset(c, n);
		if (ts_tree_cursor_goto_first_child(c)) {
			for (bool more = true; more && next_child(c, 0, y->expression_statement); more = ts_tree_cursor_goto_next_sibling(c)) {
				TSNode st = ts_tree_cursor_current_node(c);
				py_assign(ms, y, st, 2, true);
				py_assign(ms, y, st, 3, false);
			}
		}
	} else if (s == y->call) {
		// 5: (call function: (identifier) @name) @reference.call
		// 6: (call function: (attribute attribute: (identifier) @name)) @reference.call
		ts_tree_cursor_reset(c, n);
		if (ts_tree_cursor_goto_first_child(c)) {
			do {
				if (ts_tree_cursor_current_field_id(c) != y->function) continue;
				TSNode f = ts_tree_cursor_current_node(c);
				TSSymbol fs = ts_node_symbol(f);
				if (fs == y->identifier) {
					emit(ms, 5, f, n);
				} else if (fs == y->attribute) {
					TSTreeCursor *d = &ms->kid2;
					ts_tree_cursor_reset(d, f);
					if (!ts_tree_cursor_goto_first_child(d)) continue;
					for (bool m2 = true; m2 && next_child(d, y->attribute_f, y->identifier); m2 = ts_tree_cursor_goto_next_sibling(d)) {
						emit(ms, 6, ts_tree_cursor_current_node(d), n);
					}
				}
			} while (ts_tree_cursor_goto_next_sibling(c));
		}
	}
}

// py_walk visits every node under root in preorder and collects the
// matches of queries/python.scm in *out (malloc'd, *out_n of them); it
// returns false when out of memory.
static bool py_walk(TSNode root, const py_syms *y, tag_match **out, uint32_t *out_n) {
	matches ms = {0};
	ms.kid = ts_tree_cursor_new(root);
	ms.kid2 = ts_tree_cursor_new(root);
	ms.kid3 = ts_tree_cursor_new(root);
	ms.kid4 = ts_tree_cursor_new(root);
	TSTreeCursor c = ts_tree_cursor_new(root);
	for (;;) {
		py_node(&ms, y, ts_tree_cursor_current_node(&c));
		if (ms.oom) break;
		if (ts_tree_cursor_goto_first_child(&c)) continue;
		while (!ts_tree_cursor_goto_next_sibling(&c)) {
			if (!ts_tree_cursor_goto_parent(&c)) goto done;
		}
	}
done:
	ts_tree_cursor_delete(&c);
	ts_tree_cursor_delete(&ms.kid);
	ts_tree_cursor_delete(&ms.kid2);
	ts_tree_cursor_delete(&ms.kid3);
	ts_tree_cursor_delete(&ms.kid4);
	if (ms.oom) { free(ms.m); return false; }
	*out = ms.m;
	*out_n = ms.n;
	return true;
}

// A chain pattern: a node of symbol root (level 0) whose child (field
// f1, any field when 0) of symbol s1 (any named node when 0) has, when
// levels is 2, a child (field f2) of symbol s2; the last node of the
// chain is @name and the root the captured definition or reference.
// levels 0 is (root) @name @reference: the node is both.
typedef struct {
	uint32_t pattern;
	uint32_t levels;
	TSFieldId f1, f2;
	TSSymbol s1, s2;
} chain_pat;

static bool node_is(TSNode n, TSSymbol s) {
	return s == 0 ? ts_node_is_named(n) : ts_node_symbol(n) == s;
}

// chain_node emits the matches of the chain patterns pats[first[s]:first[s+1]]
// rooted at n, of symbol s.
static void chain_node(matches *ms, const chain_pat *pats, const uint32_t *first, uint32_t nsyms, TSNode n) {
	TSSymbol s = ts_node_symbol(n);
	if (s >= nsyms) return;
	for (uint32_t k = first[s]; k < first[s + 1]; k++) {
		const chain_pat *p = &pats[k];
		if (p->levels == 0) {
			emit(ms, p->pattern, n, n);
			continue;
		}
		TSTreeCursor *c = &ms->kid;
		ts_tree_cursor_reset(c, n);
		if (!ts_tree_cursor_goto_first_child(c)) continue;
		do {
			if (p->f1 != 0 && ts_tree_cursor_current_field_id(c) != p->f1) continue;
			TSNode a = ts_tree_cursor_current_node(c);
			if (!node_is(a, p->s1)) continue;
			if (p->levels == 1) {
				emit(ms, p->pattern, a, n);
				continue;
			}
			TSTreeCursor *d = &ms->kid2;
			ts_tree_cursor_reset(d, a);
			if (!ts_tree_cursor_goto_first_child(d)) continue;
			do {
				if (p->f2 != 0 && ts_tree_cursor_current_field_id(d) != p->f2) continue;
				TSNode b = ts_tree_cursor_current_node(d);
				if (node_is(b, p->s2)) emit(ms, p->pattern, b, n);
			} while (ts_tree_cursor_goto_next_sibling(d));
		} while (ts_tree_cursor_goto_next_sibling(c));
	}
}

// chain_walk is py_walk for a language whose patterns are all chains.
static bool chain_walk(TSNode root, const chain_pat *pats, const uint32_t *first, uint32_t nsyms,
		tag_match **out, uint32_t *out_n) {
	matches ms = {0};
	ms.kid = ts_tree_cursor_new(root);
	ms.kid2 = ts_tree_cursor_new(root);
	TSTreeCursor c = ts_tree_cursor_new(root);
	for (;;) {
		chain_node(&ms, pats, first, nsyms, ts_tree_cursor_current_node(&c));
		if (ms.oom) break;
		if (ts_tree_cursor_goto_first_child(&c)) continue;
		while (!ts_tree_cursor_goto_next_sibling(&c)) {
			if (!ts_tree_cursor_goto_parent(&c)) goto done;
		}
	}
done:
	ts_tree_cursor_delete(&c);
	ts_tree_cursor_delete(&ms.kid);
	ts_tree_cursor_delete(&ms.kid2);
	if (ms.oom) { free(ms.m); return false; }
	*out = ms.m;
	*out_n = ms.n;
	return true;
}
*/
import "C"

import (
	"unsafe"

	sitter "github.com/smacker/go-tree-sitter"
)

// tagWalker finds the matches of a language's tag query by walking the
// tree in C with tree cursors, instead of running the query: the query
// cursor's generic matching costs about a third of a parse, and a walk
// that tests node types by hand does the same in a fraction of that.
// Each walker reproduces its query file pattern by pattern (same pattern
// indexes, same captures): Python's by hand (py_node), Java's and
// Rust's as tables of chain patterns (chainSpecs). TestTagWalkMatchesQuery
// and FuzzTagWalk hold the two to the same output.
type tagWalker struct {
	roles []patternRole // per pattern
	py    *C.py_syms
	// chain patterns, grouped by root symbol: those of symbol s are
	// pats[first[s]:first[s+1]].
	pats  []C.chain_pat
	first []C.uint32_t
}

// patternRole is what a pattern's match is: a definition or a reference
// of a kind.
type patternRole struct {
	def  bool
	kind string
}

// pyRoles are queries/python.scm's patterns, in order.
var pyRoles = []patternRole{{true, "class"}, {true, "func"}, {true, "func"}, {true, "constant"},
	{true, "field"}, {false, "call"}, {false, "call"}, {false, "class"}}

// chainSpec is one pattern of the form
// (root f1: (s1 f2: (s2) @name)) @definition.kind or @reference.kind:
// fields "" match any field, s1 or s2 "_" any named node, levels is how
// many of the steps there are (0: (root) @name @reference.kind).
type chainSpec struct {
	root, f1, s1, f2, s2 string
	levels               int
	patternRole
}

func def1(root, f1, s1, kind string) chainSpec {
	return chainSpec{root, f1, s1, "", "", 1, patternRole{true, kind}}
}
func ref1(root, f1, s1, kind string) chainSpec {
	return chainSpec{root, f1, s1, "", "", 1, patternRole{false, kind}}
}

// chainSpecs are the patterns of queries/java.scm and queries/rust.scm,
// in order.
var chainSpecs = map[string][]chainSpec{
	"java": {
		def1("class_declaration", "name", "identifier", "class"),
		def1("interface_declaration", "name", "identifier", "interface"),
		def1("enum_declaration", "name", "identifier", "enum"),
		def1("record_declaration", "name", "identifier", "class"),
		def1("annotation_type_declaration", "name", "identifier", "interface"),
		def1("method_declaration", "name", "identifier", "method"),
		def1("constructor_declaration", "name", "identifier", "method"),
		{"field_declaration", "declarator", "variable_declarator", "name", "identifier", 2, patternRole{true, "field"}},
		ref1("method_invocation", "name", "identifier", "call"),
		ref1("object_creation_expression", "type", "type_identifier", "class"),
		ref1("superclass", "", "type_identifier", "class"),
		{"super_interfaces", "", "type_list", "", "type_identifier", 2, patternRole{false, "type"}},
		{"type_identifier", "", "", "", "", 0, patternRole{false, "type"}},
	},
	"rust": {
		def1("struct_item", "name", "type_identifier", "struct"),
		def1("enum_item", "name", "type_identifier", "enum"),
		def1("union_item", "name", "type_identifier", "union"),
		def1("trait_item", "name", "type_identifier", "trait"),
		def1("impl_item", "type", "_", "impl"),
		def1("mod_item", "name", "identifier", "module"),
		def1("function_item", "name", "identifier", "func"),
		def1("function_signature_item", "name", "identifier", "func"),
		def1("macro_definition", "name", "identifier", "macro"),
		def1("type_item", "name", "type_identifier", "type"),
		def1("const_item", "name", "identifier", "constant"),
		def1("static_item", "name", "identifier", "variable"),
		ref1("call_expression", "function", "identifier", "call"),
		{"call_expression", "function", "field_expression", "field", "field_identifier", 2, patternRole{false, "call"}},
		{"call_expression", "function", "scoped_identifier", "name", "identifier", 2, patternRole{false, "call"}},
		ref1("macro_invocation", "macro", "identifier", "macro"),
		ref1("impl_item", "trait", "type_identifier", "trait"),
		{"type_identifier", "", "", "", "", 0, patternRole{false, "type"}},
	},
}

// newTagWalker returns the walker of language tag, or nil when it has
// none, its pattern count is not the query's, or the grammar lacks a
// symbol or field its patterns name.
func newTagWalker(tag string, l *sitter.Language, q *sitter.Query) *tagWalker {
	raw := (*C.TSLanguage)(*(*unsafe.Pointer)(unsafe.Pointer(l))) // Language's first field
	ok := true
	sym := func(name string) C.TSSymbol {
		if name == "_" {
			return 0
		}
		cs := C.CString(name)
		defer C.free(unsafe.Pointer(cs))
		s := C.ts_language_symbol_for_name(raw, cs, C.uint32_t(len(name)), true)
		ok = ok && s != 0
		return s
	}
	field := func(name string) C.TSFieldId {
		if name == "" {
			return 0
		}
		cs := C.CString(name)
		defer C.free(unsafe.Pointer(cs))
		f := C.ts_language_field_id_for_name(raw, cs, C.uint32_t(len(name)))
		ok = ok && f != 0
		return f
	}
	w := &tagWalker{}
	if specs, has := chainSpecs[tag]; has {
		nsyms := int(l.SymbolCount())
		count := make([]int, nsyms+1)
		pats := make([]C.chain_pat, len(specs))
		roots := make([]int, len(specs))
		for i, sp := range specs {
			w.roles = append(w.roles, sp.patternRole)
			r := sym(sp.root)
			pats[i] = C.chain_pat{pattern: C.uint32_t(i), levels: C.uint32_t(sp.levels)}
			if sp.levels >= 1 {
				pats[i].f1, pats[i].s1 = field(sp.f1), sym(sp.s1)
			}
			if sp.levels >= 2 {
				pats[i].f2, pats[i].s2 = field(sp.f2), sym(sp.s2)
			}
			if int(r) >= nsyms || r == 0 {
				return nil
			}
			roots[i] = int(r)
			count[r+1]++
		}
		w.first = make([]C.uint32_t, nsyms+1)
		for s := 1; s <= nsyms; s++ {
			count[s] += count[s-1]
			w.first[s] = C.uint32_t(count[s])
		}
		// Group by root symbol, keeping pattern order within a symbol.
		w.pats = make([]C.chain_pat, len(specs))
		next := append([]int(nil), count...)
		for i, r := range roots {
			w.pats[next[r]] = pats[i]
			next[r]++
		}
	} else if tag == "python" {
		w.roles = pyRoles
		w.py = &C.py_syms{
			identifier:           sym("identifier"),
			class_definition:     sym("class_definition"),
			function_definition:  sym("function_definition"),
			module:               sym("module"),
			expression_statement: sym("expression_statement"),
			assignment:           sym("assignment"),
			lambda:               sym("lambda"),
			block:                sym("block"),
			call:                 sym("call"),
			attribute:            sym("attribute"),
			argument_list:        sym("argument_list"),
			name:                 field("name"),
			left:                 field("left"),
			right:                field("right"),
			body:                 field("body"),
			function:             field("function"),
			attribute_f:          field("attribute"),
			superclasses:         field("superclasses"),
		}
	} else {
		return nil
	}
	if !ok || q.PatternCount() != uint32(len(w.roles)) {
		return nil
	}
	return w
}

// nodeLayout is a *sitter.Node's layout: the TSNode, then the tree it
// belongs to (checked by TestNodeLayout).
type nodeLayout struct {
	c C.TSNode
	t *sitter.Tree
}

// matches walks tree and calls fn for every match, in preorder of the
// node a pattern starts at; whole is nil for references. It reports
// false when C ran out of memory (fn was then not called).
func (w *tagWalker) matches(tree *sitter.Tree, fn func(m tagMatch)) bool {
	root := tree.RootNode()
	var out *C.tag_match
	var n C.uint32_t
	var ok C.bool
	if w.py != nil {
		ok = C.py_walk(rawNode(root), w.py, &out, &n)
	} else {
		ok = C.chain_walk(rawNode(root), &w.pats[0], &w.first[0], C.uint32_t(len(w.first)-1), &out, &n)
	}
	if !ok {
		return false
	}
	if out == nil {
		return true
	}
	defer C.free(unsafe.Pointer(out))
	for _, t := range unsafe.Slice(out, int(n)) {
		r := w.roles[t.pattern]
		m := tagMatch{pattern: uint16(t.pattern), kind: r.kind, isDef: r.def, nameLo: uint32(t.name_lo), nameHi: uint32(t.name_hi)}
		if r.def {
			m.whole = (*sitter.Node)(unsafe.Pointer(&nodeLayout{t.whole, tree}))
		}
		fn(m)
	}
	return true
}
