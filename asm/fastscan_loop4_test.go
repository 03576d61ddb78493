package asm

import "testing"

// fastScan4Loop4 is the baseline form the issue names for speed-up floors:
// a plain Go loop over the 16 byte positions of each 32-byte group,
// 4-way unrolled (four bytes, constant offsets, per iteration), with bounds
// checks hoisted (fixed-size array views, masked indices). It computes
// exactly what fastScan4Ref computes. fastScan4Ref, the package's generic
// path, is fully unrolled (16-way) and about 1.4× faster, so ratios against
// it are the stricter figure; BenchmarkFastScan4Speedup reports both
// (x-LEVEL and x-LEVEL-vs-loop4). Test/benchmark only.
func fastScan4Loop4(packed []uint8, nblocks, m int, luts [][]uint8, out [][]uint16) {
	bsz := FastScan4BlockBytes(m)
	for qi, lut := range luts {
		o := out[qi]
		lut := lut[:bsz]
		for b := 0; b < nblocks; b++ {
			blk := packed[b*bsz : (b+1)*bsz]
			var acc [32]uint16
			for g := 0; g+32 <= len(blk); g += 32 {
				gg := (*[32]uint8)(blk[g : g+32])
				ta := (*[16]uint8)(lut[g : g+16])
				tb := (*[16]uint8)(lut[g+16 : g+32])
				// Byte j of a half holds vectors perm0[j] (low nibble) and
				// perm0[j]+16 (high nibble); perm0[2i] = i, perm0[2i+1] = i+8.
				// Four bytes (two byte pairs) per iteration.
				for j := 0; j < 16; j += 4 {
					i := j >> 1 & 7
					e0, e1, e2, e3 := gg[j&15], gg[(j+1)&15], gg[(j+2)&15], gg[(j+3)&15]
					f0, f1, f2, f3 := gg[16+j&15], gg[16+(j+1)&15], gg[16+(j+2)&15], gg[16+(j+3)&15]
					acc[i] += uint16(ta[e0&15]) + uint16(tb[f0&15])
					acc[i+16] += uint16(ta[e0>>4]) + uint16(tb[f0>>4])
					acc[i+8] += uint16(ta[e1&15]) + uint16(tb[f1&15])
					acc[i+24] += uint16(ta[e1>>4]) + uint16(tb[f1>>4])
					acc[i+1] += uint16(ta[e2&15]) + uint16(tb[f2&15])
					acc[i+17] += uint16(ta[e2>>4]) + uint16(tb[f2>>4])
					acc[i+9] += uint16(ta[e3&15]) + uint16(tb[f3&15])
					acc[i+25] += uint16(ta[e3>>4]) + uint16(tb[f3>>4])
				}
			}
			copy(o[b*32:b*32+32], acc[:])
		}
	}
}

func TestFastScan4Loop4MatchesRef(t *testing.T) {
	for _, m := range []int{1, 2, 7, 16, 64} {
		nb := 3
		mpad := (m + 1) &^ 1
		packed := make([]uint8, nb*mpad*16)
		for i := range packed {
			packed[i] = uint8(i*131 + 7)
		}
		lut := make([]uint8, mpad*16)
		for i := range lut {
			lut[i] = uint8(i*37 + 3)
		}
		a, b := [][]uint16{make([]uint16, nb*32)}, [][]uint16{make([]uint16, nb*32)}
		fastScan4Ref(packed, nb, m, [][]uint8{lut}, a)
		fastScan4Loop4(packed, nb, m, [][]uint8{lut}, b)
		for i := range a[0] {
			if a[0][i] != b[0][i] {
				t.Fatalf("m=%d: out[%d] = %d, ref %d", m, i, b[0][i], a[0][i])
			}
		}
	}
}
