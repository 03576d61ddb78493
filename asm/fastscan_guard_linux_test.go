//go:build linux

package asm

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
)

// fs4Fenced returns a slice of n bytes that ends exactly where an
// inaccessible page begins, so any read past its end faults.
func fs4Fenced(t *testing.T, n int) []uint8 {
	t.Helper()
	ps := syscall.Getpagesize()
	pages := (n+ps-1)/ps + 1
	mem, err := syscall.Mmap(-1, 0, pages*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[(pages-1)*ps:], syscall.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	end := (pages - 1) * ps
	return mem[end-n : end : end]
}

// TestFastScan4Fenced runs every level with packed codes and LUTs that end
// at a guard page: a kernel reading past either faults.
func TestFastScan4Fenced(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, m := range []int{1, 2, 3, 4, 5, 6, 7, 8, 33, 64, 65} {
		for _, nb := range []int{1, 2, 3} {
			for nq := 1; nq <= 4; nq++ {
				bsz := FastScan4BlockBytes(m)
				packed := fs4Fenced(t, nb*bsz)
				for i := range packed {
					packed[i] = uint8(r.Uint32())
				}
				luts := make([][]uint8, nq)
				for i := range luts {
					luts[i] = fs4Fenced(t, bsz)
					for j := range luts[i] {
						luts[i][j] = uint8(r.Uint32())
					}
				}
				fs4Each(t, func(tag string) {
					fs4Check(t, packed, nb, m, luts, fmt.Sprintf("fenced %s m=%d nb=%d nq=%d", tag, m, nb, nq))
				})
			}
		}
	}
}
