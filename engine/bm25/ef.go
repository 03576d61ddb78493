package bm25

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Elias-Fano encoding of a non-decreasing sequence of n values in [0, u)
// (Elias 1974, Fano 1971; layout and sampled pointers after Vigna,
// "Quasi-succinct indices", WSDM 2013).
//
// Each value x is split into l = max(0, floor(log2(u/n))) low bits, stored
// verbatim in a packed array, and the high part h = x >> l, stored in unary
// in the upper bit vector: element i sets bit h_i + i. The upper vector has
// n + ((u-1) >> l) + 1 bits, so there are exactly ((u-1) >> l) + 1 zeros,
// one terminating each bucket of equal high part. Total size is at most
// n(2 + l) bits plus samples: about 2 + ceil(log2(u/n)) bits per element.
//
// Two sampled pointer arrays make random access and skipping O(1) amortised
// without scanning from the start:
//   - select1 samples: the upper-vector position of element j*efQuantum;
//   - select0 samples: the upper-vector position where bucket j*efQuantum
//     starts (just after zero number j*efQuantum - 1), used by NextGEQ to
//     jump to the high part of the target.
//
// Encoded layout (little-endian, every part a multiple of 8 bytes):
//
//	+--------+--------+----+-----+----------+
//	| n u32  | u u32  | l u8 | 0 [7]byte   |  16-byte header
//	+--------+--------+----+-----+----------+
//	| low bits:   ceil(n*l/64) uint64 words   |
//	| upper bits: ceil((n+((u-1)>>l)+1)/64) words |
//	| select1:    ceil(n/Q) uint32, padded to 8 bytes |
//	| select0:    ceil(buckets/Q) uint32, padded      |
//	+------------------------------------------+
const efQuantum = 256

const efHeaderBytes = 16

// efLowBits returns l for n values in [0, u).
func efLowBits(n, u uint32) uint {
	if n == 0 || u <= n {
		return 0
	}
	return uint(bits.Len32(u/n) - 1)
}

type efLayout struct {
	n, u                        uint32
	l                           uint
	lowWords, upWords           int
	s1Count, s0Count            int
	lowOff, upOff, s1Off, s0Off int
	size                        int
}

func pad8(x int) int { return (x + 7) &^ 7 }

func makeEFLayout(n, u uint32, l uint) efLayout {
	var ly efLayout
	ly.n, ly.u, ly.l = n, u, l
	buckets := uint64(0)
	if u > 0 {
		buckets = uint64((u-1)>>l) + 1
	}
	ly.lowWords = int((uint64(n)*uint64(l) + 63) / 64)
	ly.upWords = int((uint64(n) + buckets + 63) / 64)
	ly.s1Count = int((uint64(n) + efQuantum - 1) / efQuantum)
	ly.s0Count = int((buckets + efQuantum - 1) / efQuantum)
	ly.lowOff = efHeaderBytes
	ly.upOff = ly.lowOff + 8*ly.lowWords
	ly.s1Off = ly.upOff + 8*ly.upWords
	ly.s0Off = ly.s1Off + pad8(4*ly.s1Count)
	ly.size = ly.s0Off + pad8(4*ly.s0Count)
	return ly
}

