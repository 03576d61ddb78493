//go:build unix

package tier

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stratasearch/strata/vfs"
)

const (
	killDirEnv = "STRATA_TIER_KILL9_DIR"
	killSeed   = 77
)

// TestKill9Child is the child half of TestKill9: when killDirEnv is set it
// writes the seeded workload with sync=always to that directory, printing
// "ack <epoch>" after each acknowledged batch, until it is killed.
func TestKill9Child(t *testing.T) {
	dir := os.Getenv(killDirEnv)
	if dir == "" {
		t.Skip("child process of TestKill9 only")
	}
	o := testOptions(vfs.Default)
	o.Dir = dir
	o.WALSegmentSizeBytes = 16 << 10
	o.CompactMaxSegments = 3
	// Background flushes too: their segments are flat, and the deferred
	// index pass rewrites them beside the writer (deferred.go), so kills
	// also land inside index builds and their commits.
	o.MemTableSizeBytes = 8 << 10
	s, err := Open(o)
	if err != nil {
		fmt.Printf("error %v\n", err)
		os.Exit(2)
	}
	fmt.Printf("ready %d\n", s.Epoch())
	var builds int64 // deferred index builds committed so far
	for i := s.Epoch() + 1; ; i++ {
		if _, err := s.Apply(genBatch(killSeed, i)); err != nil {
			fmt.Printf("error %v\n", err)
			os.Exit(2)
		}
		fmt.Printf("ack %d\n", i)
		if n := s.IndexBuilds(); n > builds {
			builds = n
			fmt.Printf("index %d\n", n)
		}
		// Move data to the warm tier now and then, so kills also land
		// inside segment writes, manifest edits and compactions (on the
		// real file system, with mmapped segments); Flush also builds the
		// indexes background flushes deferred.
		if i%37 == 0 {
			if err := s.Flush(context.Background()); err != nil {
				fmt.Printf("error %v\n", err)
				os.Exit(2)
			}
		}
		if i%101 == 0 {
			if err := s.Compact(context.Background()); err != nil {
				fmt.Printf("error %v\n", err)
				os.Exit(2)
			}
		}
	}
}

// TestKill9 runs the writer in a child process (this test binary
// re-executed), SIGKILLs it at random moments 20 times, and after each
// kill reopens the store and checks every acknowledged batch is there and
// the state equals the model at the recovered epoch.
func TestKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("kill -9 test is not run with -short")
	}
	dir := t.TempDir() + "/db"
	rng := rand.New(rand.NewPCG(killSeed, 1))
	var lost, survived, maxSegs int
	var indexBuilds atomic.Int64 // index builds the children reported
	var lastEpoch uint64
	for round := 0; round < 20; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKill9Child$", "-test.count=1")
		cmd.Env = append(os.Environ(), killDirEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var lastAck atomic.Uint64
		ready := make(chan uint64, 1)
		done := make(chan struct{})
		var childErr atomic.Value
		go func() {
			defer close(done)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				line := sc.Text()
				switch {
				case strings.HasPrefix(line, "ready "):
					e, _ := strconv.ParseUint(line[6:], 10, 64)
					ready <- e
				case strings.HasPrefix(line, "ack "):
					e, _ := strconv.ParseUint(line[4:], 10, 64)
					lastAck.Store(e)
				case strings.HasPrefix(line, "index "):
					indexBuilds.Add(1)
				case strings.HasPrefix(line, "error "):
					childErr.Store(line)
				}
			}
		}()
		var start uint64
		select {
		case start = <-ready:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("round %d: child never became ready (%v)", round, childErr.Load())
		}
		lastAck.Store(start)
		time.Sleep(time.Duration(5+rng.IntN(60)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		cmd.Wait()
		if v := childErr.Load(); v != nil {
			t.Fatalf("round %d: child failed: %v", round, v)
		}
		acked := lastAck.Load()

		o := testOptions(vfs.Default)
		o.Dir = dir
		s, err := Open(o)
		if err != nil {
			t.Fatalf("round %d: reopen after kill -9: %v", round, err)
		}
		e := s.Epoch()
		if e < acked {
			t.Fatalf("round %d: acknowledged epoch %d lost, recovered %d", round, acked, e)
		}
		if e > acked+1 {
			// Single writer: at most the batch in flight can be
			// beyond the last ack the child printed.
			t.Fatalf("round %d: recovered epoch %d but only %d acknowledged (+1 in flight)", round, e, acked)
		}
		if e == acked {
			lost++
		} else {
			survived++
		}
		sn := s.Snapshot()
		if d := checkAgainst(sn, modelAt(killSeed, e)); d != "" {
			t.Fatalf("round %d: %s", round, d)
		}
		sn.Close()
		maxSegs, lastEpoch = max(maxSegs, len(s.WarmSegments())), e
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if e <= start {
			t.Logf("round %d: no batch acknowledged before the kill", round)
		}
	}
	t.Logf("20 kills: in-flight batch absent %d times, present %d times; final epoch %d, up to %d warm segments, %d deferred index builds",
		lost, survived, lastEpoch, maxSegs, indexBuilds.Load())
	if maxSegs == 0 {
		t.Fatal("no warm segment was ever recovered: kills never exercised flushes")
	}
	if indexBuilds.Load() == 0 {
		t.Fatal("no deferred index build ran: kills never exercised them")
	}
}
