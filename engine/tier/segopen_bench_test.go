package tier

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stratasearch/strata/vfs"
)

// BenchmarkOpenSegment opens a 10k-row segment (2 KiB of text and a 64-d
// vector per row) held in memory: the per-segment cost of Store.Open.
func BenchmarkOpenSegment(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("func return struct package import error string byte slice map chan select defer go interface type var const")
	rows := make([]segRow, 10000)
	for i := range rows {
		var sb strings.Builder
		for sb.Len() < 2048 {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteByte(' ')
		}
		v := make([]float32, 64)
		for j := range v {
			v[j] = rng.Float32()
		}
		rows[i] = segRow{doc: &Document{ID: fmt.Sprintf("d%05d", i), Content: sb.String(), Vector: v,
			Metadata: map[string]string{"path": fmt.Sprintf("f%d.go", i/10)}}, birth: uint64(i + 1)}
	}
	// v1: format 1 (one doc store frame); v3: format 3 opened eagerly
	// (every text block decoded); v3lazy: format 3 with a RangeFetcher
	// whose ranges are present (text blocks left undecoded).
	for _, c := range []struct {
		name string
		text bool
		lazy bool
		kb   int
	}{{"v1", false, false, 16}, {"v3", true, false, 16}, {"v3lazy", true, true, 16}, {"v3-32k", true, false, 32}, {"v3-64k", true, false, 64}} {
		saved := textBlockBytes
		textBlockBytes = c.kb << 10
		segWriteText = c.text
		data, err := buildSegment(rows, segBuildOptions{dim: 64, metric: L2, m: 8, efConstruction: 32, threads: 2})
		segWriteText, textBlockBytes = true, saved
		if err != nil {
			b.Fatal(err)
		}
		if off, n, ok := TextSection(data); ok {
			b.Logf("%s: %d bytes, text section %d", c.name, len(data), n)
			_ = off
		}
		var fetch RangeFetcher
		if c.lazy {
			fetch = &copyFetcher{full: data, into: data}
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				w, err := openSegmentFetch(data, "seg", 64, L2, fetch)
				if err != nil {
					b.Fatal(err)
				}
				w.free()
			}
		})
	}
}

// TestOpenSegmentsFirstDamaged: segments open in parallel, and with two
// damaged segments the error names the first one the manifest lists, at
// a byte offset, on every open.
func TestOpenSegmentsFirstDamaged(t *testing.T) {
	fs := vfs.NewCrashableMem()
	o := testOptions(fs)
	s := mustOpen(t, o)
	for f := uint64(0); f < 4; f++ {
		for i := uint64(1); i <= 10; i++ {
			if _, err := s.Apply(genBatch(7+f, i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Flush(bg); err != nil {
			t.Fatal(err)
		}
	}
	segs := s.WarmSegments()
	s.Close()
	if len(segs) != 4 {
		t.Fatalf("%d segments, want 4", len(segs))
	}
	second := filepath.Join("/db", segs[1].File)
	for _, i := range []int{1, 3} {
		file := filepath.Join("/db", segs[i].File)
		bad := fileData(t, fs, file)
		bad[len(bad)/2] ^= 0x40
		rewriteFile(t, fs, file, bad)
	}
	for range 5 {
		_, err := Open(o)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), second+": corrupt at byte offset") {
			t.Fatalf("error %v, want ErrCorrupt naming %s at an offset", err, second)
		}
	}
}

// TestOpenSegmentDocsRoundTrip: the documents read back from a segment
// (their strings share the decoded doc store) equal the rows written,
// and stay equal after the segment's file bytes are overwritten.
func TestOpenSegmentDocsRoundTrip(t *testing.T) {
	var rows []segRow
	for i := uint64(1); i <= 40; i++ {
		for _, op := range genBatch(11, i).Ops {
			if op.Kind == OpUpsert {
				d := op.Doc
				d.UpdatedUnixNano = int64(i)
				rows = append(rows, segRow{doc: &d, birth: i})
			}
		}
	}
	data, err := buildSegment(rows, segBuildOptions{dim: testDim, metric: L2, m: 4, efConstruction: 8, threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	w, err := openSegment(data, "rt.sst", testDim, L2)
	if err != nil {
		t.Fatal(err)
	}
	defer w.free()
	for i := range data {
		data[i] = 0xff
	}
	if len(w.docs) != len(rows) {
		t.Fatalf("%d docs, want %d", len(w.docs), len(rows))
	}
	for i, r := range rows {
		want := *r.doc
		want.EncodedMetadata = nil
		if len(want.Metadata) == 0 {
			want.Metadata = nil
		}
		if !reflect.DeepEqual(*w.docs[i], want) || w.birth[i] != r.birth {
			t.Fatalf("row %d: got %+v birth %d, want %+v birth %d", i, *w.docs[i], w.birth[i], want, r.birth)
		}
	}
}
