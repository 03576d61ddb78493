package main

import (
	"slices"
	"testing"
)

func TestIndexGCSettings(t *testing.T) {
	meminfo := []byte("MemTotal:       24641180 kB\nMemFree:        20000000 kB\n")
	if got := availableMemory(meminfo, []byte("max\n")); got != 24641180<<10 {
		t.Fatalf("no cgroup limit: %d", got)
	}
	if got := availableMemory(meminfo, []byte("4294967296\n")); got != 4<<30 {
		t.Fatalf("cgroup limit 4 GiB: %d", got)
	}
	if got := availableMemory(meminfo, []byte("99999999999999\n")); got != 24641180<<10 {
		t.Fatalf("cgroup limit above MemTotal: %d", got)
	}
	for _, bad := range []string{"", "MemTotal: 12\n", "MemTotal: x kB\n", "MemFree: 5 kB\n"} {
		if got := availableMemory([]byte(bad), nil); got != 0 {
			t.Fatalf("meminfo %q: %d, want 0 (unknown)", bad, got)
		}
	}
	if got := availableMemory(meminfo, []byte("max\n"), []byte("2147483648\n"), nil, []byte("9223372036854771712\n")); got != 2<<30 {
		t.Fatalf("nested limits: %d, want the smallest (2 GiB)", got)
	}
	got := cgroupLimitFiles([]byte("12:cpu,cpuacct:/x\n11:memory:/system.slice/a.service\n0::/user.slice/u.scope\n"))
	want := []string{
		"/sys/fs/cgroup/memory/system.slice/a.service/memory.limit_in_bytes",
		"/sys/fs/cgroup/memory/system.slice/memory.limit_in_bytes",
		"/sys/fs/cgroup/memory/memory.limit_in_bytes",
		"/sys/fs/cgroup/user.slice/u.scope/memory.max",
		"/sys/fs/cgroup/user.slice/memory.max",
		"/sys/fs/cgroup/memory.max",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("cgroupLimitFiles: %q, want %q", got, want)
	}
	if got := cgroupLimitFiles([]byte("0::/\n")); !slices.Equal(got, []string{"/sys/fs/cgroup/memory.max"}) {
		t.Fatalf("root cgroup: %q", got)
	}
	for _, c := range []struct {
		gogc, limit string
		mem         int64
		percent     int
		lim         int64
	}{
		{"", "", 8 << 30, 200, 4 << 30},
		{"100", "", 8 << 30, 0, 0},
		{"", "2GiB", 8 << 30, 0, 0},
		{"off", "", 8 << 30, 0, 0},
		{"", "", 0, 0, 0},
	} {
		p, l := indexGCSettings(c.gogc, c.limit, c.mem)
		if p != c.percent || l != c.lim {
			t.Fatalf("GOGC=%q GOMEMLIMIT=%q mem %d: got %d, %d; want %d, %d", c.gogc, c.limit, c.mem, p, l, c.percent, c.lim)
		}
	}
}
