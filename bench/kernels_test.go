package bench

import (
	"context"
	"testing"

	"github.com/stratasearch/strata/asm"
)

// TestKernelsSuite runs the kernels suite in quick mode and checks that
// every kernel was timed at every supported level, relative to generic.
func TestKernelsSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 64 MiB inputs at every level; skipped in -short")
	}
	res := &Results{Machine: probeMachine()}
	if err := (kernelsSuite{}).Run(context.Background(), Config{Quick: true}.EnsureDefaults(), res); err != nil {
		t.Fatal(err)
	}
	if res.Machine.BandwidthGBs <= 0 {
		t.Fatalf("bandwidth %g GB/s", res.Machine.BandwidthGBs)
	}
	levels := asm.SupportedLevels()
	seen := map[string]int{}
	for _, k := range res.Kernels {
		seen[k.Kernel+" "+k.Shape]++
		if k.NsOp <= 0 || k.GBs <= 0 || k.SpeedupVsGeneric <= 0 || k.BandwidthFraction <= 0 {
			t.Errorf("%s %s %s: bad figures %+v", k.Kernel, k.Shape, k.Level, k)
		}
		if k.Level == "generic" && k.SpeedupVsGeneric != 1 {
			t.Errorf("%s generic speed-up %g, want 1", k.Kernel, k.SpeedupVsGeneric)
		}
	}
	if len(seen) < 14 {
		t.Errorf("%d kernel cases, want 14", len(seen))
	}
	for c, n := range seen {
		if n != len(levels) {
			t.Errorf("%s: %d levels, want %d", c, n, len(levels))
		}
	}
}
