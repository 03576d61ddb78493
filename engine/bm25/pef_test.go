package bm25

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/text"
)

// pefList encodes docs (strictly increasing, < u) as a version-2 blob with
// block metadata (only lastDoc filled) and returns a cursor over it.
func pefList(t testing.TB, docs []uint32, u uint32) (*pefCursor, []byte) {
	t.Helper()
	reg, err := appendPEF(nil, docs, false)
	if err != nil {
		t.Fatal(err)
	}
	nb := (len(docs) + BlockSize - 1) / BlockSize
	blob := append(append([]byte(nil), reg...), make([]byte, nb*blockMetaBytes)...)
	for p := 0; p < nb; p++ {
		binary.LittleEndian.PutUint32(blob[len(reg)+p*blockMetaBytes:], docs[min((p+1)*BlockSize, len(docs))-1])
	}
	pc := &pefCursor{reg: blob[:len(reg)], meta: blob[len(reg):], nb: nb, df: len(docs), u: u}
	if n, ok := pefSize(len(docs), nb, pc.lastDoc, false); !ok || n != len(reg) {
		t.Fatalf("pefSize %d,%v, encoded %d bytes", n, ok, len(reg))
	}
	return pc, reg
}

// checkPEF compares iteration and NextGEQ (from every start element in
// steps of step, to every target, or to maxTargets random ones when the
// universe is larger) with the plain slice.
func checkPEF(t testing.TB, docs []uint32, u uint32, step int) {
	checkPEFTargets(t, docs, u, step, 1<<30)
}

func checkPEFTargets(t testing.TB, docs []uint32, u uint32, step, maxTargets int) {
	t.Helper()
	pc, _ := pefList(t, docs, u)
	var c efCursor
	pc.start(&c)
	for i, v := range docs {
		if c.i != i || c.val != v || c.corrupt {
			t.Fatalf("u=%d n=%d: element %d got (%d,%d,%v), want %d", u, len(docs), i, c.i, c.val, c.corrupt, v)
		}
		pc.next(&c)
	}
	if c.val != efEnd || c.i != len(docs) || c.corrupt {
		t.Fatalf("u=%d n=%d: not at end: %+v", u, len(docs), c)
	}
	targets := make([]uint32, 0, min(int(u)+2, maxTargets))
	if int(u)+2 <= maxTargets {
		for x := uint32(0); x <= u+1; x++ {
			targets = append(targets, x)
		}
	} else {
		r := rand.New(rand.NewPCG(uint64(u), uint64(len(docs))))
		for len(targets) < maxTargets {
			targets = append(targets, uint32(r.IntN(int(u)+2)))
		}
	}
	for start := 0; start <= len(docs); start += step {
		pc.start(&c)
		for k := 0; k < start; k++ {
			pc.next(&c)
		}
		atStart := c
		pcStart := *pc
		for _, target := range targets {
			c = atStart
			*pc = pcStart
			want, wantI := efEnd, len(docs)
			for k := start; k < len(docs); k++ {
				if docs[k] >= target {
					want, wantI = docs[k], k
					break
				}
			}
			if got := pc.nextGEQ(&c, target); got != want || c.i != wantI || c.corrupt {
				t.Fatalf("u=%d n=%d: from %d nextGEQ(%d) = %d@%d, want %d@%d", u, len(docs), start, target, got, c.i, want, wantI)
			}
		}
	}
}

// TestPEFExhaustiveSmall checks every non-empty subset of universes up to
// 10 (one partition: run, bitmap and EF all occur).
func TestPEFExhaustiveSmall(t *testing.T) {
	maxU := uint32(10)
	if testing.Short() {
		maxU = 8
	}
	for u := uint32(1); u <= maxU; u++ {
		for mask := 1; mask < 1<<u; mask++ {
			var docs []uint32
			for x := uint32(0); x < u; x++ {
				if mask&(1<<x) != 0 {
					docs = append(docs, x)
				}
			}
			checkPEF(t, docs, u, 1)
		}
	}
}

