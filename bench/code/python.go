package code

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// pyDefRE matches a Python def or class line: indentation, name.
var pyDefRE = regexp.MustCompile(`^([ \t]*)(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_][A-Za-z0-9_]*)\b`)

// pyIndent is the indentation width of a line (a tab counts 8, as
// Python's tokenizer does) and whether the line holds code (not blank,
// not only a comment).
func pyIndent(l string) (int, bool) {
	w := 0
	for _, r := range l {
		switch r {
		case ' ':
			w++
		case '\t':
			w = (w/8 + 1) * 8
		default:
			t := strings.TrimSpace(l)
			return w, t != "" && !strings.HasPrefix(t, "#")
		}
	}
	return w, false
}

// PythonSpan finds symbol ("name" or "Class.method", dotted to any depth)
// among the def and class statements of a Python source and returns its
// 1-based line span: from its first decorator (or the def line) to the
// last line of its body (trailing blank and comment lines excluded). Each
// dotted part is looked up inside the body of the previous one, at any
// indentation deeper than it; the least indented match wins, then the
// first in file order (a module-level def over a same-named method). Lines
// inside triple-quoted strings that look like a def are not told apart
// (the library's sources have none at the answers' names).
func PythonSpan(src []byte, symbol string) (from, to int, err error) {
	lines := strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")
	lo, hi, indent := 0, len(lines), -1 // search window [lo, hi), outer indentation
	for _, part := range strings.Split(symbol, ".") {
		best, bestInd := -1, 0
		for i := lo; i < hi; i++ {
			m := pyDefRE.FindStringSubmatch(lines[i])
			if m == nil || m[2] != part {
				continue
			}
			if ind, _ := pyIndent(lines[i]); ind > indent && (best < 0 || ind < bestInd) {
				best, bestInd = i, ind
			}
		}
		if best < 0 {
			return 0, 0, fmt.Errorf("no def or class %s (of %s)", part, symbol)
		}
		// Body: up to the next code line indented no deeper than the def.
		end := best
		for j := best + 1; j < hi; j++ {
			w, code := pyIndent(lines[j])
			if !code {
				continue
			}
			if w <= bestInd {
				break
			}
			end = j
		}
		start := best
		for start > lo {
			t := strings.TrimSpace(lines[start-1])
			if w, _ := pyIndent(lines[start-1]); !strings.HasPrefix(t, "@") || w != bestInd {
				break
			}
			start--
		}
		lo, hi, indent, from, to = best+1, end+1, bestInd, start+1, end+1
	}
	return from, to, nil
}

// ResolvePython fills q.Answers from q.Specs of the form "file.py:Symbol"
// (file relative to root, slash-separated; Symbol as PythonSpan takes it).
// Every spec must resolve.
func ResolvePython(root string, q *Query) error {
	q.Answers = q.Answers[:0]
	var errs []error
	for _, s := range q.Specs {
		file, sym, ok := strings.Cut(s, ":")
		if !ok || !strings.HasSuffix(file, ".py") || sym == "" {
			errs = append(errs, fmt.Errorf("%q: spec %q is not file.py:Symbol", q.Text, s))
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			errs = append(errs, fmt.Errorf("%q: %s: %v", q.Text, s, err))
			continue
		}
		from, to, err := PythonSpan(b, sym)
		if err != nil {
			errs = append(errs, fmt.Errorf("%q: %s: %v", q.Text, s, err))
			continue
		}
		q.Answers = append(q.Answers, Answer{Spec: s, File: file, Symbol: sym, From: from, To: to})
	}
	return errors.Join(errs...)
}
