package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/vfs"
)

func sampleRecord() *jobRecord {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	return &jobRecord{ID: "00112233445566778899aabbccddeeff", Kind: "archive", Coll: "docs",
		Params: []byte(`{"oldest":2}`), State: JobRunning, Progress: 0.5, Log: []string{"a", "b"},
		Created: t0, Started: t0.Add(time.Second), Error: "", Timeout: time.Minute}
}

// TestJobRecordCodec: a record round-trips; each damaged part is a
// CorruptError naming the file and the offset of the damage.
func TestJobRecordCodec(t *testing.T) {
	r := sampleRecord()
	b, err := encodeJobRecord(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeJobRecord("/d/x.job", b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, r)
	}
	flip := func(i int) []byte { c := bytes.Clone(b); c[i] ^= 0x40; return c }
	for _, tc := range []struct {
		name string
		in   []byte
		off  int64
	}{
		{"short", b[:7], 7},
		{"magic", flip(1), 0},
		{"version", flip(4), 4},
		{"length", flip(5), jobHeaderSize},
		{"truncated payload", b[:len(b)-1], jobHeaderSize},
		{"checksum", flip(jobHeaderSize + 3), 9},
	} {
		_, err := decodeJobRecord("/d/x.job", tc.in)
		var ce *base.CorruptError
		if !errors.As(err, &ce) || ce.Path != "/d/x.job" || ce.Offset != tc.off {
			t.Errorf("%s: %v (want a CorruptError at offset %d)", tc.name, err, tc.off)
		}
	}
	// A well-framed payload that is not a valid record.
	for _, payload := range []string{`{"id":"zz","state":"queued"}`, `{"id":"00112233445566778899aabbccddeeff","state":"lost"}`, `{"nope":1}`, `[1]`} {
		c := make([]byte, jobHeaderSize, jobHeaderSize+len(payload))
		copy(c, b[:5])
		binary.LittleEndian.PutUint32(c[5:], uint32(len(payload)))
		c = append(c, payload...)
		binary.LittleEndian.PutUint32(c[9:], crcOf(c[jobHeaderSize:]))
		var ce *base.CorruptError
		if _, err := decodeJobRecord("/d/y.job", c); !errors.As(err, &ce) || ce.Path != "/d/y.job" || ce.Offset < jobHeaderSize {
			t.Errorf("payload %s: %v", payload, err)
		}
	}
}

func crcOf(b []byte) uint32 { return crc32.Checksum(b, jobCRC) }

// FuzzJobRecord: the decoder never panics; what it accepts re-encodes to
// a record it decodes to the same value; what it refuses is a
// CorruptError with the path and an offset inside the input (or at its end).
func FuzzJobRecord(f *testing.F) {
	b, _ := encodeJobRecord(sampleRecord())
	f.Add(b)
	f.Add(b[:jobHeaderSize])
	f.Add([]byte("SJOB\x01"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeJobRecord("f.job", data)
		if err != nil {
			var ce *base.CorruptError
			if !errors.As(err, &ce) || ce.Path != "f.job" || ce.Offset < 0 || ce.Offset > int64(len(data)) {
				t.Fatalf("error %v", err)
			}
			return
		}
		again, err := encodeJobRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := decodeJobRecord("f.job", again)
		if err != nil || !reflect.DeepEqual(r, r2) {
			t.Fatalf("re-encoded record: %v\n%+v\n%+v", err, r, r2)
		}
	})
}