// TestPEFPartitions covers multi-partition lists mixing the three
// encodings (dense runs, bitmap-dense and sparse stretches), with exhaustive
// NextGEQ over every target from many start elements.
func TestPEFPartitions(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	kinds := map[int]int{}
	trials := 30
	if testing.Short() {
		trials = 8
	}
	for trial := 0; trial < trials; trial++ {
		var docs []uint32
		x := uint32(r.IntN(3))
		n := 1 + r.IntN(700)
		if trial%5 == 0 {
			x = 0 // whole partitions of consecutive ids: runs
		}
		for len(docs) < n {
			mode := r.IntN(3)
			if trial%5 == 0 {
				mode = 0
			}
			switch mode {
			case 0: // a run
				for k := 0; k < 1+r.IntN(300) && len(docs) < n; k++ {
					docs = append(docs, x)
					x++
				}
			case 1: // dense: gaps 1..3
				for k := 0; k < 1+r.IntN(300) && len(docs) < n; k++ {
					docs = append(docs, x)
					x += 1 + uint32(r.IntN(3))
				}
			default: // sparse
				for k := 0; k < 1+r.IntN(300) && len(docs) < n; k++ {
					docs = append(docs, x)
					x += 1 + uint32(r.IntN(200))
				}
			}
		}
		u := docs[len(docs)-1] + 1 + uint32(r.IntN(5))
		base := uint64(0)
		for lo := 0; lo < len(docs); lo += BlockSize {
			part := docs[lo:min(lo+BlockSize, len(docs))]
			k, _, _ := pefKind(uint64(len(part)), uint64(part[len(part)-1])-base+1, false)
			kinds[k]++
			base = uint64(part[len(part)-1]) + 1
		}
		step := 1 + len(docs)/40
		if testing.Short() {
			step = 1 + len(docs)/10
		}
		checkPEFTargets(t, docs, u, step, 3000)
	}
	if kinds[pefRun] == 0 || kinds[pefBitmap] == 0 || kinds[pefEF] == 0 {
		t.Errorf("encodings exercised: %v (want run, bitmap and EF)", kinds)
	}
}

// TestPEFKindChoice checks the per-partition choice against the sizes it
// compares: a full universe is a run, the smaller of bitmap and EF wins.
func TestPEFKindChoice(t *testing.T) {
	for m := uint64(1); m <= BlockSize; m++ {
		for _, U := range []uint64{m, m + 1, 2 * m, 3 * m, 8 * m, 100 * m, 1 << 20} {
			if U < m {
				continue
			}
			k, l, nbits := pefKind(m, U, false)
			ef := m*uint64(bitsLen(U/m)-1) + m + ((U-1)>>(bitsLen(U/m)-1) + 1)
			switch {
			case U == m:
				if k != pefRun || nbits != 0 {
					t.Fatalf("m=%d U=%d: kind %d bits %d, want run", m, U, k, nbits)
				}
			case U <= ef:
				if k != pefBitmap || nbits != U {
					t.Fatalf("m=%d U=%d: kind %d bits %d, want bitmap %d", m, U, k, nbits, U)
				}
			default:
				if k != pefEF || nbits != ef || l != uint(bitsLen(U/m)-1) {
					t.Fatalf("m=%d U=%d: kind %d bits %d, want EF %d", m, U, k, nbits, ef)
				}
			}
		}
	}
}

func bitsLen(x uint64) int {
	n := 0
	for ; x != 0; x >>= 1 {
		n++
	}
	return n
}

// TestPEFRejectsBadInput: the encoder refuses unordered input.
func TestPEFRejectsBadInput(t *testing.T) {
	for _, docs := range [][]uint32{{3, 3}, {5, 4}, {1, 2, 2}} {
		if _, err := appendPEF(nil, docs, false); err == nil {
			t.Errorf("%v: no error", docs)
		}
	}
}