// appendEF appends the Elias-Fano encoding of vals (non-decreasing, every
// value < u) to dst. It returns an error if the input violates that.
func appendEF(dst []byte, vals []uint32, u uint32) ([]byte, error) {
	n := uint32(len(vals))
	if uint64(len(vals)) > 1<<32-1 {
		return dst, fmt.Errorf("bm25: Elias-Fano: %d values exceed uint32", len(vals))
	}
	l := efLowBits(n, u)
	ly := makeEFLayout(n, u, l)
	base := len(dst)
	dst = append(dst, make([]byte, ly.size)...)
	b := dst[base:]
	binary.LittleEndian.PutUint32(b[0:], n)
	binary.LittleEndian.PutUint32(b[4:], u)
	b[8] = byte(l)
	low := make([]uint64, ly.lowWords)
	up := make([]uint64, ly.upWords)
	lowMask := uint64(1)<<l - 1
	var prev uint32
	s1 := 0
	for i, x := range vals {
		if x >= u || (i > 0 && x < prev) {
			return dst[:base], fmt.Errorf("bm25: Elias-Fano: value %d at %d not non-decreasing in [0,%d)", x, i, u)
		}
		prev = x
		if l > 0 {
			bit := uint64(i) * uint64(l)
			v := uint64(x) & lowMask
			low[bit>>6] |= v << (bit & 63)
			if (bit&63)+uint64(l) > 64 {
				low[bit>>6+1] |= v >> (64 - bit&63)
			}
		}
		p := uint64(x>>l) + uint64(i)
		up[p>>6] |= 1 << (p & 63)
		if i%efQuantum == 0 {
			binary.LittleEndian.PutUint32(b[ly.s1Off+4*s1:], uint32(p))
			s1++
		}
	}
	for i, w := range low {
		binary.LittleEndian.PutUint64(b[ly.lowOff+8*i:], w)
	}
	for i, w := range up {
		binary.LittleEndian.PutUint64(b[ly.upOff+8*i:], w)
	}
	// select0 samples: start of bucket j*Q = position after zero #(j*Q-1).
	zeros := 0
	next := 0 // next bucket sample index
	total := ly.upWords * 64
	for p := 0; p < total && next < ly.s0Count; p++ {
		if next*efQuantum == zeros {
			binary.LittleEndian.PutUint32(b[ly.s0Off+4*next:], uint32(p))
			next++
			if next >= ly.s0Count {
				break
			}
		}
		if up[p>>6]&(1<<(p&63)) == 0 {
			zeros++
		}
	}
	return dst, nil
}

// efSeq is an opened Elias-Fano sequence. It reads the encoded bytes in
// place and never panics on arbitrary input: openEF checks every size, and
// the cursor bounds-checks each word it reads.
type efSeq struct {
	ly  efLayout
	buf []byte
	up  []byte // the upper bit vector within buf
}

// openEF opens the encoding at the start of b and returns it with the
// number of bytes it occupies. Errors are *CorruptError at offset off+k.
func openEF(b []byte, path string, off int64) (efSeq, int, error) {
	if len(b) < efHeaderBytes {
		return efSeq{}, 0, corruptf(path, off, "Elias-Fano header truncated (%d bytes)", len(b))
	}
	n := binary.LittleEndian.Uint32(b[0:])
	u := binary.LittleEndian.Uint32(b[4:])
	l := uint(b[8])
	if n > 0 && u == 0 {
		return efSeq{}, 0, corruptf(path, off, "Elias-Fano: %d values in empty universe", n)
	}
	if l != efLowBits(n, u) {
		return efSeq{}, 0, corruptf(path, off+8, "Elias-Fano: low bits %d, want %d for n=%d u=%d", l, efLowBits(n, u), n, u)
	}
	for _, c := range b[9:16] {
		if c != 0 {
			return efSeq{}, 0, corruptf(path, off+9, "Elias-Fano: non-zero header padding")
		}
	}
	// Size in uint64 first, so a hostile header cannot overflow int on
	// 32-bit platforms.
	buckets := uint64(0)
	if u > 0 {
		buckets = uint64((u-1)>>l) + 1
	}
	p8 := func(x uint64) uint64 { return (x + 7) &^ 7 }
	need := efHeaderBytes + 8*((uint64(n)*uint64(l)+63)/64) + 8*((uint64(n)+buckets+63)/64) +
		p8(4*((uint64(n)+efQuantum-1)/efQuantum)) + p8(4*((buckets+efQuantum-1)/efQuantum))
	if need > uint64(len(b)) {
		return efSeq{}, 0, corruptf(path, off, "Elias-Fano: needs %d bytes, have %d", need, len(b))
	}
	ly := makeEFLayout(n, u, l)
	if ly.size > len(b) {
		return efSeq{}, 0, corruptf(path, off, "Elias-Fano: needs %d bytes, have %d", ly.size, len(b))
	}
	return efSeq{ly: ly, buf: b[:ly.size], up: b[ly.upOff : ly.upOff+8*ly.upWords]}, ly.size, nil
}

