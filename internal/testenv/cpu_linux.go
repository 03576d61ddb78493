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
// loaded machine take the core away. It reads CLOCK_THREAD_CPUTIME_ID,
// exact to the nanosecond, so a single call of a few microseconds can be
// timed (getrusage(RUSAGE_THREAD) splits the thread's time by ticks, and
// a 2 ms span could read as 0).
func ThreadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
