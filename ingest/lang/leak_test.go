//go:build cgo && !race

package lang

// Not under -race: the race detector's shadow memory is resident memory
// the Go runtime does not account for, so it reads as C memory.

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// rss is the process's resident set size in bytes (/proc/self/statm).
func rss(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc/self/statm: %v", err)
	}
	f := strings.Fields(string(b))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// Parsing thousands of files leaves the resident set where it was after
// a warm-up: every tree, parser and cursor is freed when Parse returns,
// not when a finalizer gets to it (the C memory is invisible to the Go
// GC, so a leak would show here and nowhere else).
func TestParseDoesNotLeak(t *testing.T) {
	var srcs [][]byte
	var tags []string
	for _, tag := range Languages() {
		b, err := os.ReadFile(filepath.Join("testdata", samples[tag]))
		if err != nil {
			t.Fatal(err)
		}
		// A bigger file makes a leak of one tree per parse obvious.
		srcs = append(srcs, []byte(strings.Repeat(string(b)+"\n", 20)))
		tags = append(tags, tag)
	}
	round := func(n int) {
		for i := 0; i < n; i++ {
			for j, src := range srcs {
				if _, err := Parse(tags[j], src); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// cMem is the resident memory the Go runtime did not map: what C
	// allocated.
	cMem := func() int64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return rss(t) - int64(ms.Sys-ms.HeapReleased)
	}
	round(10)
	runtime.GC()
	// Finalizers must not be what frees the memory: with the GC off only
	// explicit Closes can.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	before := cMem()
	n := 40
	if testing.Short() {
		n = 15
	}
	round(n)
	after := cMem()
	grow := after - before
	t.Logf("C memory %d MiB → %d MiB after %d parses", before>>20, after>>20, n*len(srcs))
	// One leaked tree of these files is ~100 KiB or more: n*8 of them
	// would be tens of MiB.
	if grow > 8<<20 {
		t.Fatalf("C memory grew %d MiB over %d parses", grow>>20, n*len(srcs))
	}
}
