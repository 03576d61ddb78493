package ivfpq

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// TestColdCodecRoundTrip: codes are 18 bytes per vector; Decode(Encode(x))
// equals the index's own reconstruction (centroid + decoded residual)
// exactly; the codec survives WriteTo/OpenColdCodec byte-identically; the
// reconstruction error is well below the data variance.
func TestColdCodecRoundTrip(t *testing.T) {
	const d = 32
	n := 1500
	if testing.Short() {
		n = 600
	}
	x := randVecs(81, n, d, false)
	for _, metric := range []Metric{L2, IP} {
		c, err := TrainColdCodec(x, Options{Dim: d, Metric: metric, Nlist: 16, KMeansIters: 6, Seed: 2, Residual: ResidualOn})
		if err != nil {
			t.Fatal(err)
		}
		codes, err := c.Encode(nil, x)
		if err != nil {
			t.Fatal(err)
		}
		if len(codes) != n*ColdCodeSize {
			t.Fatalf("%d code bytes, want %d", len(codes), n*ColdCodeSize)
		}
		rec, err := c.Decode(nil, codes)
		if err != nil {
			t.Fatal(err)
		}
		// The same vectors added to an index reconstruct identically.
		ix := c.Index()
		assign := make([]int32, n)
		ix.assign(x, assign)
		pqc := ix.encode(x, assign)
		var mse float64
		for i := 0; i < n; i++ {
			if l := binary.LittleEndian.Uint16(codes[i*ColdCodeSize:]); int32(l) != assign[i] {
				t.Fatalf("vector %d: centroid %d, want %d", i, l, assign[i])
			}
			if !bytes.Equal(codes[i*ColdCodeSize+2:(i+1)*ColdCodeSize], pqc[i*ColdM:(i+1)*ColdM]) {
				t.Fatalf("vector %d: PQ bytes differ from the index encoding", i)
			}
			want := make([]float32, d)
			ix.pq.Decode(pqc[i*ColdM:(i+1)*ColdM], want)
			for j := range want {
				if ix.opts.byResidual() {
					want[j] += ix.coarse[int(assign[i])*d+j]
				}
				if rec[i*d+j] != want[j] {
					t.Fatalf("vector %d dim %d: decoded %g, want %g", i, j, rec[i*d+j], want[j])
				}
			}
			mse += exactDist(x[i*d:(i+1)*d], rec[i*d:(i+1)*d], L2)
		}
		if mse /= float64(n); mse > 0.6*d {
			t.Errorf("%v: reconstruction MSE %.2f vs data variance %d", metric, mse, d)
		}
		var buf bytes.Buffer
		if _, err := c.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		c2, err := OpenColdCodec(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		codes2, _ := c2.Encode(nil, x)
		if !bytes.Equal(codes, codes2) {
			t.Fatal("reopened codec encodes differently")
		}
	}
}

// TestColdScan: ADC scan distances equal the distance to the decoded
// vectors; with exact vectors, the reranked top 10 match brute force; the
// allow-list holds; Nprobe limits the scan to probed centroids.
func TestColdScan(t *testing.T) {
	const d = 32
	n := 2000
	if testing.Short() {
		n = 700
	}
	x, _, _ := gaussianBlobs(91, n, d, 20, 1, 0.5)
	qs, _, _ := gaussianBlobs(92, 8, d, 20, 1, 0.5)
	for _, metric := range []Metric{L2, IP} {
		c, err := TrainColdCodec(x, Options{Dim: d, Metric: metric, Nlist: 16, KMeansIters: 6, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		codes, _ := c.Encode(nil, x)
		rec, _ := c.Decode(nil, codes)
		gt, _ := bruteForce(x, qs, d, 10, metric, nil)
		allow := roaring.New()
		for i := 0; i < n; i += 2 {
			allow.Add(uint32(i))
		}
		var got [][]Result
		for qi := 0; qi < 8; qi++ {
			q := qs[qi*d : (qi+1)*d]
			all, err := c.Scan(q, codes, n, ColdScanParams{})
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != n {
				t.Fatalf("full scan returned %d of %d", len(all), n)
			}
			for _, r := range all {
				want := exactDist(q, rec[int(r.ID)*d:int(r.ID+1)*d], metric)
				if math.Abs(float64(r.Distance)-want) > 1e-4*(1+math.Abs(want))+1e-3 {
					t.Fatalf("%v: ADC %g vs decoded %g", metric, r.Distance, want)
				}
			}
			top, err := c.Scan(q, codes, 10, ColdScanParams{Vectors: x, KFactor: 20})
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, top)
			fl, _ := c.Scan(q, codes, 10, ColdScanParams{Allow: allow})
			for _, r := range fl {
				if r.ID%2 != 0 {
					t.Fatalf("allow-list violated: %d", r.ID)
				}
			}
			pr, _ := c.Scan(q, codes, n, ColdScanParams{Nprobe: 2})
			lists, _ := c.ix.probe(q, 2, nil)
			in := 0
			for i := 0; i < n; i++ {
				l := int(binary.LittleEndian.Uint16(codes[i*ColdCodeSize:]))
				if l == lists[0] || l == lists[1] {
					in++
				}
			}
			if len(pr) != in {
				t.Fatalf("Nprobe=2 scanned %d codes, want %d", len(pr), in)
			}
		}
		if r := recallAt(got, gt, 10); r < 0.95 {
			t.Errorf("%v: reranked cold scan recall@10 %.3f, want ≥ 0.95", metric, r)
		}
	}
}

func TestColdCodecErrors(t *testing.T) {
	x := randVecs(1, 400, 16, false)
	if _, err := TrainColdCodec(x, Options{Dim: 16, M: 8}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("M=8: %v", err)
	}
	if _, err := TrainColdCodec(x, Options{Dim: 16, Nlist: 70000}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("Nlist 70000: %v", err)
	}
	c, err := TrainColdCodec(x, Options{Dim: 16, Nlist: 4, KMeansIters: 2})
	if err != nil {
		t.Fatal(err)
	}
	bad := make([]byte, ColdCodeSize)
	bad[0] = 9 // centroid 9 ≥ Nlist 4
	if _, err := c.Decode(nil, bad); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("bad centroid decode: %v", err)
	}
	if _, err := c.Scan(x[:16], bad, 1, ColdScanParams{}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("bad centroid scan: %v", err)
	}
	if _, err := c.Decode(nil, bad[:17]); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("ragged codes: %v", err)
	}
	ix, _ := New(Options{Dim: 16, M: 8, Nlist: 4})
	ix.Train(x)
	if _, err := NewColdCodec(ix); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("NewColdCodec on M=8: %v", err)
	}
}

// FuzzColdDecode: Decode and Scan never panic on arbitrary code bytes.
func FuzzColdDecode(f *testing.F) {
	x := randVecs(2, 300, 16, false)
	c, err := TrainColdCodec(x, Options{Dim: 16, Nlist: 4, KMeansIters: 2})
	if err != nil {
		f.Fatal(err)
	}
	codes, _ := c.Encode(nil, x[:16*5])
	f.Add(codes)
	f.Add(codes[:20])
	f.Add([]byte{0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err1 := c.Decode(nil, b)
		_, err2 := c.Scan(x[:16], b, 3, ColdScanParams{})
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("Decode err %v, Scan err %v", err1, err2)
		}
	})
}
