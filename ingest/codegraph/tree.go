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
				pkg := path.Join(filepath.Base(root), filepath.ToSlash(rel))
				fr, err := SyntaxFragment(p, src, pkg, nil, chunk)
				if err != nil {
					st.Errors = append(st.Errors, err.Error())
					continue
				}
				st.GoFiles++
				st.SourceBytes += int64(len(src))
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
	return graph.FromFragments(frags), st, nil
}

func (s TreeStats) String() string {
	how := "syntax-level"
	if s.GoTyped {
		how = "type-checked"
	}
	return fmt.Sprintf("%d Go files (%s), %d other-language files, %.1f MB, %d errors", s.GoFiles, how, s.LangFiles, float64(s.SourceBytes)/1e6, len(s.Errors))
}
