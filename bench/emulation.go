package bench

import (
	"os"
	"runtime"
	"strings"
)

// EmulatedLabel is how every timing of an emulated run is labelled.
const EmulatedLabel = "emulated, not a performance figure"

// DetectEmulation reports whether this process runs under a user-mode
// emulator (qemu-aarch64-static and the like), and why. qemu-user passes
// the host's /proc/cpuinfo through, so a binary built for GOARCH sees the
// CPU description of another architecture (x86 "vendor_id"/"flags" lines
// under arm64; "CPU implementer"/"Features" under amd64). The environment
// variable STRATA_BENCH_EMULATED=1 forces it (set by `make
// bench-arm64-smoke`); =0 disables detection.
func DetectEmulation() (bool, string) {
	switch os.Getenv("STRATA_BENCH_EMULATED") {
	case "1", "true":
		return true, "STRATA_BENCH_EMULATED=1"
	case "0", "false":
		return false, ""
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false, ""
	}
	return cpuinfoMismatch(string(b), runtime.GOARCH)
}

// cpuinfoMismatch reports whether cpuinfo describes a CPU of another
// architecture than goarch.
func cpuinfoMismatch(cpuinfo, goarch string) (bool, string) {
	x86 := strings.Contains(cpuinfo, "vendor_id") || strings.Contains(cpuinfo, "GenuineIntel") || strings.Contains(cpuinfo, "AuthenticAMD")
	arm := strings.Contains(cpuinfo, "CPU implementer")
	switch {
	case (goarch == "arm64" || goarch == "arm") && x86 && !arm:
		return true, "GOARCH=" + goarch + " but /proc/cpuinfo describes an x86 CPU (qemu-user)"
	case (goarch == "amd64" || goarch == "386") && arm && !x86:
		return true, "GOARCH=" + goarch + " but /proc/cpuinfo describes an Arm CPU (emulated)"
	}
	return false, ""
}
