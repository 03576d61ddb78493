package bm25

import (
	"encoding/binary"
	"math/bits"
)

// Packed arrays (format version 3 with flagPacked): the docs section's
// |D| array and the dictionary's term end offsets are each stored as
//
//	width u8 | 7 zero bytes | n values of width bits, LSB-first from the
//	first byte, zero bits up to a multiple of 8 bytes | 8 zero bytes
//
// width is the bit length of the largest value (0 when every value is 0;
// at most 32). The 8 trailing zero bytes let a reader load any value with
// one unaligned 8-byte load, a shift and a mask. Files without the flag
// store both as u32 arrays, read through the same function at width 32.

// packedHeaderBytes is the width byte and its padding.
const packedHeaderBytes = 8

// packedBytes is the size of a packed array of n values of width w,
// header and slack included (a multiple of 8).
func packedBytes(n int, w uint8) int {
	return packedHeaderBytes + (n*int(w)+63)/64*8 + 8
}

// packedWidth is the width a packed array of vals is written at.
func packedWidth(vals []uint32) uint8 {
	var m uint32
	for _, v := range vals {
		m |= v
	}
	return uint8(bits.Len32(m))
}

// appendPackedArray appends the packed array of vals at width w (each value
// must fit in w bits).
func appendPackedArray(dst []byte, vals []uint32, w uint8) []byte {
	dst = append(dst, w, 0, 0, 0, 0, 0, 0, 0)
	var acc uint64
	nacc := uint(0)
	start := len(dst)
	for _, v := range vals {
		acc |= uint64(v) << nacc
		nacc += uint(w)
		if nacc >= 64 {
			dst = binary.LittleEndian.AppendUint64(dst, acc)
			nacc -= 64
			acc = 0
			if nacc > 0 {
				acc = uint64(v) >> (uint(w) - nacc)
			}
		}
	}
	if nacc > 0 {
		dst = binary.LittleEndian.AppendUint64(dst, acc)
	}
	for (len(dst)-start)%8 != 0 {
		dst = append(dst, 0)
	}
	return append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
}

// packedArrayGet returns value i of the packed values b (the bytes after the
// header, slack included) at width w.
func packedArrayGet(b []byte, w uint8, i int) uint32 {
	bit := uint(i) * uint(w)
	v := binary.LittleEndian.Uint64(b[bit>>3:])
	return uint32(v>>(bit&7)) & uint32(uint64(1)<<w-1)
}

// packedTailClean reports whether every bit of b (the bytes after the
// header, slack included) past the first n values of width w is zero.
func packedTailClean(b []byte, n int, w uint8) bool {
	bit := n * int(w)
	i := bit >> 3
	if r := bit & 7; r != 0 {
		if b[i]>>r != 0 {
			return false
		}
		i++
	}
	for ; i < len(b); i++ {
		if b[i] != 0 {
			return false
		}
	}
	return true
}
