package contract

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"
)

func TestAppendNumber(t *testing.T) {
	for f, want := range map[float64]string{
		1e20: "1e20", 100: "100", 1e-7: "1e-7", 123456789: "123456789", 0.5: "0.5", 0: "0",
		math.Copysign(0, -1): "-0", -1.5e300: "-1.5e300", 1e21: "1e21", 1234567e10: "1.234567e16", 0.000123: "1.23e-4", 0.00123: "0.00123",
		math.MaxFloat64: "1.7976931348623157e308", math.SmallestNonzeroFloat64: "5e-324",
	} {
		if got := string(AppendNumber(nil, f)); got != want {
			t.Errorf("AppendNumber(%v) = %s, want %s", f, got, want)
		}
	}
	b, err := Number(1e20).MarshalJSON()
	if err != nil || string(b) != "1e20" {
		t.Fatalf("Number(1e20) = %s %v", b, err)
	}
	if b, _ := String("a<b & c>d").MarshalJSON(); string(b) != `"a<b & c>d"` {
		t.Fatalf("string value HTML-escaped: %s", b)
	}
}

// FuzzAppendNumber: the form parses back to exactly f, is a JSON number,
// and is never longer than encoding/json's or either strconv form.
func FuzzAppendNumber(f *testing.F) {
	for _, x := range []float64{0, 1, -1, 1e20, 1e21, 1e-6, 1e-7, 0.1, 123.456, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		f.Add(math.Float64bits(x))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		x := math.Float64frombits(bits)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		got := AppendNumber(nil, x)
		back, err := strconv.ParseFloat(string(got), 64)
		if err != nil || back != x || math.Signbit(back) != math.Signbit(x) {
			t.Fatalf("%v → %s → %v %v", x, got, back, err)
		}
		var y float64
		if err := json.Unmarshal(got, &y); err != nil || y != x {
			t.Fatalf("%s is not the JSON number %v: %v", got, x, err)
		}
		std, _ := json.Marshal(x)
		if len(got) > len(std) || len(got) > len(strconv.FormatFloat(x, 'f', -1, 64)) || len(got) > len(strconv.FormatFloat(x, 'e', -1, 64)) {
			t.Fatalf("%v: %s longer than %s", x, got, std)
		}
	})
}
