package wal

import (
	"bytes"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stratasearch/strata/internal/inspect"
	"github.com/stratasearch/strata/vfs"
)

func walField(t *testing.T, in *inspect.Info, name string) any {
	t.Helper()
	v, ok := in.Field(name)
	if !ok {
		t.Fatalf("no field %q in %+v", name, in.Header)
	}
	return v
}

func TestInspectWAL(t *testing.T) {
	m := vfs.NewCrashableMem()
	name, offs := writeOneSegment(t, m, 10)
	data := fileBytes(t, m, name)

	in, err := InspectNamed(name, data)
	if err != nil {
		t.Fatal(err)
	}
	if !in.OK() || len(in.Warnings) != 0 || in.Format != "wal" {
		t.Fatalf("intact segment: problems %v warnings %v", in.Problems, in.Warnings)
	}
	for f, want := range map[string]any{"records": int64(10), "firstSeq": uint64(1), "lastSeq": uint64(10),
		"records.batch": 10, "nameSeq": uint64(1)} {
		if got := walField(t, in, f); got != want {
			t.Errorf("%s = %v (%T), want %v", f, got, got, want)
		}
	}
	var payload int64
	for i := 1; i <= 10; i++ {
		payload += int64(len(payloadFor(uint64(i))))
	}
	if got := walField(t, in, "payloadBytes"); got != payload {
		t.Errorf("payloadBytes %v, want %d", got, payload)
	}
	r, err := InspectReader(bytes.NewReader(data), int64(len(data)))
	if err != nil || !r.OK() || walField(t, r, "records") != int64(10) {
		t.Fatalf("InspectReader: %v %+v", err, r)
	}

	// Torn tail: the last record cut short, then a zero-filled region.
	for _, torn := range [][]byte{data[:recordSpans(t, data, 1)[9][1]-3], append(slices.Clone(data[:offs[9]]), make([]byte, 100)...)} {
		tin, _ := Inspect(torn)
		if !tin.OK() || len(tin.Warnings) != 1 || tin.Warnings[0].Offset != int64(offs[9]) ||
			walField(t, tin, "tornTail") != int64(offs[9]) || walField(t, tin, "records") != int64(9) {
			t.Fatalf("torn tail: problems %v warnings %v header %+v", tin.Problems, tin.Warnings, tin.Header)
		}
		res, err := Scan(torn, "x", 1, nil)
		if err != nil || !res.Torn || res.End != int64(offs[9]) {
			t.Fatalf("Scan disagrees: %+v %v", res, err)
		}
	}

	// A flipped payload byte in record 4: corruption in the middle, the
	// walk resumes at record 5.
	bad := slices.Clone(data)
	bad[offs[3]+HeaderSize+1] ^= 0xff
	bin, _ := Inspect(bad)
	if bin.OK() || bin.ChecksumsOK() || len(bin.Problems) != 1 || bin.Problems[0].Offset != int64(offs[3]) {
		t.Fatalf("mid corruption: %v", bin.Problems)
	}
	if walField(t, bin, "firstCorrupt") != int64(offs[3]) || walField(t, bin, "records") != int64(9) {
		t.Fatalf("mid corruption header %+v", bin.Header)
	}
	if c := bin.Checksums[0]; c.Offset != int64(offs[3]) || c.OK || c.End != int64(recordSpans(t, data, 1)[3][1]) {
		t.Fatalf("checksum %+v", c)
	}
	if _, err := Scan(bad, "x", 1, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Scan: %v", err)
	}

	// A file named for another first sequence number.
	nin, _ := InspectNamed("/x/wal-0000000000000005.log", data)
	if len(nin.Problems) != 1 || nin.Problems[0].Offset != 0 || !strings.Contains(nin.Problems[0].Reason, "want 5") {
		t.Fatalf("name: %v", nin.Problems)
	}

	// An empty segment is fine.
	if ein, _ := Inspect(nil); !ein.OK() || walField(t, ein, "records") != int64(0) {
		t.Fatalf("empty: %+v", ein)
	}
}

func TestInspectLogManifestTypes(t *testing.T) {
	var b []byte
	b = AppendRecord(b, TypeManifestCheckpoint, 1, []byte("a"))
	b = AppendRecord(b, TypeManifestEdit, 2, []byte("bc"))
	var seen []uint64
	in := InspectLog(b, 1, func(in *inspect.Info, r Record) { seen = append(seen, r.Seq) })
	if !in.OK() || !slices.Equal(seen, []uint64{1, 2}) || walField(t, in, "records.manifestEdit") != 1 {
		t.Fatalf("%v %v %+v", in.Problems, seen, in.Header)
	}
	// Inside a WAL segment, manifest records are a problem.
	if win, _ := Inspect(b); len(win.Problems) != 2 {
		t.Fatalf("%v", win.Problems)
	}
}

