package main

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// indexGCPercent is the garbage collector's target for a bulk index run:
// a cycle starts once the heap reaches 3× the live heap instead of 2×,
// so the live MemTable (the bulk of the heap while indexing) is marked
// about half as often.
const indexGCPercent = 200

// tuneIndexGC sets the collector for a bulk index run: GOGC 200 under a
// soft memory limit (runtime/debug.SetMemoryLimit) of half the memory
// available (the smaller of /proc/meminfo's MemTotal and the cgroup v2
// memory.max), so that the collector works harder again as the heap nears
// it. It changes nothing when GOGC or GOMEMLIMIT is set in the
// environment, or when the available memory is unknown (not Linux). It
// returns what it set (0, 0: nothing).
func tuneIndexGC() (percent int, limit int64) {
	mem := availableMemory(readFileOr("/proc/meminfo"), readFileOr("/sys/fs/cgroup/memory.max"))
	percent, limit = indexGCSettings(os.Getenv("GOGC"), os.Getenv("GOMEMLIMIT"), mem)
	if percent > 0 {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
	return percent, limit
}

// indexGCSettings is tuneIndexGC's decision: GOGC and GOMEMLIMIT as the
// environment gives them, mem the available bytes (0 = unknown).
func indexGCSettings(gogc, gomemlimit string, mem int64) (percent int, limit int64) {
	if gogc != "" || gomemlimit != "" || mem <= 0 {
		return 0, 0
	}
	return indexGCPercent, mem / 2
}

// availableMemory returns the smaller of meminfo's MemTotal and a
// cgroup v2 memory.max limit, in bytes; 0 when meminfo has no MemTotal.
func availableMemory(meminfo, cgroupMax []byte) int64 {
	var total int64
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "MemTotal:" && f[2] == "kB" {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil && kb > 0 && kb < 1<<50 {
				total = kb << 10
			}
			break
		}
	}
	if total == 0 {
		return 0
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(string(cgroupMax)), 10, 64); err == nil && n > 0 && n < total {
		total = n // "max" (no limit) does not parse
	}
	return total
}

// readFileOr returns the file's bytes, or nil if it cannot be read.
func readFileOr(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}