func (e *efSeq) len() int { return int(e.ly.n) }

func (e *efSeq) upWord(i int) (uint64, bool) {
	if i < 0 || i >= e.ly.upWords {
		return 0, false
	}
	return binary.LittleEndian.Uint64(e.buf[e.ly.upOff+8*i:]), true
}

func (e *efSeq) lowAt(i int) uint32 {
	l := e.ly.l
	if l == 0 {
		return 0
	}
	bit := uint64(i) * uint64(l)
	w := int(bit >> 6)
	sh := bit & 63
	v := binary.LittleEndian.Uint64(e.buf[e.ly.lowOff+8*w:]) >> sh
	if sh+uint64(l) > 64 {
		v |= binary.LittleEndian.Uint64(e.buf[e.ly.lowOff+8*w+8:]) << (64 - sh)
	}
	return uint32(v & (1<<l - 1))
}

func (e *efSeq) sample(off, j int) int {
	return int(binary.LittleEndian.Uint32(e.buf[off+4*j:]))
}

// efCursor iterates an efSeq. After a call that exhausts the sequence (or
// finds it corrupt) i == n and val == efEnd.
type efCursor struct {
	e       *efSeq
	i       int    // index of the current element
	pos     int    // upper-vector bit position of the current element
	val     uint32 // current value
	corrupt bool   // set when the encoding turned out inconsistent
}

const efEnd = ^uint32(0)

func (e *efSeq) cursor() efCursor {
	c := efCursor{e: e, i: -1, pos: -1}
	c.next()
	return c
}

func (c *efCursor) fail() {
	c.corrupt = true
	c.end()
}

func (c *efCursor) end() {
	c.i = int(c.e.ly.n)
	c.val = efEnd
}

// findOne sets c to the first set bit at position >= from, which must be
// element index idx.
func (c *efCursor) findOne(from, idx int) {
	if idx >= int(c.e.ly.n) {
		c.end()
		return
	}
	wi := from >> 6
	w, ok := c.e.upWord(wi)
	if !ok {
		c.fail()
		return
	}
	w &= ^uint64(0) << (uint(from) & 63)
	for w == 0 {
		wi++
		if w, ok = c.e.upWord(wi); !ok {
			c.fail()
			return
		}
	}
	c.pos = wi<<6 + bits.TrailingZeros64(w)
	c.i = idx
	high := uint32(c.pos - idx)
	c.val = high<<c.e.ly.l | c.e.lowAt(idx)
	if c.val >= c.e.ly.u || uint64(high) != uint64(c.pos-idx) {
		c.fail()
	}
}

func (c *efCursor) next() {
	i := c.i + 1
	e := c.e
	if i >= int(e.ly.n) {
		c.end()
		return
	}
	// Fast path: the next one is in the current upper word.
	p := c.pos + 1
	if wi := p >> 6; 8*wi+8 <= len(e.up) {
		if w := binary.LittleEndian.Uint64(e.up[8*wi:]) & (^uint64(0) << (uint(p) & 63)); w != 0 {
			pos := wi<<6 + bits.TrailingZeros64(w)
			high := uint32(pos - i)
			if v := high<<e.ly.l | e.lowAt(i); v < e.ly.u && uint64(high) == uint64(pos-i) {
				c.pos, c.i, c.val = pos, i, v
				return
			}
		}
	}
	c.findOne(p, i)
}

// skipZeros returns the position just after the k-th zero (k >= 1) at or
// after position from, or -1 if the vector ends first.
func (e *efSeq) skipZeros(from, k int) int {
	if k == 0 {
		return from
	}
	wi := from >> 6
	w, ok := e.upWord(wi)
	if !ok {
		return -1
	}
	w = ^w & (^uint64(0) << (uint(from) & 63))
	for {
		c := bits.OnesCount64(w)
		if c >= k {
			for ; k > 1; k-- {
				w &= w - 1
			}
			return wi<<6 + bits.TrailingZeros64(w) + 1
		}
		k -= c
		wi++
		if w, ok = e.upWord(wi); !ok {
			return -1
		}
		w = ^w
	}
}

