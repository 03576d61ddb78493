package tier

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/vfs"
)

// TestSyncedTailFlipDoesNotUndoDelete: a document is written, then deleted
// (acknowledged under SyncAlways), and the process is killed. Flipping the
// last byte of the WAL's last record, the delete, must not pass as a torn
// write: Open refuses it naming the WAL file and offset, and never brings
// the deleted document back.
func TestSyncedTailFlipDoesNotUndoDelete(t *testing.T) {
	mem := vfs.NewCrashableMem()
	o := testOptions(mem)
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	var b Batch
	b.Upsert(Document{ID: "secret", Content: "to be deleted", Namespace: "t/", Trust: TrustDerived})
	if _, err := s.Apply(&b); err != nil {
		t.Fatal(err)
	}
	var d Batch
	d.Delete("secret")
	del, err := s.Apply(&d)
	if err != nil {
		t.Fatal(err)
	}
	img := mem.CrashCloneWith(vfs.CrashOptions{Process: true}) // kill -9 after the acknowledgement
	s.Close()

	names, err := img.List("/db/wal")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	p := filepath.Join("/db/wal", names[len(names)-1])
	data, err := readAllFile(img, p)
	if err != nil {
		t.Fatal(err)
	}
	var lastOff, lastEnd int64 = -1, 0
	var first uint64
	if _, err := fmt.Sscanf(names[len(names)-1], "wal-%x.log", &first); err != nil {
		t.Fatal(err)
	}
	if _, err := wal.Scan(data, p, first, func(r wal.Record) error {
		if r.Seq == del {
			lastOff, lastEnd = r.Offset, r.Offset+int64(wal.HeaderSize+len(r.Payload))
		}
		return nil
	}); err != nil || lastOff < 0 {
		t.Fatalf("the delete (epoch %d) is not in %s: %v", del, p, err)
	}
	data[lastEnd-1] ^= 0x01
	writeWhole(t, img, p, data)

	s2, err := Open(testOptions(img))
	if err == nil {
		defer s2.Close()
		sn := s2.Snapshot()
		defer sn.Close()
		if _, _, ok := sn.Get("secret"); ok {
			t.Fatalf("Open succeeded at epoch %d and the acknowledged delete (epoch %d) was undone", s2.Epoch(), del)
		}
		t.Fatalf("Open succeeded at epoch %d over a damaged acknowledged record (epoch %d)", s2.Epoch(), del)
	}
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "offset") {
		t.Fatalf("Open: %v; want ErrCorrupt naming %s and an offset", err, p)
	}
	t.Logf("refused: %v", err)
}