// TestReadVersion1 builds the same corpus in format versions 1 (one
// Elias-Fano sequence per list), 2 (partitioned), 3 (short lists
// partitioned without block metadata, long ones one sequence) and 4 (3,
// with single-posting lists stored as their positions): each opens,
// verifies and inspects clean; every query mode returns identical hits;
// Merge writes version 2 only when every input is version 2, else the
// current version, with the same hits; version 3 is smaller than version 1
// and within 5% of version 2, version 4 smaller than version 3.
func TestReadVersion1(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	docs := synthCorpus(r, 700, 60)
	segs := map[uint32]*Segment{}
	size := map[uint32]int{}
	for _, v := range []uint32{1, 2, 3, 4} {
		b := NewBuilder(Options{formatVersion: v})
		for _, d := range docs {
			if _, err := b.Add(d.ext, d.toks); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if _, err := b.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		s, err := Open(buf.Bytes(), fmt.Sprintf("v%d", v))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Verify(); err != nil {
			t.Fatal(err)
		}
		if s.Info().Version != v {
			t.Fatalf("version %d, want %d", s.Info().Version, v)
		}
		in, err := Inspect(buf.Bytes())
		if err != nil || !in.OK() {
			t.Fatalf("inspect v%d: %v %+v", v, err, in)
		}
		segs[v], size[v] = s, buf.Len()
	}
	if v := NewBuilder(Options{}).opts.formatVersion; v != 0 {
		t.Fatalf("default builder format %d", v)
	}
	// Version 3 without flagPacked (u32 length and offset arrays), as
	// earlier builds wrote it: read, and answering as the others.
	ub := NewBuilder(Options{formatVersion: 3, unpacked: true})
	for _, d := range docs {
		if _, err := ub.Add(d.ext, d.toks); err != nil {
			t.Fatal(err)
		}
	}
	var ubuf bytes.Buffer
	if _, err := ub.WriteTo(&ubuf); err != nil {
		t.Fatal(err)
	}
	unpacked, err := Open(ubuf.Bytes(), "v3-unpacked")
	if err != nil || unpacked.packed || !segs[3].packed {
		t.Fatalf("unpacked v3: %v (packed %v; default packed %v)", err, unpacked != nil && unpacked.packed, segs[3].packed)
	}
	if err := unpacked.Verify(); err != nil {
		t.Fatal(err)
	}
	if in, err := Inspect(ubuf.Bytes()); err != nil || !in.OK() {
		t.Fatalf("inspect unpacked v3: %v %+v", err, in)
	}
	if ubuf.Len() <= size[3] {
		t.Errorf("packed v3 %d bytes, unpacked %d", size[3], ubuf.Len())
	}
	for d := 0; d < unpacked.NumDocs(); d++ {
		if unpacked.DocLen(uint32(d)) != segs[3].DocLen(uint32(d)) || unpacked.ExtID(uint32(d)) != segs[3].ExtID(uint32(d)) {
			t.Fatalf("doc %d differs packed / unpacked", d)
		}
	}
	for i := 0; i < unpacked.NumTerms(); i++ {
		if unpacked.Term(i) != segs[3].Term(i) {
			t.Fatalf("term %d differs packed / unpacked", i)
		}
	}
	var compact, long, single int
	for i := 0; i < segs[3].NumTerms(); i++ {
		if segs[3].compact(segs[3].rec(i)) {
			compact++
		} else {
			long++
		}
		if segs[3].single(segs[3].rec(i)) || !segs[4].single(segs[4].rec(i)) && segs[4].rec(i).df == 1 {
			t.Fatalf("term %d: single-posting rule in version 3, or not in version 4", i)
		}
		if segs[4].single(segs[4].rec(i)) {
			single++
		}
	}
	if compact == 0 || long == 0 || single == 0 {
		t.Fatalf("corpus has %d compact, %d long and %d single-posting lists; want each", compact, long, single)
	}
	var merged []*Segment
	for _, c := range []struct {
		in   []*Segment
		want uint32
	}{
		{[]*Segment{segs[1], segs[2]}, 4},
		{[]*Segment{segs[1]}, 4},
		{[]*Segment{segs[2], segs[2]}, 2},
		{[]*Segment{segs[3], segs[1]}, 4},
		{[]*Segment{segs[4], segs[3]}, 4},
	} {
		var buf bytes.Buffer
		if _, err := Merge(&buf, c.in, nil); err != nil {
			t.Fatal(err)
		}
		m, err := Open(buf.Bytes(), fmt.Sprintf("merged-%d", len(merged)))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Verify(); err != nil {
			t.Fatal(err)
		}
		if m.Info().Version != c.want {
			t.Fatalf("merge %d wrote version %d, want %d", len(merged), m.Info().Version, c.want)
		}
		if len(c.in) == 1 {
			merged = append(merged, m) // same documents as segs[1]
		}
	}
	if size[2] >= size[1] || size[3] >= size[1] || float64(size[3]) > 1.05*float64(size[2]) || size[4] >= size[3] {
		t.Errorf("segment bytes: version 1 %d, version 2 %d, version 3 %d, version 4 %d", size[1], size[2], size[3], size[4])
	}
	t.Logf("segment bytes: version 1 %d, version 2 %d, version 3 %d, version 4 %d (%d compact lists, %d long, %d single)", size[1], size[2], size[3], size[4], compact, long, single)
	m := merged[0]
	s1 := segs[1]
	for qi := 0; qi < 200; qi++ {
		var q Query
		for k := 0; k < 1+r.IntN(4); k++ {
			q.Should = append(q.Should, s1.Term(r.IntN(s1.NumTerms())))
		}
		switch qi % 4 {
		case 1:
			q = Query{Must: q.Should}
		case 2:
			q.MustNot = []string{s1.Term(r.IntN(s1.NumTerms()))}
		case 3:
			if len(q.Should) >= 2 {
				q.Phrases = [][]PhraseTerm{{{q.Should[0], 0}, {q.Should[1], 1}}}
			}
		}
		for _, mode := range searchModes {
			p := DefaultSearchParams()
			p.K = 20
			p.Exhaustive, p.Algorithm = mode.exh, mode.alg
			want, err := Search([]View{{Seg: s1}}, q, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []*Segment{segs[2], segs[3], segs[4], m, unpacked} {
				got, err := Search([]View{{Seg: s}}, q, p, nil)
				if err != nil {
					t.Fatal(err)
				}
				sameHits(t, fmt.Sprintf("q%d %s %s", qi, mode.name, s.Path()), got, want)
			}
		}
	}
}

// TestPEFCorruptMetadata: block metadata that contradicts the partitions
// (a lastDoc moved) is caught by Open's size check or by the cursor, never
// a panic, and Verify reports ErrCorrupt.
func TestPEFCorruptMetadata(t *testing.T) {
	b := NewBuilder(Options{})
	for i := 0; i < 400; i++ {
		toks := []text.Token{{Term: "a", Pos: 0}}
		if i%5 == 0 {
			toks = append(toks, text.Token{Term: "b", Pos: 1})
		}
		b.Add(uint64(i), toks)
	}
	var buf bytes.Buffer
	b.WriteTo(&buf)
	good := buf.Bytes()
	s, err := Open(good, "good")
	if err != nil {
		t.Fatal(err)
	}
	for ti := 0; ti < s.NumTerms(); ti++ {
		rec := s.rec(ti)
		for p := 0; p < int(rec.nb); p++ {
			for _, delta := range []int32{-1, 1, -7} {
				bad := append([]byte(nil), good...)
				at := s.postOff + int64(rec.off) + int64(rec.efLen) + int64(p*blockMetaBytes)
				v := int32(binary.LittleEndian.Uint32(bad[at:])) + delta
				binary.LittleEndian.PutUint32(bad[at:], uint32(v))
				fo := len(bad) - footerBytes
				binary.LittleEndian.PutUint32(bad[fo+56:], crcOf(bad[:fo+56]))
				bs, err := Open(bad, "bad")
				if err != nil {
					if !errors.Is(err, ErrCorrupt) {
						t.Fatal(err)
					}
					continue
				}
				if err := bs.Verify(); !errors.Is(err, ErrCorrupt) {
					t.Errorf("term %d block %d lastDoc %+d: Verify %v", ti, p, delta, err)
				}
				Search([]View{{Seg: bs}}, Query{Should: []string{"a", "b"}}, DefaultSearchParams(), nil)
			}
		}
	}
}

// FuzzPEF decodes arbitrary partition bytes and block metadata: the cursor
// must never panic, and whatever it yields before ending is strictly
// increasing and below the universe.
func FuzzPEF(f *testing.F) {
	for _, docs := range [][]uint32{{0}, {1, 2, 3}, {5, 9, 300}, seqDocs(0, 200, 1), seqDocs(3, 300, 2), seqDocs(1, 260, 37)} {
		reg, _ := appendPEF(nil, docs, false)
		var meta []byte
		for p := 0; p*BlockSize < len(docs); p++ {
			meta = binary.LittleEndian.AppendUint32(meta, docs[min((p+1)*BlockSize, len(docs))-1])
		}
		f.Add(reg, meta, uint16(len(docs)), uint32(docs[len(docs)-1]+1), uint32(docs[len(docs)/2]))
	}
	f.Fuzz(func(t *testing.T, reg, meta []byte, df16 uint16, u, target uint32) {
		df := int(df16)
		nb := (df + BlockSize - 1) / BlockSize
		if df == 0 || len(meta) < 4*nb {
			return
		}
		blob := append([]byte(nil), reg...)
		for p := 0; p < nb; p++ {
			blob = append(blob, meta[4*p:4*p+4]...)
			blob = append(blob, make([]byte, blockMetaBytes-4)...)
		}
		pc := &pefCursor{reg: blob[:len(reg)], meta: blob[len(reg):], nb: nb, df: df, u: u}
		var c efCursor
		pc.start(&c)
		prev := int64(-1)
		n := 0
		for c.val != efEnd {
			if int64(c.val) <= prev || c.val >= u || c.i != n {
				t.Fatalf("element %d: (%d,%d) after %d, u %d", n, c.i, c.val, prev, u)
			}
			prev = int64(c.val)
			n++
			pc.next(&c)
		}
		if !c.corrupt && n != df {
			t.Fatalf("clean end after %d of %d", n, df)
		}
		c = efCursor{}
		pc.start(&c)
		pc.nextGEQ(&c, target)
		if c.val != efEnd && c.val < target {
			t.Fatalf("nextGEQ(%d) = %d", target, c.val)
		}
	})
}

func seqDocs(from uint32, n int, step uint32) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = from + uint32(i)*step
	}
	return out
}

