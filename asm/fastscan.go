package asm

import "math"

// 4-bit PQ fast-scan (André, Kermarrec, Le Scouarnec, "Cache locality is not
// enough: High-performance nearest neighbor search with product quantization
// fast scan", VLDB 2015; Guo et al., "Accelerating Large-Scale Inference with
// Anisotropic Vector Quantization" (ScaNN), ICML 2020; the code layout is
// FAISS's pq4_pack_codes, faiss/impl/pq4_fast_scan.cpp).
//
// Packed code layout (byte-for-byte FAISS pq4_pack_codes with bbs = 32):
//
//	packed = block 0 | block 1 | ... | block nblocks-1
//	block b (vectors 32b .. 32b+31) = group 0 | group 1 | ... | group mpad/2-1
//	group i (32 bytes)  = bytes 0..15: sub-quantizer 2i
//	                      bytes 16..31: sub-quantizer 2i+1
//	byte j of a half    = code of vector perm0[j] (low nibble)
//	                    | code of vector perm0[j]+16 (high nibble) << 4
//	perm0               = 0 8 1 9 2 10 3 11 4 12 5 13 6 14 7 15
//
// mpad is m rounded up to even (the padding sub-quantizer has code 0) and n
// is padded to a multiple of 32 with code-0 vectors. One block is mpad·16
// bytes.
//
// A quantised LUT (QuantizeLUT4) is mpad×16 uint8, sub-quantizer-major: table
// j holds the 16 entries of sub-quantizer j, so group i of a block is looked
// up in the 32 contiguous bytes lut[32i : 32i+32].

// FastScanBlock is the number of vectors in one packed fast-scan block (FAISS bbs).
const FastScanBlock = 32

// fs4Perm0 is FAISS's perm0: byte j of a 16-byte half holds vector fs4Perm0[j]
// (low nibble) and fs4Perm0[j]+16 (high nibble). It makes the even bytes hold
// vectors 0..7 and the odd bytes vectors 8..15, so that 16-bit accumulation
// yields vectors in natural order without a shuffle.
var fs4Perm0 = [16]uint8{0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15}

// FastScan4Blocks returns the number of 32-vector blocks that hold n vectors.
func FastScan4Blocks(n int) int { return (n + FastScanBlock - 1) / FastScanBlock }

// FastScan4BlockBytes returns the size in bytes of one packed block for m
// sub-quantizers: mpad·16, mpad = m rounded up to even.
func FastScan4BlockBytes(m int) int { return (m + 1) / 2 * 32 }

// PackCodes4 packs n×m 4-bit PQ codes into the FAISS pq4_pack_codes layout
// (drawn at the top of fastscan.go; bbs = 32).
// codes: n×m uint8, row-major, one code per byte; only the low 4 bits are used.
// The result has FastScan4Blocks(n)·FastScan4BlockBytes(m) bytes; padding
// vectors and the padding sub-quantizer of an odd m have code 0.
// It panics if n < 0, m < 0 or len(codes) < n·m.
func PackCodes4(codes []uint8, n, m int) []uint8 {
	if n < 0 || m < 0 || len(codes) < n*m {
		panic("asm: PackCodes4: need n, m ≥ 0 and len(codes) ≥ n·m")
	}
	nb := FastScan4Blocks(n)
	bsz := FastScan4BlockBytes(m)
	out := make([]uint8, nb*bsz)
	code := func(v, j int) uint8 {
		if v >= n || j >= m {
			return 0
		}
		return codes[v*m+j] & 15
	}
	for b := 0; b < nb; b++ {
		blk := out[b*bsz : (b+1)*bsz]
		v0 := b * FastScanBlock
		for sq := 0; sq < bsz/16; sq++ {
			half := blk[sq*16 : sq*16+16]
			for j, p := range fs4Perm0 {
				half[j] = code(v0+int(p), sq) | code(v0+int(p)+16, sq)<<4
			}
		}
	}
	return out
}

