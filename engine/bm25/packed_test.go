package bm25

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stratasearch/strata/engine/text"
)

// TestPackedArrayRoundTrip: packed arrays of every width 0..32 and
// seeded lengths give back the values written, are the size packedBytes
// says, and have clean tails.
func TestPackedArrayRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for w := uint8(0); w <= 32; w++ {
		for _, n := range []int{0, 1, 2, 63, 64, 65, 200} {
			vals := make([]uint32, n)
			for i := range vals {
				vals[i] = uint32(rng.Uint64() & (uint64(1)<<w - 1))
			}
			if n > 0 && w > 0 {
				vals[n-1] = uint32(uint64(1)<<w - 1) // the largest value at w
			}
			b := appendPackedArray(nil, vals, w)
			if len(b) != packedBytes(n, w) || b[0] != w {
				t.Fatalf("w=%d n=%d: %d bytes, want %d", w, n, len(b), packedBytes(n, w))
			}
			if n > 0 && packedWidth(vals) != w {
				t.Fatalf("w=%d n=%d: packedWidth %d", w, n, packedWidth(vals))
			}
			body := b[packedHeaderBytes:]
			for i, v := range vals {
				if got := packedArrayGet(body, w, i); got != v {
					t.Fatalf("w=%d n=%d value %d: %d, wrote %d", w, n, i, got, v)
				}
			}
			if !packedTailClean(body, n, w) {
				t.Fatalf("w=%d n=%d: tail not clean", w, n)
			}
		}
	}
}

// oneWordSegment is a segment of n documents of one distinct word each
// (as a collection of GloVe's words is).
func oneWordSegment(t *testing.T, n int, o Options) []byte {
	t.Helper()
	b := NewBuilder(o)
	for i := range n {
		if _, err := b.Add(uint64(i)*2654435761, []text.Token{{Term: fmt.Sprintf("w%06d", i), Pos: 0}}); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPackedSmaller: 50,000 one-word documents take at least 5 bytes a
// document less packed (1-bit lengths, 20-bit offsets: 3.9 + 1.5 bytes)
// than as u32 arrays, and answer every lookup the same.
func TestPackedSmaller(t *testing.T) {
	const n = 50000
	packed := oneWordSegment(t, n, Options{})
	unpacked := oneWordSegment(t, n, Options{formatVersion: 3, unpacked: true})
	if saved := len(unpacked) - len(packed); saved < 5*n {
		t.Fatalf("packed %d bytes, unpacked %d: %d saved, want ≥ %d", len(packed), len(unpacked), saved, 5*n)
	}
	p, err := Open(packed, "packed")
	if err != nil {
		t.Fatal(err)
	}
	u, err := Open(unpacked, "unpacked")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Verify(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []uint32{0, 1, n / 2, n - 1} {
		if p.DocLen(d) != 1 || p.ExtID(d) != u.ExtID(d) {
			t.Fatalf("doc %d: len %d ext %d / %d", d, p.DocLen(d), p.ExtID(d), u.ExtID(d))
		}
	}
	for _, i := range []int{0, 1, 777, n - 1} {
		if p.Term(i) != u.Term(i) || p.DocFreq(p.Term(i)) != 1 {
			t.Fatalf("term %d: %q / %q", i, p.Term(i), u.Term(i))
		}
	}
	hits, err := Search([]View{{Seg: p}}, Query{Should: []string{"w000777", "w049999"}}, DefaultSearchParams(), nil)
	if err != nil || len(hits) != 2 {
		t.Fatalf("search: %v %v", hits, err)
	}
}

// TestPackedCorrupt: a packed array whose width byte is over 32, whose
// header or padding bits are not zero, or whose offsets are out of order
// (CRC repaired) is ErrCorrupt at the array's offset; a width that is
// not the least its values need passes Open and fails Verify.
func TestPackedCorrupt(t *testing.T) {
	good := oneWordSegment(t, 100, Options{})
	s, err := Open(good, "good")
	if err != nil || !s.packed {
		t.Fatal(err)
	}
	fo := len(good) - footerBytes
	docsOff := int(binary.LittleEndian.Uint64(good[fo:]))
	dictOff := int(binary.LittleEndian.Uint64(good[fo+8:]))
	offsBody := dictOff + packedHeaderBytes
	lastLenByte := docsOff + packedBytes(100, 1) - 1 // in the slack
	for name, c := range map[string]struct {
		set     func(b []byte)
		want    int64 // the error's offset, or -1 (any)
		inspect bool  // Inspect reports it too
	}{
		"length width 33":      {func(b []byte) { b[docsOff] = 33 }, int64(docsOff), true},
		"length header byte":   {func(b []byte) { b[docsOff+3] = 1 }, int64(docsOff), true},
		"offset width 33":      {func(b []byte) { b[dictOff] = 33 }, int64(dictOff), true},
		"length padding":       {func(b []byte) { b[lastLenByte] = 0x80 }, int64(docsOff + packedHeaderBytes), true},
		"offsets out of order": {func(b []byte) { b[offsBody+5] ^= 0xff }, -1, false},
	} {
		bad := slices.Clone(good)
		c.set(bad)
		fixSegCRC(bad)
		_, err := Open(bad, "bad")
		var ce *CorruptError
		if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || c.want >= 0 && ce.Offset != c.want {
			t.Errorf("%s: %v", name, err)
		}
		if in, ierr := Inspect(bad); c.inspect && (ierr != nil || in.OK()) {
			t.Errorf("%s: inspect %v, problems %v", name, ierr, in.Problems)
		}
	}
	// Lengths at width 2 where 1 suffices: the same values, but not what
	// a writer writes; Verify refuses it (the segment is rebuilt with the
	// wider array in place of the written one).
	seg, err := Open(slices.Clone(good), "w")
	if err != nil {
		t.Fatal(err)
	}
	lens := make([]uint32, 100)
	for i := range lens {
		lens[i] = 1
	}
	seg.lenW = 2
	seg.lens = appendPackedArray(nil, lens, 2)[packedHeaderBytes:]
	if err := seg.Verify(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("width 2 for 1-bit lengths: %v", err)
	}
}
