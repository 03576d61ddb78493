package mcp

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/ingest"
)

// --- list ---

type listArgs struct {
	Path   string `json:"path"`
	Limit  *int   `json:"limit"`
	Cursor string `json:"cursor"`
}

// listCursor continues a listing after the entry (kind, name).
type listCursor struct {
	Root int    `json:"r"`
	Dir  string `json:"d"`
	Kind int    `json:"k"` // 0 dir, 1 file
	Name string `json:"n"`
}

func (a *listArgs) validate(c *call) []contract.FieldError {
	var fes []contract.FieldError
	fes = append(fes, checkText([]any{"arguments", "path"}, a.Path, 0, 4096)...)
	if a.Limit != nil && (*a.Limit < 1 || *a.Limit > MaxListLimit) {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "limit"}, InputValue: *a.Limit, ErrorType: contract.ErrTypeOutOfRange,
			Message: "limit out of range", ExpectedDomain: fmt.Sprintf("integer 1..%d", MaxListLimit)})
	}
	if a.Cursor != "" {
		var lc listCursor
		if !c.openCursor("list", a.Cursor, &lc) {
			fes = append(fes, badCursor(a.Cursor))
		}
	}
	return fes
}

// entry is one list entry.
type entry struct {
	Name   string `json:"name"`
	Type   string `json:"type"`             // dir | file
	Files  int    `json:"files,omitempty"`  // dir: visible files in its subtree
	Chunks int    `json:"chunks,omitempty"` // file: indexed chunks
}

type listResult struct {
	Path       string  `json:"path"`
	Entries    []entry `json:"entries"`
	NextCursor string  `json:"next_cursor,omitempty"`
	Nonce      string  `json:"nonce"`
}

// lookupDir resolves a directory argument ("" = the root; relative to a
// root, or absolute under one) to a directory the caller can see.
func (c *call) lookupDir(cat *catalog, vis *visibility, p string) (*dir, error) {
	var key dirKey
	found := false
	if len(c.s.roots) == 0 {
		return nil, &notFoundError{what: "path"}
	}
	switch {
	case p == "" || p == "." || p == "/":
		key, found = dirKey{0, ""}, true
	case filepath.IsAbs(p) || strings.HasPrefix(p, "file:"):
		if u, _, _, err := engine.ParseFileURI(p); err == nil {
			p = u
		}
		p = filepath.Clean(p)
		if i := slices.Index(c.s.roots, p); i >= 0 {
			key, found = dirKey{i, ""}, true
		} else if r, rel, ok := underRoot(c.s.roots, p); ok {
			key, found = dirKey{r, rel}, true
		}
	default:
		rel := path.Clean(strings.TrimSuffix(filepath.ToSlash(p), "/"))
		if !filepath.IsLocal(rel) {
			return nil, &contract.ValidationError{Errors: []contract.FieldError{{Loc: []any{"arguments", "path"}, InputValue: clip(p),
				ErrorType: "outside_roots", Message: "path leaves the root", ExpectedDomain: "a directory under the indexed roots"}}}
		}
		for r := range c.s.roots {
			if cat.dirs[dirKey{r, rel}] != nil {
				key, found = dirKey{r, rel}, true
				break
			}
		}
	}
	if !found {
		return nil, &notFoundError{what: "path"}
	}
	d := cat.dirs[key]
	if d == nil || vis.count(d.first, d.last) == 0 {
		return nil, &notFoundError{what: "path"}
	}
	return d, nil
}

