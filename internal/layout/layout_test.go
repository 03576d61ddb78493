package layout

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/stratasearch/strata/"

// floors maps a package path prefix (relative to the module) to its floor
// in DESIGN.md's package map. The longest matching prefix wins.
var floors = map[string]int{
	"asm": 1, "vfs": 1, "internal": 1, "engine/contract": 1, "engine/text": 1,
	"datasets": 1, "eval": 1,
	"engine/hnsw": 2, "engine/ivfpq": 2, "engine/bm25": 2, "engine/fusion": 2,
	"engine/embed": 2, "engine/redact": 2, "engine/cursor": 2, "engine/highlight": 2,
	"engine/verify": 2, "engine/graph": 2,
	"engine/tier": 3, "engine/catalog": 3,
	"engine": 4,
	"ingest": 5, "memory": 5,
	"server": 6, "mcp": 6,
	"cmd": 7, "bench": 7, "datasets/cmd": 7, "tools": 7,
}

func floorOf(pkg string) (int, bool) {
	rel, ok := strings.CutPrefix(pkg, module)
	if !ok {
		return 0, false
	}
	best, bestLen := 0, -1
	for p, f := range floors {
		if (rel == p || strings.HasPrefix(rel, p+"/")) && len(p) > bestLen {
			best, bestLen = f, len(p)
		}
	}
	return best, bestLen >= 0
}

func TestNoImportRunsUp(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 10 {
		t.Fatalf("go list returned %d packages", len(lines))
	}
	for _, line := range lines {
		f := strings.Fields(line)
		from, ok := floorOf(f[0])
		if !ok {
			continue
		}
		if from == 0 {
			t.Errorf("%s has no floor in the map (add it to DESIGN.md and here)", f[0])
			continue
		}
		for _, imp := range f[1:] {
			to, ok := floorOf(imp)
			if ok && to > from {
				t.Errorf("%s (floor %d) imports %s (floor %d): an arrow running up", f[0], from, imp, to)
			}
		}
	}
}
