package bm25

import (
	"math/rand/v2"
	"testing"
)

// reviewRandDocs draws a strictly increasing list mixing dense stretches
// (runs and bitmap-sized gaps) with sparse ones, so partitions of every
// kind and word-cache boundaries (56-bit reads) are crossed.
func reviewRandDocs(r *rand.Rand, n int) []uint32 {
	docs := make([]uint32, 0, n)
	v := uint32(r.IntN(5))
	for len(docs) < n {
		mode := r.IntN(4)
		seg := 1 + r.IntN(300)
		for k := 0; k < seg && len(docs) < n; k++ {
			docs = append(docs, v)
			switch mode {
			case 0: // run
				v++
			case 1: // bitmap-dense
				v += 1 + uint32(r.IntN(3))
			case 2: // EF moderate
				v += 1 + uint32(r.IntN(40))
			default: // sparse
				v += 1 + uint32(r.IntN(5000))
			}
		}
	}
	return docs
}

// TestPEFMixedWalk drives a v2 cursor with random interleavings of
// next and nextGEQ (targets behind, at, just after and far ahead of the
// current doc) and compares every position with the plain sorted list.
func TestPEFMixedWalk(t *testing.T) {
	lists, walks := 300, 40
	if testing.Short() {
		lists, walks = 60, 10
	}
	r := rand.New(rand.NewPCG(7, 11))
	total := 0
	defer func() { t.Logf("%d positions checked", total) }()
	for li := 0; li < lists; li++ {
		n := 1 + r.IntN(1200)
		docs := reviewRandDocs(r, n)
		u := docs[len(docs)-1] + 1 + uint32(r.IntN(3))
		pc, _ := pefList(t, docs, u)
		for w := 0; w < walks; w++ {
			var c efCursor
			pc.start(&c)
			i := 0
			for step := 0; i < len(docs); step++ {
				if c.val != docs[i] || c.i != i || c.corrupt {
					t.Fatalf("list %d walk %d step %d: at (%d,%d,%v), want (%d,%d)", li, w, step, c.i, c.val, c.corrupt, i, docs[i])
				}
				var target uint32
				switch op := r.IntN(7); op {
				case 0, 1:
					pc.next(&c)
					i++
					continue
				case 2: // small forward jump
					target = docs[i] + uint32(r.IntN(8))
				case 3: // exactly a later doc
					target = docs[min(len(docs)-1, i+r.IntN(200))]
				case 4: // behind (no-op)
					target = docs[i] - min(docs[i], uint32(r.IntN(10)))
				case 5: // medium jump in ids (crosses partitions)
					target = docs[i] + uint32(r.IntN(3000))
				default: // anywhere up to past the end (rare: ends the walk)
					if r.IntN(8) == 0 {
						target = docs[i] + uint32(r.IntN(int(u-docs[i])+5))
					} else {
						target = docs[i] + 1
					}
				}
				j := i
				for j < len(docs) && docs[j] < target {
					j++
				}
				want := efEnd
				if j < len(docs) {
					want = docs[j]
				}
				if got := pc.nextGEQ(&c, target); got != want || c.i != j || c.corrupt {
					t.Fatalf("list %d walk %d step %d: from %d@%d nextGEQ(%d) = %d@%d (corrupt %v), want %d@%d", li, w, step, docs[i], i, target, got, c.i, c.corrupt, want, j)
				}
				i = j
			}
			total += i
			if c.val != efEnd || c.i != len(docs) || c.corrupt {
				t.Fatalf("list %d walk %d: not at end: %+v", li, w, c)
			}
		}
	}
}