func runList(ctx context.Context, c *call, a *listArgs) (listResult, string, error) {
	cat, err := c.s.catalog(ctx)
	if err != nil {
		return listResult{}, "", err
	}
	vis := cat.visible(c.caller.Principal, c.s.o.Namespace)
	var d *dir
	var after *listCursor
	if a.Cursor != "" {
		var lc listCursor
		c.openCursor("list", a.Cursor, &lc)
		d = cat.dirs[dirKey{lc.Root, lc.Dir}]
		if d == nil || vis.count(d.first, d.last) == 0 {
			return listResult{}, "", &notFoundError{what: "path"}
		}
		after = &lc
	} else if d, err = c.lookupDir(cat, vis, a.Path); err != nil {
		return listResult{}, "", err
	}
	limit := DefaultListLimit
	if a.Limit != nil {
		limit = *a.Limit
	}
	res := listResult{Path: d.key.rel, Entries: []entry{}, Nonce: c.nonce}
	var b strings.Builder
	more := false
	add := func(kind int, name string, e entry) bool {
		if after != nil && (kind < after.Kind || kind == after.Kind && name <= after.Name) {
			return true
		}
		if len(res.Entries) == limit {
			more = true
			return false
		}
		res.Entries = append(res.Entries, e)
		if kind == 0 {
			fmt.Fprintf(&b, "%s/ (%d files)\n", e.Name, e.Files)
		} else {
			fmt.Fprintf(&b, "%s (%d chunks)\n", e.Name, e.Chunks)
		}
		if len(res.Entries) == limit {
			res.NextCursor = c.sealCursor("list", listCursor{Root: d.key.root, Dir: d.key.rel, Kind: kind, Name: name})
		}
		return true
	}
	for _, name := range d.subdirs {
		sd := cat.dirs[dirKey{d.key.root, path.Join(d.key.rel, name)}]
		if n := vis.count(sd.first, sd.last); n > 0 && !add(0, name, entry{Name: safeName(name), Type: "dir", Files: n}) {
			break
		}
	}
	if !more {
		for _, f := range d.files {
			if vis.file[f.idx] && !add(1, path.Base(f.rel), entry{Name: safeName(path.Base(f.rel)), Type: "file", Chunks: len(f.chunks)}) {
				break
			}
		}
	}
	if !more {
		res.NextCursor = ""
	}
	text, err := frameTree(c, d, b.String())
	if err != nil {
		return listResult{}, "", err
	}
	if res.NextCursor != "" {
		text += "more entries: call list with cursor=next_cursor\n"
	}
	return res, text, nil
}

// frameTree frames a listing or map of directory d as evidence (its names
// come from the indexed tree, so they are untrusted text like any hit).
func frameTree(c *call, d *dir, body string) (string, error) {
	abs := filepath.Join(c.s.roots[d.key.root], filepath.FromSlash(d.key.rel))
	id := "dir:" + safeName(d.key.rel)
	if d.key.rel == "" {
		id = "dir:."
	}
	env := contract.Envelope{DocID: id, SourceURI: ingest.FileURI(abs), Content: body, Score: 1,
		Trust: contract.Derived, VersionHash: engine.VersionHash([]byte(body))}
	return contract.FrameHit(env, c.nonce)
}

// --- repo_map ---

type mapArgs struct {
	Path           string `json:"path"`
	TokenBudget    *int   `json:"token_budget"`
	SymbolsPerFile *int   `json:"symbols_per_file"`
	Focus          string `json:"focus"`
}

func (a *mapArgs) validate(c *call) []contract.FieldError {
	var fes []contract.FieldError
	fes = append(fes, checkText([]any{"arguments", "path"}, a.Path, 0, 4096)...)
	if a.TokenBudget != nil && (*a.TokenBudget < 100 || *a.TokenBudget > c.s.o.TokenBudget) {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "token_budget"}, InputValue: *a.TokenBudget, ErrorType: contract.ErrTypeOutOfRange,
			Message: "token_budget out of range", ExpectedDomain: fmt.Sprintf("integer 100..%d tokens (the server's ceiling)", c.s.o.TokenBudget)})
	}
	fes = append(fes, checkText([]any{"arguments", "focus"}, a.Focus, 0, 1024)...)
	if a.SymbolsPerFile != nil && (*a.SymbolsPerFile < 0 || *a.SymbolsPerFile > 10) {
		fes = append(fes, contract.FieldError{Loc: []any{"arguments", "symbols_per_file"}, InputValue: *a.SymbolsPerFile, ErrorType: contract.ErrTypeOutOfRange,
			Message: "symbols_per_file out of range", ExpectedDomain: "integer 0..10"})
	}
	return fes
}

type mapResult struct {
	Path       string `json:"path"`
	Files      int    `json:"files"`
	ShownFiles int    `json:"shown_files"`
	ShownDirs  int    `json:"shown_dirs"`
	Truncated  bool   `json:"truncated"`
	Tokens     int    `json:"tokens"`
	Nonce      string `json:"nonce"`
}

// mapItem is one line of the map: a directory or a file at a depth.
type mapItem struct {
	d     *dir
	f     *file
	depth int
	line  string
}

