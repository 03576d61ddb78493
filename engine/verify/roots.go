package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Root binds a directory to the namespaces whose documents may have
// their file:// sources under it verified. The operator configures them
// (engine.Options.VerifyRoots, server.Options.VerifyRoots); nothing a
// document says can add one.
type Root struct {
	// Namespace is a namespace prefix, matched as contract.Principal
	// matches its namespaces: a document's namespace must start with it,
	// byte for byte; "*" matches every namespace, including the empty one
	// (which nothing else matches).
	Namespace string `json:"namespace"`
	// Dir is an absolute, clean directory path.
	Dir string `json:"dir"`
}

// Validate reports every problem with roots: an empty namespace prefix, a
// directory that is not an absolute clean path.
func ValidateRoots(roots []Root) error {
	var errs []error
	for i, r := range roots {
		if r.Namespace == "" {
			errs = append(errs, fmt.Errorf("verify: root %d (%q): empty namespace prefix (use \"*\" for every namespace)", i, r.Dir))
		}
		if !filepath.IsAbs(r.Dir) || filepath.Clean(r.Dir) != r.Dir {
			errs = append(errs, fmt.Errorf("verify: root %d: directory %q is not a clean absolute path", i, r.Dir))
		}
	}
	return errors.Join(errs...)
}

// DirsFor returns the directories of roots bound to namespace ns.
func DirsFor(roots []Root, ns string) []string {
	var out []string
	for _, r := range roots {
		if r.Namespace == "*" || (ns != "" && strings.HasPrefix(ns, r.Namespace)) {
			out = append(out, r.Dir)
		}
	}
	return out
}

// Confined reports whether the file a file:// URI names lies under one of
// dirs (or is one of them), comparing real paths: the URI's path decoded,
// cleaned and with every symbolic link resolved, and each dir resolved
// the same way. It returns the resolved path, which is what a caller
// should read, so that the file checked is the file read. A URI that is
// not a local file:// URI (ParseFileURI) is never confined.
func Confined(uri string, dirs []string) (real string, ok bool) {
	if len(dirs) == 0 {
		return "", false
	}
	path, _, _, err := ParseFileURI(uri)
	if err != nil || !filepath.IsAbs(path) {
		return "", false
	}
	real, err = resolve(filepath.Clean(path))
	if err != nil {
		return "", false
	}
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		root, err := filepath.EvalSymlinks(filepath.Clean(d))
		if err != nil {
			continue
		}
		if under(root, real) {
			return real, true
		}
	}
	return "", false
}

// under reports whether path is root or below it (both clean and
// absolute), byte-exact.
func under(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	if err != nil || filepath.IsAbs(rel) {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// resolve is filepath.EvalSymlinks that also resolves a path that does
// not exist (yet): its deepest existing ancestor is resolved and the
// missing components appended (they hold no links, not existing).
func resolve(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if _, lerr := os.Lstat(path); lerr == nil {
		return "", err // a dangling symbolic link: its target is unknown
	}
	parent := filepath.Dir(path)
	if parent == path {
		return "", err
	}
	rp, err := resolve(parent)
	if err != nil {
		return "", err
	}
	return filepath.Join(rp, filepath.Base(path)), nil
}