// UnpackCodes4 inverts PackCodes4: it returns the n×m codes (one per byte,
// row-major) held in packed. It panics if packed is shorter than
// FastScan4Blocks(n)·FastScan4BlockBytes(m) bytes.
func UnpackCodes4(packed []uint8, n, m int) []uint8 {
	if n < 0 || m < 0 || len(packed) < FastScan4Blocks(n)*FastScan4BlockBytes(m) {
		panic("asm: UnpackCodes4: packed too short for n×m")
	}
	bsz := FastScan4BlockBytes(m)
	out := make([]uint8, n*m)
	for v := 0; v < n; v++ {
		blk := packed[v/FastScanBlock*bsz:]
		w := v % FastScanBlock
		hi := w >= 16
		w &= 15
		// Inverse of perm0: vector w < 8 is at byte 2w, w ≥ 8 at byte 2(w-8)+1.
		pos := 2 * w
		if w >= 8 {
			pos = 2*(w-8) + 1
		}
		for j := 0; j < m; j++ {
			c := blk[j*16+pos]
			if hi {
				c >>= 4
			}
			out[v*m+j] = c & 15
		}
	}
	return out
}

// QuantizeLUT4 quantises a float32 fast-scan lookup table to uint8.
// lut: m×16 float32 (table j holds the distance contribution of each of the
// 16 centroids of sub-quantizer j); all values must be finite.
// Returns q: mpad×16 uint8 (mpad = m rounded up to even; the padding table is
// all zero), and scale, bias such that for any codes c,
//
//	Σ_j lut[j][c_j] ≈ bias + (Σ_j q[j][c_j]) / scale.
//
// Each table is shifted by its minimum (bias = Σ minima); one global scale
// a = min(255 / max span, 65535 / Σ spans) maps the shifted values to [0, 255]
// with rounding to nearest, so every sum of one entry per table fits in
// uint16. (If rounding would push the worst-case sum past 65535, which needs
// m ≥ 257, a is lowered to (65535 − m/2 − 1) / Σ spans.)
// Error bound: each entry is off by at most 0.5/a after rescaling, so a
// reconstructed distance is within m·0.5/a of the exact float sum, plus
// float32 rounding. If every span is zero, scale is 1 and q is all zero.
// It panics if m < 0 or len(lut) < 16·m.
func QuantizeLUT4(lut []float32, m int) (q []uint8, scale, bias float32) {
	if m < 0 || len(lut) < 16*m {
		panic("asm: QuantizeLUT4: need m ≥ 0 and len(lut) ≥ 16·m")
	}
	mpad := (m + 1) &^ 1
	q = make([]uint8, mpad*16)
	mins := make([]float64, m)
	var maxSpan, sumSpan, sumMin float64
	for j := 0; j < m; j++ {
		t := lut[j*16 : j*16+16]
		lo, hi := float64(t[0]), float64(t[0])
		for _, v := range t[1:] {
			lo = math.Min(lo, float64(v))
			hi = math.Max(hi, float64(v))
		}
		mins[j] = lo
		sumMin += lo
		maxSpan = math.Max(maxSpan, hi-lo)
		sumSpan += hi - lo
	}
	if maxSpan == 0 {
		return q, 1, float32(sumMin)
	}
	a := math.Min(255/maxSpan, 65535/sumSpan)
	for {
		worst := 0
		for j := 0; j < m; j++ {
			t := lut[j*16 : j*16+16]
			top := 0
			for c, v := range t {
				x := math.Round((float64(v) - mins[j]) * a)
				if x > 255 { // only float noise can get here
					x = 255
				}
				q[j*16+c] = uint8(x)
				top = max(top, int(x))
			}
			worst += top
		}
		if worst <= 65535 {
			break
		}
		// Σ round(span_j·a) ≤ a·Σspans + m/2: this a fits unless float noise.
		if b := (65535 - 0.5*float64(m) - 1) / sumSpan; b > 0 && b < a {
			a = b
		} else {
			a *= 0.5
		}
	}
	return q, float32(a), float32(sumMin)
}