// TestJobsSurviveCrash runs the engine and the job runner on a crashable
// file system, takes its crash image while a flush job is running (its
// flush done, the job not yet finished) and a second flush is queued, and
// reopens both on the image: both jobs read interrupted with the reason,
// the running flush's effect is complete (one warm segment holding its
// documents) and the queued one's absent (no second segment).
func TestJobsSurviveCrash(t *testing.T) {
	mem := vfs.NewCrashableMem()
	ctx := context.Background()
	db, err := engine.Open("/data", engine.Options{FS: mem, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	col, err := db.CreateCollection("docs", engine.CollectionOptions{Dim: 4, Analyzer: engine.AnalyzerProse})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := col.Upsert(ctx, []contract.Document{mkDoc("a", "alpha one", "", []float32{1, 2, 3, 4})}); err != nil {
		t.Fatal(err)
	}
	st, err := openJobStore(mem, "/data/server/jobs")
	if err != nil {
		t.Fatal(err)
	}
	jr := newJobRunner(db, 100, nil, st, quietLogger())
	flushed := make(chan struct{})
	jr.register("flush_hold", CollectionJob(func(ctx context.Context, c *engine.Collection, p *Progress) error {
		if err := c.Flush(ctx); err != nil {
			return err
		}
		p.Set(0.5)
		p.Logf("flushed; holding")
		close(flushed)
		<-ctx.Done()
		return ctx.Err()
	}))
	jr.register("flush", CollectionJob(func(ctx context.Context, c *engine.Collection, p *Progress) error { return c.Flush(ctx) }))
	submit := func(kind string) string {
		mk := jr.kinds[kind]
		req := JobRequest{Kind: kind, Collection: "docs"}
		run, err := mk(db, req)
		if err != nil {
			t.Fatal(err)
		}
		j, err := jr.submit(req, run, 0)
		if err != nil {
			t.Fatal(err)
		}
		return j.id
	}
	running := submit("flush_hold")
	<-flushed
	if _, err := col.Upsert(ctx, []contract.Document{mkDoc("b", "beta two", "", []float32{4, 3, 2, 1})}); err != nil {
		t.Fatal(err)
	}
	queued := submit("flush")
	if len(running) != 32 || len(queued) != 32 || running == queued {
		t.Fatalf("job ids %q %q: want 32 hex digits", running, queued)
	}
	image := mem.CrashClone()
	jr.close()
	db.Close()

	db2, err := engine.Open("/data", engine.Options{FS: image, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	st2, err := openJobStore(image, "/data/server/jobs")
	if err != nil {
		t.Fatal(err)
	}
	jr2 := newJobRunner(db2, 100, nil, st2, quietLogger())
	defer jr2.close()
	for id, was := range map[string]string{running: "running", queued: "queued"} {
		v, ok := jr2.get(id)
		if !ok || v.State != JobInterrupted || !strings.Contains(v.Error, "while the job was "+was) || v.Finished == nil ||
			(v.Kind == "flush" && !strings.Contains(v.Error, "complete or absent")) {
			t.Fatalf("job %s after the crash: %+v", was, v)
		}
	}
	if v, _ := jr2.get(running); v.Progress != 0.5 || !strings.Contains(strings.Join(v.Log, "\n"), "flushed; holding") {
		t.Fatalf("running job's progress and log were not kept: %+v", v)
	}
	col2, err := db2.Collection("docs")
	if err != nil {
		t.Fatal(err)
	}
	if s := col2.Stats(); s.WarmSegments != 1 {
		t.Fatalf("warm segments after the crash = %d, want 1 (the running flush complete, the queued one absent)", s.WarmSegments)
	}
	res, err := col2.Search(ctx, contract.Query{Text: "alpha", TopK: 5, Mode: contract.Lexical})
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("flushed document after the crash: %v %+v", err, res)
	}
	// The interrupted state is itself durable: a third opening reads it
	// without rewriting it.
	jr2.close()
	jr3 := newJobRunner(db2, 100, nil, st2, quietLogger())
	defer jr3.close()
	v2, _ := jr2.get(running)
	if v3, ok := jr3.get(running); !ok || !reflect.DeepEqual(v3, v2) {
		t.Fatalf("third opening:\n%+v\n%+v", v3, v2)
	}
}

// TestJobHistoryBound: the store keeps at most the history size of
// finished jobs, on disk too; a damaged record is skipped at startup.
func TestJobHistoryBound(t *testing.T) {
	mem := vfs.NewCrashableMem()
	st, err := openJobStore(mem, "/jobs")
	if err != nil {
		t.Fatal(err)
	}
	jr := newJobRunner(nil, 3, nil, st, quietLogger())
	var ids []string
	for i := range 5 {
		done := make(chan struct{})
		j, err := jr.submit(JobRequest{Kind: "noop"}, func(ctx context.Context, p *Progress) error { defer close(done); p.Logf("n%d", i); return nil }, 0)
		if err != nil {
			t.Fatal(err)
		}
		<-done
		for deadline := time.Now().Add(5 * time.Second); ; {
			if v, _ := jr.get(j.id); v.State == JobDone {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("job did not finish")
			}
			time.Sleep(time.Millisecond)
		}
		ids = append(ids, j.id)
	}
	jr.close()
	names, _ := mem.List("/jobs")
	if len(names) != 3 {
		t.Fatalf("files %v, want 3", names)
	}
	// Damage the newest record.
	p := filepath.Join("/jobs", ids[4]+jobFileSuffix)
	if err := vfs.WriteFileAtomic(mem, p, func(w io.Writer) error { _, err := w.Write([]byte("SJOB\x01junk")); return err }); err != nil {
		t.Fatal(err)
	}
	jr2 := newJobRunner(nil, 3, nil, st, quietLogger())
	defer jr2.close()
	var got []string
	for _, v := range jr2.list() {
		got = append(got, v.ID)
	}
	if want := ids[2:4]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("jobs after reopening %v, want %v", got, want)
	}
}

// TestJobsQueuedAtShutdownNeverStart: closing the runner while a job runs
// and others wait marks every waiting one interrupted without starting it,
// and the running one interrupted too.
func TestJobsQueuedAtShutdownNeverStart(t *testing.T) {
	st, err := openJobStore(vfs.NewCrashableMem(), "/jobs")
	if err != nil {
		t.Fatal(err)
	}
	jr := newJobRunner(nil, 100, nil, st, quietLogger())
	started := make(chan struct{}, 1)
	hold, err := jr.submit(JobRequest{Kind: "hold"}, func(ctx context.Context, p *Progress) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	var queued []string
	for range 8 {
		j, err := jr.submit(JobRequest{Kind: "flush"}, func(ctx context.Context, p *Progress) error {
			t.Error("a queued job started after shutdown began")
			return nil
		}, 0)
		if err != nil {
			t.Fatal(err)
		}
		queued = append(queued, j.id)
	}
	jr.close()
	if v, _ := jr.get(hold.id); v.State != JobInterrupted || !strings.Contains(v.Error, "while the job was running") {
		t.Fatalf("running job: %+v", v)
	}
	for _, id := range queued {
		if v, _ := jr.get(id); v.State != JobInterrupted || v.Started != nil || !strings.Contains(v.Error, "while the job was queued") {
			t.Fatalf("queued job: %+v", v)
		}
	}
}
