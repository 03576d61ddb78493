//go:build linux

package lexical

import (
	"syscall"
	"unsafe"
)

// clockProcessCPUTimeID is CLOCK_PROCESS_CPUTIME_ID (linux/time.h).
const clockProcessCPUTimeID = 2

// processCPU returns the CPU seconds of this process, every thread
// included (the garbage collector's too), from
// clock_gettime(CLOCK_PROCESS_CPUTIME_ID): the clock the C and C++ peer
// drivers read, so CPU figures are comparable.
func processCPU() float64 {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockProcessCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return float64(ts.Sec) + float64(ts.Nsec)*1e-9
}