// FuzzInspect: InspectLog never panics and agrees with Scan, the
// recovery decoder: same records; Scan's torn tail is the warning; Scan's
// corruption is a problem.
func FuzzInspect(f *testing.F) {
	var b []byte
	for i := uint64(1); i <= 6; i++ {
		b = AppendRecord(b, TypeBatch, i, payloadFor(i))
	}
	f.Add(b)
	f.Add(b[:len(b)-5])
	f.Add(append(slices.Clone(b), make([]byte, 40)...))
	mid := slices.Clone(b)
	mid[HeaderSize+3] ^= 1
	f.Add(mid)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var got []uint64
		in := InspectLog(b, 1, func(_ *inspect.Info, r Record) { got = append(got, r.Seq) })
		var want []uint64
		res, err := Scan(b, "fuzz", 1, func(r Record) error { want = append(want, r.Seq); return nil })
		if err != nil {
			if len(in.Problems) == 0 {
				t.Fatalf("Scan: %v; Inspect found no problem", err)
			}
			return
		}
		if len(in.Problems) != 0 || !slices.Equal(got, want) || res.Torn != (len(in.Warnings) == 1) {
			t.Fatalf("Scan %+v %v; Inspect %v %v %v", res, want, got, in.Problems, in.Warnings)
		}
	})
}

func TestCheckSegments(t *testing.T) {
	m := vfs.NewCrashableMem()
	o, _ := testOpts(m)
	o.SegmentSizeBytes = 600
	w, _, err := collect(t, o, 0)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, w, 20)
	w.Close()
	names, _ := m.List("/db/wal")
	sort.Strings(names)
	if len(names) < 4 {
		t.Fatalf("want several segments, got %v", names)
	}
	inspectAll := func(skip string, mutate func(name string, b []byte) []byte) []*inspect.Info {
		var infos []*inspect.Info
		for _, n := range names {
			if n == skip {
				continue
			}
			b := fileBytes(t, m, "/db/wal/"+n)
			if mutate != nil {
				b = mutate(n, b)
			}
			in, _ := InspectNamed(n, b)
			infos = append(infos, in)
		}
		return infos
	}
	problems := func(infos []*inspect.Info) (out []string) {
		for _, in := range infos {
			for _, p := range in.Problems {
				out = append(out, in.Path+": "+p.String())
			}
		}
		return out
	}
	infos := inspectAll("", nil)
	CheckSegments(infos, 0)
	if p := problems(infos); len(p) != 0 {
		t.Fatalf("intact log: %v", p)
	}
	var total int64
	for _, in := range infos {
		total += walField(t, in, "records").(int64)
	}
	if total != 20 {
		t.Fatalf("%d records across segments", total)
	}
	// A missing middle segment: a gap at the next one.
	infos = inspectAll(names[1], nil)
	CheckSegments(infos, 0)
	if p := problems(infos); len(p) != 1 || !strings.Contains(p[0], names[2]) || !strings.Contains(p[0], "previous one ended") {
		t.Fatalf("gap: %v", p)
	}
	// ... which is fine when those records are durable elsewhere.
	first2, _ := parseSegName(names[2])
	infos = inspectAll(names[1], nil)
	CheckSegments(infos, first2-1)
	if p := problems(infos); len(p) != 0 {
		t.Fatalf("gap covered by afterSeq: %v", p)
	}
	// The oldest segment starting too late for afterSeq.
	infos = inspectAll(names[0], nil)
	CheckSegments(infos, 0) // unknown: not checked
	if p := problems(infos); len(p) != 0 {
		t.Fatalf("unknown afterSeq: %v", p)
	}
	CheckSegments(infos, 1)
	if p := problems(infos); len(p) != 1 || !strings.Contains(p[0], "oldest segment") {
		t.Fatalf("oldest: %v", p)
	}
	// A torn tail in a non-final segment with records after it.
	infos = inspectAll("", func(n string, b []byte) []byte {
		if n == names[1] {
			return b[:len(b)-2]
		}
		return b
	})
	CheckSegments(infos, 0)
	if p := problems(infos); len(p) < 1 || !strings.Contains(p[0], "non-final segment") {
		t.Fatalf("torn middle: %v", p)
	}
}
