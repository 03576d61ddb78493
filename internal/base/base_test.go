package base

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestCorruptError(t *testing.T) {
	cause := io.ErrUnexpectedEOF
	for _, tc := range []struct {
		e    *CorruptError
		want string
	}{
		{Corruptf("hnsw index", "/d/x.hnsw", 64, "level %d above max %d", 9, 4),
			"hnsw index /d/x.hnsw: corrupt at byte offset 64: level 9 above max 4"},
		{&CorruptError{Kind: "ivfpq index", Offset: 8, Reason: "format version 0"},
			"ivfpq index <bytes>: corrupt at byte offset 8: format version 0"},
		{&CorruptError{Kind: "dataset", Path: "a.txt", Offset: 10, Line: 3, Record: 2, Reason: "bad JSON string", Err: cause},
			"dataset a.txt: corrupt at byte offset 10, line 3, record 2: bad JSON string: unexpected EOF"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		err := fmt.Errorf("open: %w", tc.e)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%v: errors.Is(err, ErrCorrupt) = false", err)
		}
		var ce *CorruptError
		if !errors.As(err, &ce) || ce != tc.e {
			t.Errorf("%v: errors.As did not yield the error", err)
		}
		if got := errors.Is(err, cause); got != (tc.e.Err != nil) {
			t.Errorf("%v: errors.Is(err, cause) = %v", err, got)
		}
	}
	if errors.Is(errors.New("corrupt data"), ErrCorrupt) {
		t.Error("another error with the same text matches ErrCorrupt")
	}
}

// TestMetricValues pins the persisted numeric values.
func TestMetricValues(t *testing.T) {
	for m, want := range map[Metric]uint32{L2: 1, IP: 2, Cosine: 3} {
		if uint32(m) != want {
			t.Errorf("%v = %d, want %d (the value is written into index and segment files)", m, uint32(m), want)
		}
		got, err := ParseMetric(m.String())
		if err != nil || got != m || !m.Valid() {
			t.Errorf("ParseMetric(%q) = %v, %v; Valid %v", m.String(), got, err, m.Valid())
		}
	}
	if m, err := ParseMetric("COSINE"); err != nil || m != Cosine {
		t.Errorf("ParseMetric(COSINE) = %v, %v", m, err)
	}
	for _, s := range []string{"", "l1", "dot"} {
		if _, err := ParseMetric(s); err == nil {
			t.Errorf("ParseMetric(%q) accepted", s)
		}
	}
	for _, m := range []Metric{0, 4} {
		if m.Valid() {
			t.Errorf("Metric(%d).Valid()", uint32(m))
		}
		if s := m.String(); s != fmt.Sprintf("Metric(%d)", uint32(m)) {
			t.Errorf("String() = %q", s)
		}
	}
}

func TestUnitVector(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, d := range []int{1, 2, 3, 16, 17, 100, 1000} {
		v := make([]float32, d)
		for i := range v {
			v[i] = float32(r.NormFloat64() * 10)
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		n = math.Sqrt(n)
		got := UnitVector(nil, v)
		for i := range v {
			if want := float32(float64(v[i]) / n); math.Abs(float64(got[i]-want)) > 1e-7*math.Abs(float64(want))+1e-30 {
				t.Fatalf("d=%d: [%d] = %v, want %v", d, i, got[i], want)
			}
		}
		in := append([]float32(nil), v...)
		if UnitVector(in, in); !slices.Equal(in, got) {
			t.Fatalf("d=%d: in place differs from a copy", d)
		}
		if !slices.Equal(UnitVector(make([]float32, d+5), v), got) {
			t.Fatalf("d=%d: a longer dst differs", d)
		}
	}
	z := []float32{0, 0, 0}
	if got := UnitVector([]float32{7, 7, 7}, z); !slices.Equal(got, z) {
		t.Errorf("zero vector gave %v", got)
	}
}
