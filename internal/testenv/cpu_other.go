//go:build !linux

package testenv

import "time"

// ThreadCPU returns the CPU time the calling OS thread has used; it is 0
// on this platform (see the Linux version).
func ThreadCPU() time.Duration { return 0 }
