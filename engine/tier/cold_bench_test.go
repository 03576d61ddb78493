package tier

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratasearch/strata/vfs"
)

// BenchmarkArchive: archive one warm segment (codec training, encoding,
// Parquet write, reload) and promote it back; bytes = the segment's
// document bytes (contents + float32 vectors).
func BenchmarkArchive(b *testing.B) {
	for _, rows := range []int{5000} {
		for _, dim := range []int{128} {
			b.Run(fmt.Sprintf("rows=%d/dim=%d", rows, dim), func(b *testing.B) {
				docs := coldDocs(rows, 1, dim)
				var raw int64
				for _, d := range docs {
					raw += int64(len(d.Content) + 4*len(d.Vector))
				}
				b.SetBytes(raw)
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					o := testOptions(vfs.NewCrashableMem())
					o.Dim = dim
					s, err := Open(o)
					if err != nil {
						b.Fatal(err)
					}
					applyDocs(b, s, docs)
					if err := s.Flush(context.Background()); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					if _, err := s.Archive(context.Background(), ArchiveOptions{}); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					s.Close()
				}
			})
		}
	}
}

// BenchmarkSearchCold: one dense cold query (ADC scan of every code +
// exact rerank of 4·k) over an archive; bytes = the codes scanned.
func BenchmarkSearchCold(b *testing.B) {
	for _, rows := range []int{5000} {
		dim := 128
		b.Run(fmt.Sprintf("rows=%d/dim=%d/k=10", rows, dim), func(b *testing.B) {
			o := testOptions(vfs.NewCrashableMem())
			o.Dim = dim
			s, err := Open(o)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			docs := coldDocs(rows, 1, dim)
			applyDocs(b, s, docs)
			s.Flush(context.Background())
			if _, err := s.Archive(context.Background(), ArchiveOptions{}); err != nil {
				b.Fatal(err)
			}
			sn := s.Snapshot()
			defer sn.Close()
			rng := rand.New(rand.NewPCG(1, 1))
			q := make([]float32, dim)
			for j := range q {
				q[j] = float32(rng.NormFloat64())
			}
			b.SetBytes(int64(rows * 18))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := sn.SearchCold(q, 10, 4, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
