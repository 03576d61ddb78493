//go:build cgo

package lang

/*
#include <stdint.h>
#include <stdbool.h>

// The tree-sitter types and functions used here, as declared by the
// api.h that github.com/smacker/go-tree-sitter compiles into the binary
// (the same declarations as outer.go's).
typedef uint16_t TSSymbol;
typedef uint16_t TSFieldId;
typedef struct TSTree TSTree;
typedef struct TSNode { uint32_t context[4]; const void *id; const TSTree *tree; } TSNode;
typedef struct TSTreeCursor { const void *tree; const void *id; uint32_t context[3]; } TSTreeCursor;
TSSymbol ts_node_symbol(TSNode);
TSTreeCursor ts_tree_cursor_new(TSNode);
void ts_tree_cursor_delete(TSTreeCursor *);
TSNode ts_tree_cursor_current_node(const TSTreeCursor *);
TSFieldId ts_tree_cursor_current_field_id(const TSTreeCursor *);
bool ts_tree_cursor_goto_first_child(TSTreeCursor *);
bool ts_tree_cursor_goto_next_sibling(TSTreeCursor *);
bool ts_tree_cursor_goto_parent(TSTreeCursor *);

// cursor_walk visits every node under root in preorder with one tree
// cursor, reading each node's symbol and field id (what a matcher of
// node types needs at least), and returns the number of nodes visited;
// *hits counts the nodes of symbol sym with field id field (0: any).
static uint64_t cursor_walk(TSNode root, TSSymbol sym, TSFieldId field, uint64_t *hits) {
	TSTreeCursor c = ts_tree_cursor_new(root);
	uint64_t n = 0, h = 0;
	for (;;) {
		TSNode cur = ts_tree_cursor_current_node(&c);
		n++;
		if (ts_node_symbol(cur) == sym && (field == 0 || ts_tree_cursor_current_field_id(&c) == field)) h++;
		if (ts_tree_cursor_goto_first_child(&c)) continue;
		while (!ts_tree_cursor_goto_next_sibling(&c)) {
			if (!ts_tree_cursor_goto_parent(&c)) goto done;
		}
	}
done:
	ts_tree_cursor_delete(&c);
	*hits = h;
	return n;
}
*/
import "C"

import sitter "github.com/smacker/go-tree-sitter"

// cursorWalk visits every node of root's subtree in C with one tree
// cursor and returns how many there are and how many have symbol sym
// (and field id field, when not 0): the cost floor of finding node types
// in a tree without a query cursor.
func cursorWalk(root *sitter.Node, sym sitter.Symbol, field uint16) (nodes, hits uint64) {
	var h C.uint64_t
	n := C.cursor_walk(rawNode(root), C.TSSymbol(sym), C.TSFieldId(field), &h)
	return uint64(n), uint64(h)
}
