package tier

import (
	"context"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratasearch/strata/vfs"
)

// TestBackupUnderWriteLoad: a writer applies the seeded workload (batch i
// = epoch i) while flushes and an archive have spread the data over the
// MemTable, warm segments and a cold archive, and Backup runs
// concurrently. The backup opened as a store must hold every batch
// acknowledged before Backup was called and equal the model at exactly
// its recovered epoch (a prefix: nothing half-applied), on the OS file
// system (segment and archive files hard-linked) and on the in-memory FS
// (copied).
func TestBackupUnderWriteLoad(t *testing.T) {
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	for _, osfs := range []bool{true, false} {
		name := "memfs"
		if osfs {
			name = "osfs"
		}
		t.Run(name, func(t *testing.T) {
			for round := 0; round < rounds; round++ {
				var fs vfs.FS = vfs.NewCrashableMem()
				root := "/r"
				if osfs {
					fs, root = vfs.Default, t.TempDir()
				}
				o := testOptions(fs)
				o.Dir = filepath.Join(root, "db")
				o.Sync = 2 // wal.SyncNone: acknowledged = written, fast
				s, err := Open(o)
				if err != nil {
					t.Fatal(err)
				}
				seed := uint64(77 + round)
				var epoch uint64
				for epoch = 1; epoch <= 120; epoch++ {
					if _, err := s.Apply(genBatch(seed, epoch)); err != nil {
						t.Fatal(err)
					}
					if epoch%40 == 0 {
						if err := s.Flush(context.Background()); err != nil {
							t.Fatal(err)
						}
					}
				}
				if _, err := s.Archive(context.Background(), ArchiveOptions{}); err != nil {
					t.Fatal(err)
				}
				var acked atomic.Uint64
				acked.Store(epoch - 1)
				stop := make(chan struct{})
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := epoch; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						if _, err := s.Apply(genBatch(seed, i)); err != nil {
							t.Error(err)
							return
						}
						acked.Store(i)
					}
				}()
				for acked.Load() < epoch+50 { // let writes run first
					runtime.Gosched()
				}
				before := acked.Load()
				bdir := filepath.Join(root, "backup")
				bs, err := s.Backup(context.Background(), bdir)
				if err != nil {
					t.Fatal(err)
				}
				for acked.Load() < bs.Epoch+50 { // and keep running after
					runtime.Gosched()
				}
				close(stop)
				wg.Wait()
				if bs.Epoch < before {
					t.Fatalf("backup epoch %d below the %d acknowledged before it", bs.Epoch, before)
				}
				if bs.WALFiles == 0 || bs.Linked+bs.Copied != 3 || (osfs && bs.Linked != 3) {
					t.Fatalf("stats %+v", bs)
				}
				bo := o
				bo.Dir = bdir
				r, err := Open(bo)
				if err != nil {
					t.Fatalf("open backup: %v", err)
				}
				e := r.Epoch()
				if e < bs.Epoch {
					t.Fatalf("restored epoch %d < %d acknowledged before the backup", e, bs.Epoch)
				}
				sn := r.Snapshot()
				if d := checkAgainst(sn, modelAt(seed, e)); d != "" {
					t.Fatalf("restored store at epoch %d differs from the model: %s", e, d)
				}
				sn.Close()
				// The restored store is a working store.
				if _, err := r.Apply(genBatch(seed, e+1)); err != nil {
					t.Fatal(err)
				}
				if err := r.Flush(context.Background()); err != nil {
					t.Fatal(err)
				}
				r.Close()
				// The original is unaffected.
				if err := s.Flush(context.Background()); err != nil {
					t.Fatal(err)
				}
				sn = s.Snapshot()
				if d := checkAgainst(sn, modelAt(seed, sn.Epoch())); d != "" {
					t.Fatalf("original after backup: %s", d)
				}
				sn.Close()
				s.Close()
				t.Logf("round %d: backup at epoch %d (acked before %d), restored epoch %d, %+v", round, bs.Epoch, before, e, bs)
			}
		})
	}
}
