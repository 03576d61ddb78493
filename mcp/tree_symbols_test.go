package mcp

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stratasearch/strata/engine/contract"
)

// topSymbolsRef is the plain statement of topSymbols: rank every declared
// name (kind, then unexported after exported), sort stably, take the first
// k distinct sanitised names.
func topSymbolsRef(f *file, k int) []string {
	if k == 0 {
		return nil
	}
	type cand struct {
		name string
		rank int
	}
	var cs []cand
	for _, ch := range f.chunks {
		var names []string
		var rank int
		switch ch.kind {
		case "type":
			rank, names = 0, ch.names
		case "func":
			rank, names = 1, []string{ch.symbol}
		case "method":
			rank, names = 2, []string{ch.symbol}
		case "const", "var":
			rank, names = 3, ch.names
		default:
			continue
		}
		for _, n := range names {
			if n == "" || n == "_" {
				continue
			}
			r := rank
			base := n[strings.LastIndexByte(n, '.')+1:]
			if first, _ := utf8.DecodeRuneInString(base); !unicode.IsUpper(first) {
				r += 4
			}
			cs = append(cs, cand{safeNameRef(n), r})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].rank < cs[j].rank })
	var out []string
	for _, c := range cs {
		if len(out) == k {
			break
		}
		if !slices.Contains(out, c.name) {
			out = append(out, c.name)
		}
	}
	return out
}

// safeNameRef is safeName without its printable-ASCII shortcut.
func safeNameRef(s string) string {
	s, _ = contract.Sanitize(strings.ToValidUTF8(s, "\uFFFD"))
	return strings.NewReplacer("\n", " ", "\t", " ").Replace(s)
}

func TestTopSymbolsMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 3))
	kinds := []string{"type", "func", "method", "const", "var", "text", ""}
	pool := []string{"Reader", "reader", "T.Read", "t.read", "_", "", "Écrit", "été", "Ω", "x\ty", "A\x1b[31mB", "Dup", "dup", "Dup", "bad\xff"}
	for iter := range 3000 {
		f := &file{}
		for range rng.IntN(12) {
			ch := chunk{kind: kinds[rng.IntN(len(kinds))], symbol: pool[rng.IntN(len(pool))]}
			for range rng.IntN(5) {
				ch.names = append(ch.names, pool[rng.IntN(len(pool))])
			}
			f.chunks = append(f.chunks, ch)
		}
		k := rng.IntN(11)
		got, want := topSymbols(f, k), topSymbolsRef(f, k)
		if len(got) == 0 && len(want) == 0 {
			continue
		}
		if !slices.Equal(got, want) {
			t.Fatalf("iteration %d, k=%d: topSymbols = %q, reference %q (chunks %+v)", iter, k, got, want, f.chunks)
		}
	}
}

func FuzzSafeName(f *testing.F) {
	for _, s := range []string{"net/http", "a\tb\nc", "\x1b]0;x\x07y", "\u202eevil", "ok\xff", "é", "\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := safeName(s), safeNameRef(s); got != want {
			t.Fatalf("safeName(%q) = %q, reference %q", s, got, want)
		}
	})
}
