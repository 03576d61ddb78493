//go:build linux

package testenv

import (
	"time"

	"golang.org/x/sys/unix"
)

// ThreadCPU returns the CPU time (user + system) the calling OS thread
// has used; 0 where it cannot be read. Benchmarks lock their goroutine
// to its thread (runtime.LockOSThread) and report the difference per op:
// unlike wall time it does not count the time other processes on a
// loaded machine take the core away.
func ThreadCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
