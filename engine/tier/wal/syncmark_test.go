package wal

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stratasearch/strata/vfs"
)

// killedLog writes n records under SyncAlways and returns the image a
// kill -9 of the process right after the last acknowledgement leaves
// (every completed write kept, nothing closed), with the segment's path.
func killedLog(t *testing.T, n int) (*vfs.MemFS, string) {
	t.Helper()
	m := vfs.NewCrashableMem()
	o, _ := testOpts(m)
	w, _, err := collect(t, o, 0)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, w, n)
	img := m.CrashCloneWith(vfs.CrashOptions{Process: true})
	w.Close()
	return img, lastSegment(t, img)
}

// TestSyncMarkFollowsEachGroupCommit: under SyncAlways every acknowledged
// record is followed, before its acknowledgement, by a sync mark that
// vouches for it.
func TestSyncMarkFollowsEachGroupCommit(t *testing.T) {
	img, p := killedLog(t, 6)
	data := fileBytes(t, img, p)
	res, err := Scan(data, p, 1, nil)
	if err != nil || res.Torn || res.LastSeq != 6 || res.MarkedSeq != 6 {
		t.Fatalf("scan of a killed log: %+v, %v; want 6 records, all vouched for", res, err)
	}
	// The last bytes are the mark for record 6.
	mark := AppendRecord(nil, TypeSyncMark, 6, nil)
	if !bytes.HasSuffix(data, mark) {
		t.Fatalf("the segment does not end with the sync mark for 6")
	}
}

// TestSyncedTailDamageIsLoss: a flipped byte in the last acknowledged
// record of a killed process is a loss (refused, naming file and offset),
// not a torn tail that silently drops the acknowledged write; AcceptLoss
// opens over it without handing the lost sequence number out again. A
// record cut by the kill itself (written, never acknowledged, no mark
// after it) stays a torn tail.
func TestSyncedTailDamageIsLoss(t *testing.T) {
	for _, where := range []string{"last byte", "first payload byte", "header length"} {
		t.Run(where, func(t *testing.T) {
			img, p := killedLog(t, 6)
			data := fileBytes(t, img, p)
			sp := recordSpans(t, data, 1)
			last := sp[len(sp)-1]
			switch where {
			case "last byte":
				data[last[1]-1] ^= 0x01
			case "first payload byte":
				data[last[0]+HeaderSize] ^= 0x80
			case "header length":
				data[last[0]+4] ^= 0x02
			}
			rewrite(t, img, p, data)
			o, _ := testOpts(img)
			before := fileBytes(t, img, p)
			_, cerr := Check(o, 0, nil)
			_, _, err := collect(t, o, 0)
			var ce *CorruptError
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || ce.Path != p || ce.Offset != int64(last[0]) {
				t.Fatalf("Open: %v; want ErrCorrupt at %s:%d", err, p, last[0])
			}
			if !strings.Contains(err.Error(), "sync mark") {
				t.Fatalf("Open: %v; want the reason to name the sync mark", err)
			}
			if cerr == nil || cerr.Error() != err.Error() {
				t.Fatalf("Check %v, Open %v: want the same refusal", cerr, err)
			}
			if !bytes.Equal(before, fileBytes(t, img, p)) {
				t.Fatal("a refused Open changed the segment")
			}
			var lb logBuf
			o.AcceptLoss, o.Logger = true, slog.New(slog.NewTextHandler(&lb, nil))
			w, seqs, err := collect(t, o, 0)
			if err != nil {
				t.Fatalf("AcceptLoss: %v", err)
			}
			checkSeqs(t, seqs, 1, 5)
			if got, err := w.Append(payloadFor(7)); err != nil || got != 7 {
				t.Fatalf("first append after AcceptLoss: seq %d, %v; want 7 (6 was acknowledged)", got, err)
			}
			w.Close()
		})
	}
	t.Run("unacknowledged tail", func(t *testing.T) {
		img, p := killedLog(t, 6)
		data := fileBytes(t, img, p)
		// A seventh batch the kill cut short: no fsync, no mark.
		data = AppendRecord(data, TypeBatch, 7, payloadFor(7))
		data = data[:len(data)-4]
		rewrite(t, img, p, data)
		o, lb := testOpts(img)
		w, seqs, err := collect(t, o, 0)
		if err != nil {
			t.Fatalf("torn unacknowledged tail: %v", err)
		}
		checkSeqs(t, seqs, 1, 6)
		if !strings.Contains(lb.String(), "torn tail") {
			t.Fatalf("no torn-tail warning: %s", lb.String())
		}
		w.Close()
	})
	t.Run("torn mark", func(t *testing.T) {
		// The kill landed inside the mark's own write: its records were
		// fsynced but not yet acknowledged; the cut mark is a torn tail
		// and every record is kept.
		img, p := killedLog(t, 6)
		data := fileBytes(t, img, p)
		rewrite(t, img, p, data[:len(data)-5])
		o, _ := testOpts(img)
		w, seqs, err := collect(t, o, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkSeqs(t, seqs, 1, 6)
		w.Close()
	})
}

// TestSyncMarkAhead: an intact mark that vouches for a record not before
// it is corruption.
func TestSyncMarkAhead(t *testing.T) {
	var b []byte
	b = AppendRecord(b, TypeBatch, 1, []byte("a"))
	b = AppendRecord(b, TypeSyncMark, 2, nil)
	if _, err := Scan(b, "f", 1, nil); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "sync mark for sequence 2") {
		t.Fatalf("Scan: %v", err)
	}
	in := InspectLog(b, 1, nil)
	if in.OK() {
		t.Fatalf("inspect: no problem for a mark ahead of the log")
	}
}

// TestSyncMarkUnderSyncInterval: Sync writes a mark for what it synced.
func TestSyncMarkUnderSyncInterval(t *testing.T) {
	m := vfs.NewCrashableMem()
	o, _ := testOpts(m)
	o.Sync = SyncNone
	w, _, err := collect(t, o, 0)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, w, 4)
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	img := m.CrashCloneWith(vfs.CrashOptions{Process: true})
	w.Close()
	p := lastSegment(t, img)
	res, err := Scan(fileBytes(t, img, p), p, 1, nil)
	if err != nil || res.MarkedSeq != 4 {
		t.Fatalf("%+v %v: want a mark for 4", res, err)
	}
}
