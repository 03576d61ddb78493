//go:build cgo

package lang

/*
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>

// The tree-sitter types and functions used here, as declared by the
// api.h that github.com/smacker/go-tree-sitter (go.mod's version)
// compiles and links into the binary.
typedef uint16_t TSSymbol;
typedef struct TSTree TSTree;
typedef struct TSPoint { uint32_t row; uint32_t column; } TSPoint;
typedef struct TSNode { uint32_t context[4]; const void *id; const TSTree *tree; } TSNode;
typedef struct TSTreeCursor { const void *tree; const void *id; uint32_t context[3]; } TSTreeCursor;
TSSymbol ts_node_symbol(TSNode);
uint32_t ts_node_start_byte(TSNode);
uint32_t ts_node_end_byte(TSNode);
TSPoint ts_node_start_point(TSNode);
TSPoint ts_node_end_point(TSNode);
bool ts_node_is_named(TSNode);
TSTreeCursor ts_tree_cursor_new(TSNode);
void ts_tree_cursor_delete(TSTreeCursor *);
TSNode ts_tree_cursor_current_node(const TSTreeCursor *);
bool ts_tree_cursor_goto_first_child(TSTreeCursor *);
bool ts_tree_cursor_goto_next_sibling(TSTreeCursor *);
bool ts_tree_cursor_goto_parent(TSTreeCursor *);

enum { FLAG_WRAPPER = 1, FLAG_DECL_WRAPPER = 2, FLAG_DOC = 4 };

// MAX_DEPTH bounds the walk's recursion; definitions nested deeper are
// left to the Go side.
enum { MAX_DEPTH = 2000 };

// One definition: in, its node's id and byte range (sorted by start,
// then end descending); out, what extend computes.
typedef struct {
	const void *id;
	uint32_t start, end;
	uint32_t found;
	uint32_t outer_lo, outer_hi;   // the outermost wrapper's byte range
	uint32_t outer_start_row;
	TSPoint outer_end;
	uint32_t chunk_lo;             // first byte of its doc comments
} outer_def;

// A named doc-type sibling in the run before the child being visited.
typedef struct { uint32_t start, start_row, end_row; } doc_node;

// A visited ancestor of the cursor's node.
typedef struct {
	TSNode node;
	uint32_t chunk_lo;             // its own doc-comment start
} path_entry;

typedef struct {
	const uint8_t *src;
	const uint8_t *flags;
	uint32_t nflags;
	outer_def *defs;
	uint32_t ndefs;
	path_entry *path;
	uint32_t npath, cap_path;
	doc_node *docs;
	uint32_t ndocs, cap_docs;
	int oom, deep;
} walk;

static uint8_t flag_of(walk *w, TSNode n) {
	TSSymbol s = ts_node_symbol(n);
	return s < w->nflags ? w->flags[s] : 0;
}

// line_starts reports whether only blanks precede byte b on its line.
static bool line_starts(walk *w, uint32_t b) {
	for (int64_t i = (int64_t)b - 1; i >= 0 && w->src[i] != '\n'; i--) {
		if (w->src[i] != ' ' && w->src[i] != '\t') return false;
	}
	return true;
}

// first_def is the index of the first definition starting at or after b.
static uint32_t first_def(walk *w, uint32_t b) {
	uint32_t lo = 0, hi = w->ndefs;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (w->defs[mid].start < b) lo = mid + 1; else hi = mid;
	}
	return lo;
}

// def_at is the definition whose node is n, or -1.
static int64_t def_at(walk *w, TSNode n, uint32_t s) {
	for (uint32_t j = first_def(w, s); j < w->ndefs && w->defs[j].start == s; j++) {
		if (w->defs[j].id == n.id) return j;
	}
	return -1;
}

// holds_def reports whether a definition other than n itself lies in
// n's byte range [s, e].
static bool holds_def(walk *w, TSNode n, uint32_t s, uint32_t e) {
	for (uint32_t j = first_def(w, s); j < w->ndefs && w->defs[j].start <= e; j++) {
		if (w->defs[j].end <= e && w->defs[j].id != n.id) return true;
	}
	return false;
}

// doc_lo is where the doc comments above a node starting at byte lo on
// row row begin: the run docs[base:top] of named doc-type siblings
// before it, taken from the nearest while each ends on the row above
// the next (or on its row) and starts its line.
static uint32_t doc_lo(walk *w, uint32_t base, uint32_t lo, uint32_t row) {
	for (uint32_t i = w->ndocs; i > base; i--) {
		doc_node *d = &w->docs[i - 1];
		if (d->end_row + 1 < row || !line_starts(w, d->start)) break;
		lo = d->start;
		row = d->start_row;
	}
	return lo;
}

static void found(walk *w, uint32_t j, TSNode n) {
	// Climb the wrappers: a wrapper type, or a declaration wrapper
	// that begins where the definition does.
	int64_t i = (int64_t)w->npath - 1;
	uint32_t lo = w->path[w->npath].chunk_lo;  // n's own entry
	while (i >= 0) {
		TSNode par = w->path[i].node;
		uint8_t f = flag_of(w, par);
		if (!((f & FLAG_WRAPPER) || ((f & FLAG_DECL_WRAPPER) && ts_node_start_byte(par) == ts_node_start_byte(n)))) break;
		n = par;
		lo = w->path[i].chunk_lo;
		i--;
	}
	outer_def *d = &w->defs[j];
	d->found = 1;
	d->outer_lo = ts_node_start_byte(n);
	d->outer_hi = ts_node_end_byte(n);
	d->outer_start_row = ts_node_start_point(n).row;
	d->outer_end = ts_node_end_point(n);
	d->chunk_lo = lo;
}

static bool push_path(walk *w, TSNode n, uint32_t chunk_lo) {
	if (w->npath + 1 >= w->cap_path) {
		uint32_t c = w->cap_path * 2 + 16;
		path_entry *p = realloc(w->path, c * sizeof *p);
		if (!p) return false;
		w->path = p;
		w->cap_path = c;
	}
	w->path[w->npath].node = n;
	w->path[w->npath].chunk_lo = chunk_lo;
	return true;
}

static bool push_doc(walk *w, TSNode n) {
	if (w->ndocs >= w->cap_docs) {
		uint32_t c = w->cap_docs * 2 + 16;
		doc_node *p = realloc(w->docs, c * sizeof *p);
		if (!p) return false;
		w->docs = p;
		w->cap_docs = c;
	}
	doc_node *d = &w->docs[w->ndocs++];
	d->start = ts_node_start_byte(n);
	d->start_row = ts_node_start_point(n).row;
	d->end_row = ts_node_end_point(n).row;
	return true;
}

// visit walks the children of the cursor's node (path[npath-1]),
// descending into those that hold definitions, and leaves the cursor
// where it found it.
static void visit(walk *w, TSTreeCursor *c) {
	if (w->npath > MAX_DEPTH) { w->deep = 1; return; }
	if (!ts_tree_cursor_goto_first_child(c)) return;
	uint32_t base = w->ndocs;
	do {
		TSNode n = ts_tree_cursor_current_node(c);
		if (!ts_node_is_named(n)) continue;
		uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
		int64_t j = def_at(w, n, s);
		bool deeper = holds_def(w, n, s, e);
		if (j >= 0 || deeper) {
			uint32_t lo = doc_lo(w, base, s, ts_node_start_point(n).row);
			if (!push_path(w, n, lo)) { w->oom = 1; break; }
			if (j >= 0) found(w, (uint32_t)j, n);
			if (deeper) {
				w->npath++;
				visit(w, c);
				w->npath--;
				w->ndocs = base;
				if (w->oom) break;
			}
		}
		if (flag_of(w, n) & FLAG_DOC) {
			if (!push_doc(w, n)) { w->oom = 1; break; }
		} else {
			w->ndocs = base;
		}
	} while (ts_tree_cursor_goto_next_sibling(c));
	w->ndocs = base;
	ts_tree_cursor_goto_parent(c);
}

// outer_walk fills in every definition it finds under root; it returns
// false when out of memory.
static bool outer_walk(TSNode root, const uint8_t *src, const uint8_t *flags, uint32_t nflags,
		outer_def *defs, uint32_t ndefs) {
	walk w = {src, flags, nflags, defs, ndefs, NULL, 0, 0, NULL, 0, 0, 0, 0};
	if (!push_path(&w, root, ts_node_start_byte(root))) return false;
	w.npath = 1;
	TSTreeCursor c = ts_tree_cursor_new(root);
	visit(&w, &c);
	ts_tree_cursor_delete(&c);
	free(w.path);
	free(w.docs);
	return !w.oom;
}
*/
import "C"

