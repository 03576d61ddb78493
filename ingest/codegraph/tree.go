package codegraph

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/stratasearch/strata/engine/graph"
	"github.com/stratasearch/strata/ingest"
)

// TreeStats summarises BuildTree.
type TreeStats struct {
	GoFiles, LangFiles int
	SourceBytes        int64
	// GoTyped says the Go files were type-checked (BuildGo: the tree has a
	// go.mod or go.work); otherwise they were read by SyntaxFragment.
	GoTyped bool
	Errors  []string
}

// BuildTree builds the code graph of the tree at root (absolute): the Go
// files with BuildGo over ./... when root holds a go.mod or go.work
// (type-checked, with o's dynamic call resolution), else with
// SyntaxFragment per file (package path: root's base name joined with
// the directory relative to root); and the files of the tree-sitter languages with BuildLang. The
// files are those ingest.Walk lists under chunk's rules, so node DocIDs
// are the chunk ids an index run of the same root writes. Errors: the
// walk's, the context's, BuildGo's load error.
func BuildTree(ctx context.Context, root string, o GoOptions, chunk ingest.Options) (*graph.Graph, TreeStats, error) {
	return BuildTrees(ctx, []string{root}, o, chunk)
}

// BuildTrees is BuildTree over several trees (absolute roots) into one
// graph, as one index run of the same roots writes one collection: each
// root is built as BuildTree builds it (a go.mod or go.work at the root
// type-checks its Go files), and the fragments are merged (a key two
// roots define, such as a package both name alike, is one node). The
// stats are summed; GoTyped says every root with Go files was
// type-checked. Errors: as BuildTree's, for the first root that fails.
func BuildTrees(ctx context.Context, roots []string, o GoOptions, chunk ingest.Options) (*graph.Graph, TreeStats, error) {
	var st TreeStats
	var frags []*graph.Fragment
	typed, untyped := 0, 0
	for _, root := range roots {
		fr, rs, err := treeFragments(ctx, root, o, chunk)
		if err != nil {
			return nil, st, err
		}
		frags = append(frags, fr...)
		st.GoFiles += rs.GoFiles
		st.LangFiles += rs.LangFiles
		st.SourceBytes += rs.SourceBytes
		st.Errors = append(st.Errors, rs.Errors...)
		switch {
		case rs.GoTyped:
			typed++
		case rs.GoFiles > 0:
			untyped++
		}
	}
	st.GoTyped = typed > 0 && untyped == 0
	return graph.FromFragments(frags), st, nil
}

// treeFragments builds the fragments of one tree for BuildTrees.
func treeFragments(ctx context.Context, root string, o GoOptions, chunk ingest.Options) ([]*graph.Fragment, TreeStats, error) {
	var st TreeStats
	chunk.EnsureDefaults()
	o.Chunk = chunk
	files, _, err := ingest.Walk(root, chunk)
	if err != nil {
		return nil, st, err
	}
	var goFiles, other []string
	for _, f := range files {
		if ingest.Lang(f.Path) == "go" {
			goFiles = append(goFiles, f.Path)
		} else {
			other = append(other, f.Path)
		}
	}
	var frags []*graph.Fragment
	if len(goFiles) > 0 {
		_, errMod := os.Stat(filepath.Join(root, "go.mod"))
		_, errWork := os.Stat(filepath.Join(root, "go.work"))
		if errMod == nil || errWork == nil {
			r, err := BuildGo(ctx, root, []string{"./..."}, o)
			if err != nil {
				return nil, st, err
			}
			st.GoTyped, st.GoFiles, st.SourceBytes = true, r.Files, r.SourceBytes
			st.Errors = append(st.Errors, r.Errors...)
			frags = append(frags, r.Fragments...)
		} else {
			// One syntaxBatch, so a name one file declares resolves in
			// the package's other files.
			var batch []syntaxFile
			for _, p := range goFiles {
				if err := ctx.Err(); err != nil {
					return nil, st, err
				}
				src, err := os.ReadFile(p)
				if err != nil {
					st.Errors = append(st.Errors, err.Error())
					continue
				}
				rel, _ := filepath.Rel(root, filepath.Dir(p))
				batch = append(batch, syntaxFile{path: p, pkg: path.Join(filepath.Base(root), filepath.ToSlash(rel)), src: src})
			}
			for i, fr := range syntaxBatch(batch, nil, chunk, nil) {
				if len(fr.Nodes) == 0 {
					st.Errors = append(st.Errors, fr.File+": does not parse")
					continue
				}
				st.GoFiles++
				st.SourceBytes += int64(len(batch[i].src))
				frags = append(frags, fr)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, st, err
	}
	lr := BuildLang(other, chunk)
	st.LangFiles = lr.Files
	st.SourceBytes += lr.Bytes
	st.Errors = append(st.Errors, lr.Errors...)
	frags = append(frags, lr.Fragments...)
	return frags, st, nil
}

func (s TreeStats) String() string {
	how := "syntax-level"
	if s.GoTyped {
		how = "type-checked"
	}
	return fmt.Sprintf("%d Go files (%s), %d other-language files, %.1f MB, %d errors", s.GoFiles, how, s.LangFiles, float64(s.SourceBytes)/1e6, len(s.Errors))
}
