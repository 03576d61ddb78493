package base_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratasearch/strata/datasets"
	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/hnsw"
	"github.com/stratasearch/strata/engine/ivfpq"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/engine/tier"
	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/internal/base"
)

// TestEveryFormatCorruptError damages one file of each on-disk format and
// checks that opening it fails with an error that matches
// errors.Is(err, base.ErrCorrupt) and yields (errors.As) a
// *base.CorruptError naming the format, the file and a byte offset inside
// it, all three also in the message.
func TestEveryFormatCorruptError(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 2))
	vecs := func(n, d int) []float32 {
		x := make([]float32, n*d)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		return x
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flip := func(p string, off int64) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[off] ^= 0x5a
		write(filepath.Base(p), b)
	}
	check := func(t *testing.T, err error, kind, path string, size int64) {
		t.Helper()
		if !errors.Is(err, base.ErrCorrupt) {
			t.Fatalf("err = %v, want one matching base.ErrCorrupt", err)
		}
		var ce *base.CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("err = %v (%T), want a *base.CorruptError", err, err)
		}
		if ce.Kind != kind || ce.Path != path || ce.Offset < 0 || ce.Offset >= size {
			t.Fatalf("kind %q path %q offset %d, want %q %q in [0,%d): %v", ce.Kind, ce.Path, ce.Offset, kind, path, size, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, kind) || !strings.Contains(msg, path) || !strings.Contains(msg, fmt.Sprintf("byte offset %d", ce.Offset)) {
			t.Fatalf("message %q does not name kind, path and offset", msg)
		}
	}

	t.Run("hnsw", func(t *testing.T) {
		const d = 8
		ix, err := hnsw.New(hnsw.Options{Dim: d, Metric: hnsw.Cosine, M: 8, EfConstruction: 32, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		x := vecs(100, d)
		for i := range 100 {
			if _, err := ix.Add(uint64(i), x[i*d:(i+1)*d]); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if _, err := ix.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		p := write("x.hnsw", buf.Bytes())
		flip(p, int64(buf.Len()/2))
		_, err = hnsw.OpenFile(p)
		check(t, err, "hnsw index", p, int64(buf.Len()))
	})

	t.Run("ivfpq", func(t *testing.T) {
		const d = 8
		ix, err := ivfpq.New(ivfpq.Options{Dim: d, Metric: ivfpq.L2, Nlist: 4, M: 4, Nbits: 8, KMeansIters: 3, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		x := vecs(300, d)
		if err := ix.Train(x); err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Add(nil, x); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := ix.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		p := write("x.ivf", buf.Bytes())
		flip(p, int64(buf.Len()/2))
		_, err = ivfpq.OpenFile(p)
		check(t, err, "ivfpq index", p, int64(buf.Len()))
	})

	t.Run("bm25", func(t *testing.T) {
		b := bm25.NewBuilder(bm25.Options{})
		for i := range 50 {
			toks := []text.Token{{Term: "alpha", Pos: 0}, {Term: fmt.Sprintf("t%d", i%7), Pos: 1}}
			if _, err := b.Add(uint64(i), toks); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if _, err := b.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		data := append([]byte(nil), buf.Bytes()...)
		data[len(data)/2] ^= 0x5a
		_, err := bm25.Open(data, "x.bm25")
		check(t, err, "bm25 segment", "x.bm25", int64(len(data)))
	})

	t.Run("wal", func(t *testing.T) {
		var log []byte
		var offs []int
		for seq := uint64(1); seq <= 5; seq++ {
			offs = append(offs, len(log))
			log = wal.AppendRecord(log, 1, seq, []byte(fmt.Sprintf("payload %d", seq)))
		}
		log[offs[2]+wal.HeaderSize] ^= 0x5a // a middle record's payload: not a torn tail
		_, err := wal.Scan(log, "000001.log", 1, func(wal.Record) error { return nil })
		check(t, err, wal.KindRecordLog, "000001.log", int64(len(log)))
	})

	// One store for the manifest and the segment.
	sdir := filepath.Join(dir, "store")
	o := tier.Options{Dir: sdir, Dim: 4}
	st, err := tier.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		b := &tier.Batch{}
		b.Upsert(tier.Document{ID: fmt.Sprintf("doc-%d", i), Content: "c", Vector: vecs(1, 4)})
		if _, err := st.Apply(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	segFile := filepath.Join(sdir, st.WarmSegments()[0].File)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(sdir, "MANIFEST-*"))
	if len(names) != 1 {
		t.Fatalf("manifests %v", names)
	}
	damage := func(t *testing.T, p string, off func(b []byte) int64) (restore func(), size int64) {
		orig, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		bad := append([]byte(nil), orig...)
		bad[off(bad)] ^= 0x5a
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		return func() { os.WriteFile(p, orig, 0o644) }, int64(len(orig))
	}

	t.Run("manifest", func(t *testing.T) {
		// The first record's payload: damage before the tail.
		restore, size := damage(t, names[0], func([]byte) int64 { return wal.HeaderSize + 1 })
		defer restore()
		_, err := tier.Open(o)
		check(t, err, "manifest", names[0], size)
	})

	t.Run("segment", func(t *testing.T) {
		restore, size := damage(t, segFile, func(b []byte) int64 { return int64(len(b) / 2) })
		defer restore()
		_, err := tier.Open(o)
		check(t, err, "segment", segFile, size)
	})

	t.Run("datasets", func(t *testing.T) {
		var b []byte
		for _, dim := range []int32{2, 2, 3} { // the third record's dimension differs
			b = binary.LittleEndian.AppendUint32(b, uint32(dim))
			for range dim {
				b = binary.LittleEndian.AppendUint32(b, 0)
			}
		}
		p := write("x.fvecs", b)
		_, err := datasets.ReadFvecs(p)
		check(t, err, "dataset", p, int64(len(b)))
		var ce *base.CorruptError
		errors.As(err, &ce)
		if ce.Record != 3 || ce.Offset != 24 {
			t.Fatalf("record %d offset %d, want record 3 (1-based) at byte 24: %v", ce.Record, ce.Offset, err)
		}
	})
}
