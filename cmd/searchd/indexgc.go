package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
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
// available (the smallest of /proc/meminfo's MemTotal and the memory
// limits of this process's cgroup and its ancestors, v2 memory.max or v1
// memory.limit_in_bytes), so that the collector works harder again as the
// heap nears it. It changes nothing when GOGC or GOMEMLIMIT is set in the
// environment, or when the available memory is unknown (not Linux). It
// returns what it set (0, 0: nothing).
func tuneIndexGC() (percent int, limit int64) {
	var limits [][]byte
	for _, f := range cgroupLimitFiles(readFileOr("/proc/self/cgroup")) {
		limits = append(limits, readFileOr(f))
	}
	mem := availableMemory(readFileOr("/proc/meminfo"), limits...)
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

// cgroupLimitFiles returns the memory limit files that bound this
// process, from /proc/self/cgroup's lines ("0::/a/b" for cgroup v2,
// "N:memory:/a/b" or "N:…,memory,…:/a/b" for v1): the limit of its cgroup
// and of every ancestor up to the root.
func cgroupLimitFiles(selfCgroup []byte) []string {
	var out []string
	add := func(base, name, path string) {
		for p := filepath.Clean("/" + path); ; p = filepath.Dir(p) {
			out = append(out, filepath.Join(base, p, name))
			if p == "/" {
				return
			}
		}
	}
	for _, line := range strings.Split(string(selfCgroup), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			add("/sys/fs/cgroup", "memory.max", f[2])
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "memory" {
				add("/sys/fs/cgroup/memory", "memory.limit_in_bytes", f[2])
			}
		}
	}
	return out
}

// availableMemory returns the smallest of meminfo's MemTotal and the
// given cgroup limits (a file's contents: bytes, or "max" for none), in
// bytes; 0 when meminfo has no MemTotal.
func availableMemory(meminfo []byte, cgroupLimits ...[]byte) int64 {
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
	for _, l := range cgroupLimits {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(l)), 10, 64); err == nil && n > 0 && n < total {
			total = n // "max" (no limit) does not parse; v1's "no limit" is above MemTotal
		}
	}
	return total
}

// readFileOr returns the file's bytes, or nil if it cannot be read.
func readFileOr(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}