// runRepoMap renders the subtree top-down: the items (subdirectories and
// files with their top symbols) of each depth are admitted in order until
// the first that does not fit the budget, so a small budget shows the
// upper levels whole rather than one corner in detail; the admitted items
// print in tree order. The cost is proportional to what is shown.
func runRepoMap(ctx context.Context, c *call, a *mapArgs) (mapResult, string, error) {
	cat, err := c.s.catalog(ctx)
	if err != nil {
		return mapResult{}, "", err
	}
	vis := cat.visible(c.caller.Principal, c.s.o.Namespace)
	top, err := c.lookupDir(cat, vis, a.Path)
	if err != nil {
		return mapResult{}, "", err
	}
	budget := c.s.o.TokenBudget
	if a.TokenBudget != nil {
		budget = *a.TokenBudget
	}
	if c.s.o.Graph != nil {
		return c.rankedMap(cat, vis, top, a, budget)
	}
	k := 3
	if a.SymbolsPerFile != nil {
		k = *a.SymbolsPerFile
	}
	abs := filepath.Join(c.s.roots[top.key.root], filepath.FromSlash(top.key.rel))
	room := budget*contract.DefaultBytesPerToken - frameOverhead(abs) - 96 // the closing note
	res := mapResult{Path: top.key.rel, Files: vis.count(top.first, top.last), Nonce: c.nonce}
	shown := map[*dir]bool{top: true}
	shownFiles := map[*file]string{}
	dirLines := map[*dir]string{}
	level := []*dir{top}
	used := 0
	full := false
	for depth := 0; len(level) > 0 && !full; depth++ {
		if err := ctx.Err(); err != nil {
			return mapResult{}, "", err
		}
		var next []*dir
		for _, d := range level {
			ind := strings.Repeat("  ", depth)
			for _, name := range d.subdirs {
				sd := cat.dirs[dirKey{d.key.root, path.Join(d.key.rel, name)}]
				n := vis.count(sd.first, sd.last)
				if n == 0 {
					continue
				}
				line := fmt.Sprintf("%s%s/ (%d files)\n", ind, name, n)
				cost := contract.EscapedLen(line)
				if used+cost > room {
					full = true
					break
				}
				used += cost
				shown[sd] = true
				dirLines[sd] = line
				res.ShownDirs++
				next = append(next, sd)
			}
			for _, f := range d.files {
				if full {
					break
				}
				if !vis.file[f.idx] {
					continue
				}
				line := ind + path.Base(f.rel)
				if syms := topSymbols(f, k); len(syms) > 0 {
					line += ": " + strings.Join(syms, ", ")
				}
				line += "\n"
				cost := contract.EscapedLen(line)
				if used+cost > room {
					full = true
					break
				}
				used += cost
				shownFiles[f] = line
				res.ShownFiles++
			}
			if full {
				break
			}
		}
		level = next
	}
	var b strings.Builder
	var walk func(d *dir)
	walk = func(d *dir) {
		if d != top {
			b.WriteString(dirLines[d])
		}
		for _, name := range d.subdirs {
			if sd := cat.dirs[dirKey{d.key.root, path.Join(d.key.rel, name)}]; shown[sd] {
				walk(sd)
			}
		}
		for _, f := range d.files {
			if line, ok := shownFiles[f]; ok {
				b.WriteString(line)
			}
		}
	}
	walk(top)
	if res.ShownFiles < res.Files {
		res.Truncated = true
		fmt.Fprintf(&b, "[... %d of %d files not shown: call repo_map with a path or list a directory ...]\n", res.Files-res.ShownFiles, res.Files)
	}
	text, err := frameTree(c, top, b.String())
	if err != nil {
		return mapResult{}, "", err
	}
	res.Tokens = (len(text) + contract.DefaultBytesPerToken - 1) / contract.DefaultBytesPerToken
	return res, text, nil
}

// topSymbols returns up to k of a file's declared symbols: exported
// before unexported, and within each, types, then functions, then
// methods, then constants and variables, in file order. It walks the
// chunks once per rank until k names are found, so the cost follows k
// and the ranks used, and nothing is allocated but the result.
func topSymbols(f *file, k int) []string {
	if k == 0 {
		return nil
	}
	var out []string
	for rank := 0; rank < 8 && len(out) < k; rank++ {
		exported := rank < 4
		for i := range f.chunks {
			ch := &f.chunks[i]
			if symbolRank(ch.kind) != rank%4 {
				continue
			}
			if ch.kind == "func" || ch.kind == "method" {
				out = takeSymbol(out, ch.symbol, exported)
			} else {
				for _, n := range ch.names {
					if out = takeSymbol(out, n, exported); len(out) == k {
						break
					}
				}
			}
			if len(out) == k {
				break
			}
		}
	}
	return out
}

// symbolRank orders declaration kinds for topSymbols (-1: not a symbol).
func symbolRank(kind string) int {
	switch kind {
	case "type":
		return 0
	case "func":
		return 1
	case "method":
		return 2
	case "const", "var":
		return 3
	}
	return -1
}

// takeSymbol appends declared name n, sanitised, to out when it is a
// symbol ("" and "_" are not), its export matches exported, and out does
// not hold it yet.
func takeSymbol(out []string, n string, exported bool) []string {
	if n == "" || n == "_" {
		return out
	}
	base := n[strings.LastIndexByte(n, '.')+1:]
	if first, _ := utf8.DecodeRuneInString(base); unicode.IsUpper(first) != exported {
		return out
	}
	if n = safeName(n); slices.Contains(out, n) {
		return out
	}
	return append(out, n)
}
