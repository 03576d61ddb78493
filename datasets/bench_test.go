package datasets

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

func BenchmarkFvecsReader(b *testing.B) {
	for _, d := range []int{100, 784} {
		b.Run(fmt.Sprintf("dim=%d", d), func(b *testing.B) {
			const n = 1000
			var buf bytes.Buffer
			w, _ := NewFvecsWriter(&buf, d)
			row := make([]float32, d)
			for range n {
				w.Write(row)
			}
			w.Flush()
			data := buf.Bytes()
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				r := NewFvecsReader(bytes.NewReader(data), "bench")
				for r.Next() {
				}
				if r.Err() != nil || r.Count() != n {
					b.Fatal(r.Err())
				}
			}
		})
	}
}

func BenchmarkGroundTruth(b *testing.B) {
	for _, metric := range []Metric{L2, InnerProduct} {
		b.Run(fmt.Sprintf("metric=%s/n=20000/nq=64/dim=100/k=100", metric), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			base := Matrix[float32]{N: 20000, D: 100, Data: make([]float32, 20000*100)}
			qs := Matrix[float32]{N: 64, D: 100, Data: make([]float32, 64*100)}
			for i := range base.Data {
				base.Data[i] = float32(r.NormFloat64())
			}
			for i := range qs.Data {
				qs.Data[i] = float32(r.NormFloat64())
			}
			b.SetBytes(int64(4 * len(base.Data) * qs.N)) // base bytes scored per op
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ComputeGroundTruth(context.Background(), base, qs, metric, Options{K: 100, Workers: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