// skipOnes returns the position of the k-th one (k >= 1) at or after from.
func (e *efSeq) skipOnes(from, k int) int {
	wi := from >> 6
	w, ok := e.upWord(wi)
	if !ok {
		return -1
	}
	w &= ^uint64(0) << (uint(from) & 63)
	for {
		c := bits.OnesCount64(w)
		if c >= k {
			for ; k > 1; k-- {
				w &= w - 1
			}
			return wi<<6 + bits.TrailingZeros64(w)
		}
		k -= c
		wi++
		if w, ok = e.upWord(wi); !ok {
			return -1
		}
	}
}

// nextGEQ moves to the first element >= target (never backwards) and
// returns its value, or efEnd.
func (c *efCursor) nextGEQ(target uint32) uint32 {
	if c.val >= target {
		return c.val
	}
	e := c.e
	if target >= e.ly.u {
		c.end()
		return efEnd
	}
	th := int(target >> e.ly.l)
	curHigh := int(c.val >> e.ly.l)
	if th > curHigh {
		// Find where bucket th starts: from a select0 sample when it is
		// ahead of us, else by skipping zeros from the current position.
		var p int
		if j := th / efQuantum; j > curHigh/efQuantum && j < e.ly.s0Count {
			p = e.skipZeros(e.sample(e.ly.s0Off, j), th-j*efQuantum)
		} else {
			p = e.skipZeros(c.pos+1, th-curHigh)
		}
		if p < 0 {
			c.fail()
			return efEnd
		}
		idx := p - th
		if idx <= c.i {
			// Inconsistent sample; fall back to a linear step.
			c.next()
		} else {
			c.findOne(p, idx)
		}
	} else {
		c.next()
	}
	for c.val < target {
		c.next()
	}
	return c.val
}

// selectAt returns element i (0 <= i < n) using the select1 samples.
func (e *efSeq) selectAt(i int) (uint32, bool) {
	if i < 0 || i >= int(e.ly.n) {
		return 0, false
	}
	j := i / efQuantum
	p := e.sample(e.ly.s1Off, j)
	if r := i - j*efQuantum; r > 0 {
		p = e.skipOnes(p+1, r)
	}
	if p < 0 {
		return 0, false
	}
	return uint32(p-i)<<e.ly.l | e.lowAt(i), true
}

// verify checks the whole encoding: exactly n ones, values non-decreasing
// and < u, samples exact, unused bits zero. O(size).
func (e *efSeq) verify(path string, off int64) error {
	ly := e.ly
	ones := 0
	for i := 0; i < ly.upWords; i++ {
		w, _ := e.upWord(i)
		ones += bits.OnesCount64(w)
	}
	if ones != int(ly.n) {
		return corruptf(path, off+int64(ly.upOff), "Elias-Fano: %d upper ones, want %d", ones, ly.n)
	}
	c := e.cursor()
	prev := uint32(0)
	for k := 0; k < int(ly.n); k++ {
		if c.corrupt || c.i != k {
			return corruptf(path, off+int64(ly.upOff), "Elias-Fano: element %d undecodable", k)
		}
		if c.val < prev {
			return corruptf(path, off+int64(ly.lowOff), "Elias-Fano: element %d decreases", k)
		}
		if k%efQuantum == 0 && e.sample(ly.s1Off, k/efQuantum) != c.pos {
			return corruptf(path, off+int64(ly.s1Off+4*(k/efQuantum)), "Elias-Fano: select1 sample %d wrong", k/efQuantum)
		}
		prev = c.val
		c.next()
	}
	// select0 samples, in one pass over the upper vector (skipZeros from 0
	// per sample would be quadratic in the list length).
	at := 0
	for j := 0; j < ly.s0Count; j++ {
		want := 0
		if j > 0 {
			want = e.skipZeros(at, efQuantum)
		}
		if want < 0 || e.sample(ly.s0Off, j) != want {
			return corruptf(path, off+int64(ly.s0Off+4*j), "Elias-Fano: select0 sample %d wrong", j)
		}
		at = want
	}
	return nil
}
