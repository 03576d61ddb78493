package bm25

import (
	"errors"
	"math/rand/v2"
	"testing"
)

func mustEF(t testing.TB, vals []uint32, u uint32) efSeq {
	t.Helper()
	b, err := appendEF(nil, vals, u)
	if err != nil {
		t.Fatal(err)
	}
	e, n, err := openEF(b, "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(b) {
		t.Fatalf("size %d != %d", n, len(b))
	}
	if err := e.verify("test", 0); err != nil {
		t.Fatal(err)
	}
	return e
}

// checkEF compares iteration, select and NextGEQ (from every start element
// to every target) against the plain slice.
func checkEF(t testing.TB, vals []uint32, u uint32) {
	e := mustEF(t, vals, u)
	c := e.cursor()
	for i, v := range vals {
		if c.i != i || c.val != v {
			t.Fatalf("u=%d %v: element %d got (%d,%d)", u, vals, i, c.i, c.val)
		}
		if s, ok := e.selectAt(i); !ok || s != v {
			t.Fatalf("u=%d %v: select(%d)=%d,%v", u, vals, i, s, ok)
		}
		c.next()
	}
	if c.val != efEnd || c.corrupt {
		t.Fatalf("u=%d %v: not at end: %+v", u, vals, c)
	}
	for start := 0; start <= len(vals); start++ {
		for target := uint32(0); target <= u+1; target++ {
			c := e.cursor()
			for k := 0; k < start; k++ {
				c.next()
			}
			want := efEnd
			wantI := len(vals)
			for k := start; k < len(vals); k++ {
				if vals[k] >= target {
					want, wantI = vals[k], k
					break
				}
			}
			got := c.nextGEQ(target)
			if got != want || c.i != wantI || c.corrupt {
				t.Fatalf("u=%d %v: from %d nextGEQ(%d) = %d@%d, want %d@%d", u, vals, start, target, got, c.i, want, wantI)
			}
		}
	}
}

// TestEFExhaustiveSmall checks every strictly increasing sequence (every
// subset) of universes up to 10.
func TestEFExhaustiveSmall(t *testing.T) {
	maxU := uint32(10)
	if testing.Short() {
		maxU = 8
	}
	for u := uint32(0); u <= maxU; u++ {
		for mask := 0; mask < 1<<u; mask++ {
			var vals []uint32
			for x := uint32(0); x < u; x++ {
				if mask&(1<<x) != 0 {
					vals = append(vals, x)
				}
			}
			checkEF(t, vals, u)
		}
	}
}

// TestEFRandom covers long sequences, where the select samples and the
// select0 jumps matter, over dense and sparse universes.
func TestEFRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 40; trial++ {
		u := uint32(1 + r.IntN(200000))
		n := r.IntN(int(min(u, 5000)) + 1)
		if trial%4 == 0 {
			n = int(u) * (r.IntN(4) + 1) / 5
		}
		set := map[uint32]bool{}
		for len(set) < n {
			set[uint32(r.IntN(int(u)))] = true
		}
		vals := make([]uint32, 0, n)
		for x := uint32(0); x < u; x++ {
			if set[x] {
				vals = append(vals, x)
			}
		}
		e := mustEF(t, vals, u)
		for i := 0; i < len(vals); i += 1 + r.IntN(50) {
			if s, _ := e.selectAt(i); s != vals[i] {
				t.Fatalf("select(%d)=%d want %d", i, s, vals[i])
			}
		}
		// Random monotone NextGEQ walks.
		for walk := 0; walk < 20; walk++ {
			c := e.cursor()
			k := 0
			target := uint32(0)
			for {
				target += uint32(r.IntN(int(u)/8 + 2))
				for k < len(vals) && vals[k] < target {
					k++
				}
				want := efEnd
				if k < len(vals) {
					want = vals[k]
				}
				if got := c.nextGEQ(target); got != want {
					t.Fatalf("u=%d n=%d nextGEQ(%d)=%d want %d", u, n, target, got, want)
				}
				if want == efEnd {
					break
				}
			}
		}
	}
}

func TestEFRejects(t *testing.T) {
	if _, err := appendEF(nil, []uint32{3, 2}, 10); err == nil {
		t.Error("decreasing input accepted")
	}
	if _, err := appendEF(nil, []uint32{3, 10}, 10); err == nil {
		t.Error("value >= u accepted")
	}
	b, _ := appendEF(nil, []uint32{1, 5, 9}, 10)
	if _, _, err := openEF(b[:len(b)-1], "x", 100); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated: %v", err)
	} else if ce := (*CorruptError)(nil); !errors.As(err, &ce) || ce.Offset != 100 || ce.Path != "x" {
		t.Errorf("offset/path not reported: %v", err)
	}
	b[8] ^= 1
	if _, _, err := openEF(b, "x", 0); !errors.Is(err, ErrCorrupt) {
		t.Errorf("bad l: %v", err)
	}
}

// FuzzEFDecoder feeds arbitrary bytes to the decoder: it must never panic
// nor loop forever, whatever open accepts.
func FuzzEFDecoder(f *testing.F) {
	for _, vals := range [][]uint32{{}, {0}, {1, 5, 9}, {0, 1, 2, 3, 1000, 70000}} {
		b, _ := appendEF(nil, vals, 70001)
		f.Add(b, uint32(3))
	}
	long := make([]uint32, 700)
	for i := range long {
		long[i] = uint32(i * 3)
	}
	b, _ := appendEF(nil, long, 2200)
	f.Add(b, uint32(1000))
	f.Fuzz(func(t *testing.T, b []byte, target uint32) {
		e, _, err := openEF(b, "fuzz", 0)
		if err != nil {
			return
		}
		_ = e.verify("fuzz", 0)
		c := e.cursor()
		for k := 0; k <= e.len() && c.val != efEnd; k++ {
			c.next()
		}
		c = e.cursor()
		c.nextGEQ(target)
		c.nextGEQ(target + 1000)
		for i := 0; i < e.len() && i < 2000; i += 7 {
			e.selectAt(i)
		}
	})
}
