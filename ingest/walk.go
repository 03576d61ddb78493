package ingest

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	ignore "github.com/sabhiram/go-gitignore"
)

// Skip reasons, as counted in Skips.
const (
	SkipGitignore = "gitignore"  // matched a .gitignore pattern
	SkipVendored  = "vendored"   // under a SkipDirs directory (vendor/, node_modules/, third_party/)
	SkipOversized = "oversized"  // larger than MaxFileBytes
	SkipBinary    = "binary"     // a NUL byte in the first 8000 bytes
	SkipGenerated = "generated"  // a "// Code generated ... DO NOT EDIT." line (Classify's class; Index indexes such files, marked MetaGenerated)
	SkipIrregular = "irregular"  // not a regular file (symlink, device, ...)
	SkipError     = "unreadable" // stat or read failed
	SkipBadName   = "bad_name"   // the path is not valid UTF-8 (ids and URIs must be)
	SkipExcluded  = "excluded"   // an Options.ExcludePaths directory (counted once, like vendored)
)

// Skips counts skipped files by reason (a vendored directory counts once,
// as one entry, not per file inside it).
type Skips map[string]int

// Total is the number of skipped entries.
func (s Skips) Total() int {
	n := 0
	for _, v := range s {
		n += v
	}
	return n
}

// String lists the reasons in name order, "binary=3 generated=1".
func (s Skips) String() string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", k, s[k])
	}
	return b.String()
}

// File is a walked file that passed the name-, directory- and size-based
// checks (content checks happen when it is read: Classify).
type File struct {
	Path    string // absolute, cleaned
	Rel     string // relative to the walk root, slash-separated
	Size    int64  // bytes
	ModTime time.Time
	info    os.FileInfo // what the walk saw; prepare reads only this file
	open    string      // the path to open when not Path (a root that is a symbolic link to a file)
}

type ignoreRule struct {
	dir string // slash-separated, relative to the root; "" for the root
	gi  *ignore.GitIgnore
}

// Walk lists the regular files under root (absolute or relative; returned
// paths are absolute), honouring every .gitignore on the way (each
// file's patterns apply relative to its directory; negations as the
// library supports them), never entering .git or a SkipDirs directory,
// and skipping files larger than MaxFileBytes. Files come back in
// lexical walk order. Errors: root cannot be read.
func Walk(root string, o Options) ([]File, Skips, error) {
	o.EnsureDefaults()
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, nil, fmt.Errorf("ingest: %w", err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, nil, fmt.Errorf("ingest: %w", err)
	}
	skips := Skips{}
	if !st.IsDir() {
		if st.Size() > o.MaxFileBytes {
			skips[SkipOversized]++
			return nil, skips, nil
		}
		f := File{Path: abs, Rel: filepath.Base(abs), Size: st.Size(), ModTime: st.ModTime(), info: st}
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			f.open = real // the root names a link to the file: follow it, as Stat did
		}
		return []File{f}, skips, nil
	}
	excluded := map[string]bool{}
	for _, x := range o.ExcludePaths {
		if ax, err := filepath.Abs(x); err == nil {
			excluded[filepath.Clean(ax)] = true
		}
	}
	skipDir := map[string]bool{".git": true}
	for _, d := range o.SkipDirs {
		skipDir[d] = true
	}
	var rules []ignoreRule
	ignored := func(rel string, isDir bool) bool {
		for _, r := range rules {
			p := rel
			if r.dir != "" {
				if !strings.HasPrefix(rel, r.dir+"/") {
					continue
				}
				p = rel[len(r.dir)+1:]
			}
			if isDir {
				p += "/"
			}
			if r.gi.MatchesPath(p) {
				return true
			}
		}
		return false
	}
	var files []File
	err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == abs {
				return err
			}
			skips[SkipError]++
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel := ""
		if p != abs {
			r, _ := filepath.Rel(abs, p)
			rel = filepath.ToSlash(r)
		}
		if d.IsDir() {
			if rel != "" {
				if excluded[filepath.Clean(p)] {
					skips[SkipExcluded]++
					return fs.SkipDir
				}
				if skipDir[d.Name()] {
					if d.Name() != ".git" {
						skips[SkipVendored]++
					}
					return fs.SkipDir
				}
				if ignored(rel, true) {
					skips[SkipGitignore]++
					return fs.SkipDir
				}
			}
			if gi, err := ignore.CompileIgnoreFile(filepath.Join(p, ".gitignore")); err == nil {
				rules = append(rules, ignoreRule{dir: rel, gi: gi})
			}
			return nil
		}
		if ignored(rel, false) {
			skips[SkipGitignore]++
			return nil
		}
		if !d.Type().IsRegular() {
			skips[SkipIrregular]++
			return nil
		}
		info, err := d.Info()
		if err != nil {
			skips[SkipError]++
			return nil
		}
		if info.Size() > o.MaxFileBytes {
			skips[SkipOversized]++
			return nil
		}
		files = append(files, File{Path: p, Rel: rel, Size: info.Size(), ModTime: info.ModTime(), info: info})
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("ingest: walk %s: %w", abs, err)
	}
	return files, skips, nil
}

// generatedRE is Go's convention for generated files
// (https://go.dev/s/generatedcode), accepted in any file.
var generatedRE = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.\r?$`)

// Classify returns the content class of a file's bytes: SkipBinary (a NUL
// byte in the first 8000 bytes, as git sniffs; Index skips it),
// SkipGenerated (Index indexes it with metadata generated = true), or ""
// (hand-written text).
func Classify(data []byte) string {
	head := data
	if len(head) > 8000 {
		head = head[:8000]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return SkipBinary
	}
	if bytes.Contains(data, []byte("// Code generated ")) && generatedRE.Match(data) {
		return SkipGenerated
	}
	return ""
}
