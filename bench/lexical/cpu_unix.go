//go:build unix && !linux

package lexical

import "syscall"

// processCPU returns the CPU seconds (user + system) of this process, every
// thread included (the garbage collector's too).
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)*1e-6
}
