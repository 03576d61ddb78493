package bench

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"github.com/stratasearch/strata/asm"
)

// simdFlags are the /proc/cpuinfo flags worth a line in the header.
var simdFlags = map[string]bool{
	"sse4_2": true, "avx": true, "avx2": true, "fma": true, "f16c": true,
	"avx512f": true, "avx512bw": true, "avx512dq": true, "avx512vl": true, "avx512_vnni": true,
	"avx512_bf16": true, "avx512_fp16": true, "avx512vbmi": true, "amx_tile": true,
	"asimd": true, "asimddp": true, "sve": true, "sve2": true, "i8mm": true, "bf16": true,
}

// probeMachine fills the header. Fields it cannot read stay empty.
func probeMachine() Machine {
	m := Machine{
		Cores:     runtime.NumCPU(),
		GoVersion: runtime.Version(),
		GOOS:      runtime.GOOS,
		GOARCH:    runtime.GOARCH,
		AsmLevel:  asm.CurrentLevel().String(),
	}
	for _, l := range asm.SupportedLevels() {
		m.AsmLevels = append(m.AsmLevels, l.String())
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			switch {
			case m.CPUModel == "" && (k == "model name" || k == "CPU part" || k == "Model"):
				m.CPUModel = v
			case len(m.CPUFlags) == 0 && (k == "flags" || k == "Features"):
				for _, fl := range strings.Fields(v) {
					if simdFlags[fl] {
						m.CPUFlags = append(m.CPUFlags, fl)
					}
				}
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				m.MemoryBytes = kb << 10
			}
		}
	}
	if out, err := exec.Command("uname", "-r").Output(); err == nil {
		m.Kernel = strings.TrimSpace(string(out))
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		m.LoadAvg = strings.TrimSpace(string(b))
	}
	return m
}
