//go:build arm64 && gc && !noasm && !purego

package asm

// setADCKernels leaves the 8-bit ADC scan on the generic reference for
// NEON. NEON has no gather, so an assembly version would be the same
// scalar load-and-add chain the Go compiler already emits from adc8Ref
// (one byte load, one indexed float load and one FADD per sub-quantizer);
// we have no arm64 hardware to show that a hand-scheduled loop beats it, and
// timings under qemu-user emulation say nothing about real cores. The 4-bit
// fast-scan (VTBL) is the arm64 fast path for PQ.
func setADCKernels(t *kernels, l Level) {}