// TestCompactListBytes: a list of one posting (a corpus of one-word
// documents, every word distinct, as a word-vector set with its words as
// text) costs its record, dictionary entry and a few bytes of doc id, tf
// width and position: no Elias-Fano header, no alignment padding, no
// block metadata. Every list still answers its own word.
func TestCompactListBytes(t *testing.T) {
	const n = 5000
	b := NewBuilder(Options{})
	words := make([]string, n)
	wordBytes := 0
	for i := range words {
		words[i] = fmt.Sprintf("w%05d", (i*7919)%n)
		wordBytes += len(words[i])
		if _, err := b.Add(uint64(i), []text.Token{{Term: words[i], Pos: 0}}); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	// Per document: length u32, external id u64; per term: dictionary
	// offset u32, the word, a 32-byte record and at most 8 bytes of blob
	// (doc id ≤ 3 bytes, tf width 1, position 1, slack); plus fixed parts.
	limit := n*(4+8) + n*(4+termRecBytes+8) + wordBytes + 4096
	if buf.Len() > limit {
		t.Errorf("segment of %d one-word documents is %d bytes (%.1f per document), want at most %d", n, buf.Len(), float64(buf.Len())/n, limit)
	}
	s, err := Open(buf.Bytes(), "one-word")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += 97 {
		hits, err := Search([]View{{Seg: s}}, Query{Should: []string{words[i]}}, DefaultSearchParams(), nil)
		if err != nil || len(hits) != 1 || hits[0].ExtID != uint64(i) {
			t.Fatalf("word %q: hits %+v, err %v", words[i], hits, err)
		}
	}
	t.Logf("%d one-word documents: %d bytes, %.1f per document", n, buf.Len(), float64(buf.Len())/n)
}

// TestVerifyRecordAndBlobExact: Verify rejects, in every format version, a
// term record whose maxTF / minDL understate the list (the bound the
// pruned traversals trust, so BMM and BMW would then miss hits) and a
// blob with a stray byte after its positions (blobLen grown by one).
func TestVerifyRecordAndBlobExact(t *testing.T) {
	for _, v := range []uint32{1, 2, 3, 4} {
		build := func() []byte {
			b := NewBuilder(Options{formatVersion: v})
			for i := 0; i < 400; i++ {
				toks := []text.Token{{Term: "other", Pos: 0}}
				if i < 200 {
					toks = append(toks, text.Token{Term: "long", Pos: 1})
				}
				if i == 50 {
					toks = append(toks, text.Token{Term: "long", Pos: 2}, text.Token{Term: "long", Pos: 3})
				}
				if _, err := b.Add(uint64(i), toks); err != nil {
					t.Fatal(err)
				}
			}
			var buf bytes.Buffer
			if _, err := b.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}
		fixCRC := func(data []byte) {
			fo := len(data) - footerBytes
			binary.LittleEndian.PutUint32(data[fo+56:], crcOf(data[:fo+56]))
		}
		// setRec rewrites field k (0 offset, 1 blobLen, 2 df, 3 maxTF, 4
		// minDL, 5 efLen) of term 0's record with f(old).
		setRec := func(data []byte, k int, f func(uint32) uint32) {
			termsOff := int(binary.LittleEndian.Uint64(data[len(data)-footerBytes+16:]))
			if v < 3 {
				at := termsOff + []int{0, 8, 12, 16, 20, 24}[k]
				binary.LittleEndian.PutUint32(data[at:], f(binary.LittleEndian.Uint32(data[at:])))
				return
			}
			w, _, err := readRecWidths(data[termsOff:])
			if err != nil {
				t.Fatal(err)
			}
			bit := uint64(0)
			for j := 0; j < k; j++ {
				bit += uint64(w[j])
			}
			recs := data[termsOff+8:]
			old := uint32(getBitsWide(recs, bit, uint(w[k])))
			nv := f(old)
			if bits.Len32(nv) > int(w[k]) {
				t.Fatalf("v%d: value %d does not fit field %d's %d bits", v, nv, k, w[k])
			}
			for j := bit; j < bit+uint64(w[k]); j++ {
				recs[j>>3] &^= 1 << (j & 7)
			}
			putBitsWide(recs, bit, uint64(nv), uint(w[k]))
			if got := uint32(getBitsWide(recs, bit, uint(w[k]))); got != nv {
				t.Fatalf("v%d: field %d rewritten to %d, reads %d", v, k, nv, got)
			}
		}
		for name, corrupt := range map[string]func(data []byte){
			"understated bounds": func(data []byte) { // term 0 = "long", df 200, maxTF 3, minDL 2
				setRec(data, 3, func(uint32) uint32 { return 1 })
				setRec(data, 4, func(uint32) uint32 { return 3 })
			},
			"stray blob byte": func(data []byte) {
				setRec(data, 1, func(n uint32) uint32 { return n + 1 })
			},
		} {
			data := build()
			corrupt(data)
			fixCRC(data)
			s, err := Open(data, name)
			if err != nil {
				t.Fatalf("v%d %s: Open: %v (the damage is only visible to Verify)", v, name, err)
			}
			if err := s.Verify(); !errors.Is(err, ErrCorrupt) {
				t.Errorf("v%d %s: Verify = %v, want ErrCorrupt", v, name, err)
			}
		}
	}
}

// TestRecordOffsetWrap: a term record whose blob offset plus length wraps
// past 2^64 (a 64-bit offset field in format 3, the u64 field in 1 and 2)
// is refused by Open as corrupt instead of panicking on the first read.
func TestRecordOffsetWrap(t *testing.T) {
	for _, v := range []uint32{1, 2, 3, 4} {
		b := NewBuilder(Options{formatVersion: v})
		if _, err := b.Add(1, []text.Token{{Term: "x", Pos: 0}}); err != nil {
			t.Fatal(err)
		}
		sw, err := b.seal(false)
		if err != nil {
			t.Fatal(err)
		}
		sw.recs[0].off = -uint64(sw.recs[0].blobLen) // off + blobLen == 0 (mod 2^64)
		data := sw.appendTo(nil)
		s, err := Open(data, "wrap")
		if !errors.Is(err, ErrCorrupt) {
			var hits []uint32
			if err == nil {
				hits, _, _, _ = s.Postings("x")
			}
			t.Errorf("v%d: Open = %v (postings %v), want ErrCorrupt", v, err, hits)
		}
		if in, err := Inspect(data); err != nil || in == nil {
			t.Errorf("v%d: Inspect: %v", v, err)
		}
	}
}

// TestVerifyRecordWidthsExact: in format 3, Verify requires the record
// widths to be the least the values need and the padding after the last
// record to be zero (Open accepts both: the values still decode), and
// Inspect reports a bad width header as that one problem.
func TestVerifyRecordWidthsExact(t *testing.T) {
	build := func(widen int, padBit bool) []byte {
		b := NewBuilder(Options{})
		r := rand.New(rand.NewPCG(4, 4))
		for _, d := range synthCorpus(r, 50, 12) {
			if _, err := b.Add(d.ext, d.toks); err != nil {
				t.Fatal(err)
			}
		}
		data, err := b.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		if widen < 0 && !padBit {
			return data
		}
		s, err := Open(data, "x")
		if err != nil {
			t.Fatal(err)
		}
		sw, err := b.seal(false)
		if err != nil {
			t.Fatal(err)
		}
		// Re-pack the same records with field widen one bit wider.
		w, _ := recWidths(sw.recs)
		if widen >= 0 {
			w[widen]++
		}
		var sum uint64
		for _, x := range w {
			sum += uint64(x)
		}
		termsOff := s.postOff - int64(len(s.terms)) - 8
		sec := make([]byte, termsBytes(3, uint64(len(sw.recs)), sum))
		copy(sec, w[:])
		bit := uint64(0)
		for _, rec := range sw.recs {
			for k, v := range rec.fields() {
				putBitsWide(sec[8:], bit, v, uint(w[k]))
				bit += uint64(w[k])
			}
		}
		if padBit {
			if bit >= 8*uint64(len(sec)-8) {
				t.Fatal("no padding to set a bit in")
			}
			sec[8+bit>>3] |= 1 << (bit & 7)
		}
		out := append(append(append([]byte(nil), data[:termsOff]...), sec...), data[s.postOff:]...)
		shift := int64(len(sec)) - (s.postOff - termsOff)
		fo := len(out) - footerBytes
		binary.LittleEndian.PutUint64(out[fo+24:], uint64(s.postOff+shift))
		fixSegCRC(out)
		return out
	}
	if s, err := Open(build(-1, false), "clean"); err != nil || s.Verify() != nil {
		t.Fatalf("clean: %v", err)
	}
	cases := map[string][]byte{"padding bit": build(-1, true)}
	for k := 0; k < recFields; k++ {
		cases[fmt.Sprintf("field %d one bit wider", k)] = build(k, false)
	}
	for name, data := range cases {
		s, err := Open(data, name)
		if err != nil {
			t.Errorf("%s: Open: %v", name, err)
			continue
		}
		if err := s.Verify(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Verify = %v, want ErrCorrupt", name, err)
		}
	}
	// A width over its maximum: one clear problem, sections still listed.
	data := build(-1, false)
	s, _ := Open(data, "x")
	termsOff := s.postOff - int64(len(s.terms)) - 8
	data[termsOff+2] = 33 // df field
	fixSegCRC(data)
	in, err := Inspect(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Problems) != 1 || !strings.Contains(in.Problems[0].Reason, "field 2 is 33 bits wide") {
		t.Errorf("problems %+v", in.Problems)
	}
}
