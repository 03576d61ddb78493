package wal

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/stratasearch/strata/vfs"
)

// TestLargePayloadsInterleaved: records at and above the direct-write
// size, appended concurrently with small ones, replay byte for byte in
// sequence order, and each large one is framed exactly as AppendRecord
// frames it. Half the appenders give their payloads as pieces
// (AppendPieces), which frame and replay as the whole payload.
func TestLargePayloadsInterleaved(t *testing.T) {
	m := vfs.NewCrashableMem()
	o, _ := testOpts(m)
	o.Sync = SyncAlways
	w, err := Open(o, 0, func(uint64, []byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	want := map[uint64][]byte{}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 99))
			for i := range 12 {
				n := 1 + r.IntN(300)
				switch i % 3 {
				case 1:
					n = directPayloadBytes - 1 + r.IntN(3)
				case 2:
					n = directPayloadBytes + r.IntN(1<<20)
				}
				p := make([]byte, n)
				for j := range p {
					p[j] = byte(r.IntN(256))
				}
				var seq uint64
				var err error
				if g%2 == 0 {
					seq, err = w.Append(p)
				} else {
					// The same payload as pieces (some empty), one record.
					var pieces [][]byte
					for rest := p; ; {
						k := min(len(rest), r.IntN(len(p)/2+2))
						pieces = append(pieces, rest[:k])
						if rest = rest[k:]; len(rest) == 0 {
							break
						}
					}
					seq, err = w.AppendPieces(pieces)
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				want[seq] = p
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	oc, _ := testOpts(m.CrashClone())
	var next uint64 = 1
	if _, err := Open(oc, 0, func(seq uint64, p []byte) error {
		if seq != next {
			return fmt.Errorf("replayed seq %d, want %d", seq, next)
		}
		next++
		if !bytes.Equal(p, want[seq]) {
			return fmt.Errorf("seq %d: payload of %d bytes differs from the %d appended", seq, len(p), len(want[seq]))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if int(next-1) != len(want) {
		t.Fatalf("replayed %d records, want %d", next-1, len(want))
	}
	p := want[3]
	rec := AppendRecord(nil, TypeBatch, 3, p)
	if h := AppendHeader(nil, TypeBatch, 3, p); !bytes.Equal(h, rec[:HeaderSize]) {
		t.Fatalf("AppendHeader %x, AppendRecord's header %x", h, rec[:HeaderSize])
	}
}

// TestLargePayloadNotCopied: appending a 4 MiB payload to a fresh WAL
// allocates a small fraction of it (the payload is written from the
// caller's slice, not framed into a pending copy).
func TestLargePayloadNotCopied(t *testing.T) {
	o, _ := testOpts(vfs.Default)
	o.Dir = t.TempDir()
	w, err := Open(o, 0, func(uint64, []byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p := bytes.Repeat([]byte("wal"), 4<<20/3)
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	if _, err := w.Append(p); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&ms1)
	if got := ms1.TotalAlloc - ms0.TotalAlloc; got > uint64(len(p))/4 {
		t.Fatalf("appending %d bytes allocated %d", len(p), got)
	}
}