import (
	"sort"
	"unsafe"

	sitter "github.com/smacker/go-tree-sitter"
)

// rawNode is the TSNode inside a *sitter.Node (its first field; the
// layout is checked by TestRawNode).
func rawNode(n *sitter.Node) C.TSNode {
	return *(*C.TSNode)(unsafe.Pointer(n))
}

// extendAll sets the wrapper range, doc-comment start and end line of
// every definition, as extend does one by one, in one walk of the tree
// in C: extend's Parent and PrevNamedSibling calls each walk down from
// the root, which is quadratic in the number of top-level definitions.
// A definition the walk does not reach is left to extend.
func (p *parse) extendAll(root *sitter.Node) {
	if len(p.defs) == 0 {
		return
	}
	order := make([]int, len(p.defs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		da, db := p.defs[order[a]], p.defs[order[b]]
		if da.StartByte != db.StartByte {
			return da.StartByte < db.StartByte
		}
		return da.EndByte > db.EndByte
	})
	out := (*C.outer_def)(C.calloc(C.size_t(len(order)), C.size_t(unsafe.Sizeof(C.outer_def{}))))
	if out == nil {
		for _, d := range p.defs {
			p.extend(d)
		}
		return
	}
	defer C.free(unsafe.Pointer(out))
	od := unsafe.Slice(out, len(order))
	for k, i := range order {
		d := p.defs[i]
		od[k].id = rawNode(d.node).id
		od[k].start, od[k].end = C.uint32_t(d.StartByte), C.uint32_t(d.EndByte)
	}
	var src *C.uint8_t
	if len(p.src) > 0 {
		src = (*C.uint8_t)(unsafe.Pointer(&p.src[0]))
	}
	flags := (*C.uint8_t)(unsafe.Pointer(&p.g.flags[0]))
	ok := C.outer_walk(rawNode(root), src, flags, C.uint32_t(len(p.g.flags)), out, C.uint32_t(len(order)))
	for k, i := range order {
		d := p.defs[i]
		o := &od[k]
		if !ok || o.found == 0 {
			p.extend(d)
			continue
		}
		d.outerLo, d.outerHi, d.chunkLo = int(o.outer_lo), int(o.outer_hi), int(o.chunk_lo)
		end := int(o.outer_end.row) + 1
		if o.outer_end.column == 0 && uint32(o.outer_end.row) > uint32(o.outer_start_row) {
			end = int(o.outer_end.row)
		}
		if end > d.EndLine {
			d.EndLine = end
		}
	}
}

// rawStartByte is C's ts_node_start_byte of rawNode(n).
func rawStartByte(n *sitter.Node) uint32 {
	return uint32(C.ts_node_start_byte(rawNode(n)))
}
