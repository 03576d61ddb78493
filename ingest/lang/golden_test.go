//go:build cgo

package lang

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// samples maps each language to its checked-in sample file.
var samples = map[string]string{
	"python":     "sample.py",
	"javascript": "sample.js",
	"typescript": "sample.ts",
	"tsx":        "sample.tsx",
	"rust":       "sample.rs",
	"java":       "sample.java",
	"c":          "sample.c",
	"cpp":        "sample.cpp",
}

// dump renders a File for the golden files: one line per Decl, Def and Ref.
func dump(f *File) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# errors %v\n", f.Errors)
	for _, d := range f.Decls {
		fmt.Fprintf(&b, "decl L%d-L%d %s %q receiver=%q names=%s\n", d.StartLine, d.EndLine, d.Kind, d.Symbol, d.Receiver, strings.Join(d.Names, ","))
	}
	for _, d := range f.Defs {
		sig := ""
		if d.Signature {
			sig = " signature"
		}
		fmt.Fprintf(&b, "def L%d-L%d %s%s %s %q in %q\n", d.StartLine, d.EndLine, d.Kind, sig, d.Name, d.Symbol, d.Container)
	}
	for _, r := range f.Refs {
		fmt.Fprintf(&b, "ref L%d %s %s in %q\n", r.Line, r.Kind, r.Name, r.Enclosing)
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	for _, tag := range Languages() {
		t.Run(tag, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", samples[tag]))
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(tag, src)
			if err != nil {
				t.Fatal(err)
			}
			got := dump(f)
			golden := filepath.Join("testdata", samples[tag]+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s (go test -run TestGolden -update rewrites it):\n%s", samples[tag], golden, got)
			}
			checkFile(t, samples[tag], src, f)
		})
	}
}

// checkFile checks the invariants every parse must keep: Decls sorted,
// non-overlapping, within the file; each Decl's first name appears in
// its text; every chunkable top-level definition starts inside exactly
// one Decl.
func checkFile(t *testing.T, name string, src []byte, f *File) {
	t.Helper()
	lines := strings.SplitAfter(string(src), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	prev := 0
	for _, d := range f.Decls {
		if d.StartLine <= prev || d.EndLine < d.StartLine || d.EndLine > len(lines) {
			t.Fatalf("%s: decl %+v out of order or range (previous end %d, %d lines)", name, d, prev, len(lines))
		}
		prev = d.EndLine
		text := strings.Join(lines[d.StartLine-1:d.EndLine], "")
		if len(d.Names) > 0 && !strings.Contains(text, d.Names[0]) {
			t.Errorf("%s: decl %s L%d-L%d does not contain its name %q", name, d.Symbol, d.StartLine, d.EndLine, d.Names[0])
		}
	}
	for _, d := range f.Defs {
		if d.Container != "" || !chunkKinds[d.Kind] || d.Signature {
			continue
		}
		n := 0
		for _, c := range f.Decls {
			if c.StartLine <= d.StartLine && d.StartLine <= c.EndLine {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: top-level %s %s at L%d is in %d decls", name, d.Kind, d.Symbol, d.StartLine, n)
		}
	}
}

// A parse that runs out of its wall-clock backstop is an error, not a
// partial File; the backstop grows with the input.
func TestParseTimeout(t *testing.T) {
	oldBase, oldPer := ParseTimeout, ParseTimePerKiB
	defer func() { ParseTimeout, ParseTimePerKiB = oldBase, oldPer }()
	src := []byte(strings.Repeat("def f(x):\n    return [x for x in range(10) if x]\n", 20000))
	ParseTimeout, ParseTimePerKiB = time.Microsecond, 0
	if f, err := Parse("python", src); err == nil {
		t.Fatalf("Parse of %d bytes in 1µs: %d decls, no error", len(src), len(f.Decls))
	}
	ParseTimeout, ParseTimePerKiB = time.Microsecond, time.Nanosecond
	if f, err := Parse("python", src); err == nil {
		t.Fatalf("Parse of %d bytes in 1µs+1ns/KiB: %d decls, no error", len(src), len(f.Decls))
	}
	// The same input parses with time to spare (a minute: -race and a
	// loaded CI machine slow the parse of ~1 MB down), whether the time
	// comes from the base or from the per-KiB part.
	ParseTimeout, ParseTimePerKiB = time.Minute, 0
	if _, err := Parse("python", src); err != nil {
		t.Fatal(err)
	}
	ParseTimeout, ParseTimePerKiB = time.Microsecond, time.Minute/time.Duration(len(src)/1024)
	if _, err := Parse("python", src); err != nil {
		t.Fatal(err)
	}
	if got, want := ParseBudget(10*1024+1023), time.Microsecond+10*ParseTimePerKiB; got != want {
		t.Fatalf("ParseBudget(11263) = %v, want %v", got, want)
	}
}

// An input over MaxParseBytes is ErrTooLarge whatever the time it would
// take; one at the limit parses.
func TestParseTooLarge(t *testing.T) {
	old := MaxParseBytes
	defer func() { MaxParseBytes = old }()
	line := "def f(x):\n    return x\n"
	src := []byte(strings.Repeat(line, 100))
	MaxParseBytes = len(src)
	f, err := Parse("python", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Decls) != 100 {
		t.Fatalf("%d decls at the limit, want 100", len(f.Decls))
	}
	MaxParseBytes = len(src) - 1
	if f, err := Parse("python", src); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Parse of %d bytes, max %d: %v, %v; want ErrTooLarge", len(src), MaxParseBytes, f, err)
	}
}

// A name matched by a specific and a generic reference pattern is one
// reference, of the specific kind.
func TestRefsUnique(t *testing.T) {
	f, err := Parse("java", []byte("class A extends B implements C { D d; }\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range f.Refs {
		got = append(got, r.Kind+":"+r.Name)
	}
	if want := "class:B type:C type:D"; strings.Join(got, " ") != want {
		t.Fatalf("refs %v, want %s", got, want)
	}
}

// Parse is safe for concurrent use (ingestion prepares files in
// parallel): goroutines sharing the compiled queries get the sequential
// result.
func TestParseConcurrent(t *testing.T) {
	want := map[string]string{}
	srcs := map[string][]byte{}
	for _, tag := range Languages() {
		src, err := os.ReadFile(filepath.Join("testdata", samples[tag]))
		if err != nil {
			t.Fatal(err)
		}
		f, err := Parse(tag, src)
		if err != nil {
			t.Fatal(err)
		}
		srcs[tag], want[tag] = src, dump(f)
	}
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 10; i++ {
				for _, tag := range Languages() {
					f, err := Parse(tag, srcs[tag])
					if err == nil && dump(f) != want[tag] {
						err = fmt.Errorf("%s: concurrent parse differs", tag)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