// FastScan4 is the 4-bit PQ fast-scan kernel: for each query qi and each
// vector v of the nblocks packed blocks,
//
//	out[qi][v] = Σ_{j<mpad} luts[qi][16j + code(v, j)]   (mod 2^16)
//
// packed: nblocks blocks in the PackCodes4 layout, at least
// nblocks·FastScan4BlockBytes(m) bytes; m: sub-quantizers (mpad = m rounded
// up to even tables are read, the padding table included);
// luts: 1–4 queries, each at least mpad×16 uint8 (QuantizeLUT4);
// out: len(luts) slices, each at least nblocks·32 uint16; entry v is vector
// v in natural order; only the first nblocks·32 entries are written.
// The sums wrap modulo 2^16 exactly like uint16 addition (QuantizeLUT4
// tables never wrap); every dispatch level returns identical results. Map
// them back to distances with FastScan4Distances. The codes are read once
// per call for all queries, so batching queries saves bandwidth.
// It panics on shape violations (programming errors): more than 4 queries,
// len(out) != len(luts), m < 0, or a slice shorter than stated.
func FastScan4(packed []uint8, nblocks, m int, luts [][]uint8, out [][]uint16) {
	if len(luts) == 0 || nblocks <= 0 {
		return
	}
	if len(luts) > 4 || len(out) != len(luts) || m < 0 {
		panic("asm: FastScan4: need 1–4 queries, len(out) == len(luts), m ≥ 0")
	}
	if m == 0 {
		for _, o := range out {
			clear(o[:nblocks*FastScanBlock])
		}
		return
	}
	bsz := FastScan4BlockBytes(m)
	if len(packed) < nblocks*bsz {
		panic("asm: FastScan4: packed shorter than nblocks·FastScan4BlockBytes(m)")
	}
	for i := range luts {
		if len(luts[i]) < bsz || len(out[i]) < nblocks*FastScanBlock {
			panic("asm: FastScan4: LUT shorter than mpad·16 or output shorter than nblocks·32")
		}
	}
	k.fastScan4(packed, nblocks, m, luts, out)
}

// FastScan4Distances maps accumulated fast-scan sums back to float32
// distances: out[i] = bias + acc[i] / scale, for i < len(acc) (scale and
// bias from QuantizeLUT4). out must hold at least len(acc) values.
func FastScan4Distances(out []float32, acc []uint16, scale, bias float32) {
	out = out[:len(acc)]
	inv := 1 / scale
	for i, a := range acc {
		out[i] = bias + float32(a)*inv
	}
}

// fastScan4Ref is the generic kernel and the reference for the SIMD levels.
// Shapes are checked by FastScan4: nblocks ≥ 1, m ≥ 1, 1–4 queries, and
// every slice at least as long as the kernel reads or writes.
// It walks each block group by group (two sub-quantizers per 32-byte group)
// with the 16 bytes of each half unrolled, keeping the 32 per-block uint16
// sums in a local array.
func fastScan4Ref(packed []uint8, nblocks, m int, luts [][]uint8, out [][]uint16) {
	bsz := FastScan4BlockBytes(m)
	for qi, lut := range luts {
		o := out[qi]
		lut := lut[:bsz]
		for b := 0; b < nblocks; b++ {
			blk := packed[b*bsz : (b+1)*bsz]
			var acc [32]uint16
			for g := 0; g+32 <= len(blk); g += 32 {
				fs4GroupRef(&acc, (*[32]uint8)(blk[g:g+32]), (*[32]uint8)(lut[g:g+32]))
			}
			copy(o[b*32:b*32+32], acc[:])
		}
	}
}

// fs4GroupRef adds one 32-byte group (two sub-quantizers) to acc, fully
// unrolled over the 16 bytes of each half (constant indices, no bounds
// checks; about 20% faster here than a loop over byte pairs).
// Byte 2i of a half holds vectors i and i+16, byte 2i+1 vectors i+8 and i+24.
func fs4GroupRef(acc *[32]uint16, g, t *[32]uint8) {
	ta := (*[16]uint8)(t[0:16])
	tb := (*[16]uint8)(t[16:32])
	var e0, e1, f0, f1 uint8
	e0, e1, f0, f1 = g[0], g[1], g[16], g[17]
	acc[0] += uint16(ta[e0&15]) + uint16(tb[f0&15])
	acc[8] += uint16(ta[e1&15]) + uint16(tb[f1&15])
	acc[16] += uint16(ta[e0>>4]) + uint16(tb[f0>>4])
	acc[24] += uint16(ta[e1>>4]) + uint16(tb[f1>>4])
	e0, e1, f0, f1 = g[2], g[3], g[18], g[19]
	acc[1] += uint16(ta[e0&15]) + uint16(tb[f0&15])
	acc[9] += uint16(ta[e1&15]) + uint16(tb[f1&15])
	acc[17] += uint16(ta[e0>>4]) + uint16(tb[f0>>4])
	acc[25] += uint16(ta[e1>>4]) + uint16(tb[f1>>4])
	e0, e1, f0, f1 = g[4], g[5], g[20], g[21]
	acc[2] += uint16(ta[e0&15]) + uint16(tb[f0&15])
	acc[10] += uint16(ta[e1&15]) + uint16(tb[f1&15])
	acc[18] += uint16(ta[e0>>4]) + uint16(tb[f0>>4])
	acc[26] += uint16(ta[e1>>4]) + uint16(tb[f1>>4])
	e0, e1, f0, f1 = g[6], g[7], g[22], g[23]
	acc[3] += uint16(ta[e0&15]) + uint16(tb[f0&15])
	acc[11] += uint16(ta[e1&15]) + uint16(tb[f1&15])
	acc[19] += uint16(ta[e0>>4]) + uint16(tb[f0>>4])
	acc[27] += uint16(ta[e1>>4]) + uint16(tb[f1>>4])
	e0, e1, f0, f1 = g[8], g[9], g[24], g[25]
	acc[4] += uint16(ta[e0&15]) + uint16(tb[f0&15])
	acc[12] += uint16(ta[e1&15]) + uint16(tb[f1&15])
	acc[20] += uint16(ta[e0>>4]) + uint16(tb[f0>>4])
	acc[28] += uint16(ta[e1>>4]) + uint16(tb[f1>>4])
	e0, e1, f0, f1 = g[10], g[11], g[26], g[27]
	acc[5] += uint16(ta[e0&15]) + uint16(tb[f0&15])
	acc[13] += uint16(ta[e1&15]) + uint16(tb[f1&15])
	acc[21] += uint16(ta[e0>>4]) + uint16(tb[f0>>4])
	acc[29] += uint16(ta[e1>>4]) + uint16(tb[f1>>4])
	e0, e1, f0, f1 = g[12], g[13], g[28], g[29]
	acc[6] += uint16(ta[e0&15]) + uint16(tb[f0&15])
	acc[14] += uint16(ta[e1&15]) + uint16(tb[f1&15])
	acc[22] += uint16(ta[e0>>4]) + uint16(tb[f0>>4])
	acc[30] += uint16(ta[e1>>4]) + uint16(tb[f1>>4])
	e0, e1, f0, f1 = g[14], g[15], g[30], g[31]
	acc[7] += uint16(ta[e0&15]) + uint16(tb[f0&15])
	acc[15] += uint16(ta[e1&15]) + uint16(tb[f1&15])
	acc[23] += uint16(ta[e0>>4]) + uint16(tb[f0>>4])
	acc[31] += uint16(ta[e1>>4]) + uint16(tb[f1>>4])
}
