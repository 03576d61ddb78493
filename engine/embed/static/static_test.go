package static

import (
	"bytes"
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/embed"
	"github.com/stratasearch/strata/internal/base"
)

var (
	_ embed.Embedder = (*Embedder)(nil)
	_ embed.Embedder = Lazy{}
)

func TestTokens(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"ToUpper", []string{"to", "upper", "toupper"}},
		{"parseHTTPRequest", []string{"parse", "http", "request", "parsehttprequest"}},
		{"read_full", []string{"read", "full"}},
		{"utf8.DecodeRune", []string{"utf", "utf8", "decode", "rune", "decoderune"}},
		{"make every letter capital", []string{"make", "every", "letter", "capital"}},
		{"x 42 Int64", []string{"x", "int", "int64"}},
		{"", nil},
	} {
		if got := Tokens(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Tokens(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// tiny is a 3-word, 2-d table: apple (1,0), pear (0.8,0.6), car (0,1).
func tiny(common []float32) *Table {
	return &Table{Name: "tiny", Dim: 2, Words: []string{"apple", "pear", "car"},
		Scale: []float32{1, 0.8, 1}, Q: []int8{127, 0, 127, 95, 0, 127}, Common: common}
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestEmbedReference(t *testing.T) {
	e := New(tiny(nil))
	vs, err := e.Embed(context.Background(), []string{"Apple pear", "car", "zzz unknown", ""})
	if err != nil {
		t.Fatal(err)
	}
	// Reference: the sum of the dequantised rows, normalised.
	row := func(i int) [2]float64 {
		s := float64(e.t.Scale[i]) / 127
		return [2]float64{s * float64(e.t.Q[2*i]), s * float64(e.t.Q[2*i+1])}
	}
	a, p := row(0), row(1)
	sx, sy := a[0]+p[0], a[1]+p[1]
	n := math.Hypot(sx, sy)
	if math.Abs(float64(vs[0][0])-sx/n) > 1e-6 || math.Abs(float64(vs[0][1])-sy/n) > 1e-6 {
		t.Errorf("Embed(apple pear) = %v, want (%v, %v)", vs[0], sx/n, sy/n)
	}
	if math.Abs(float64(vs[1][1])-1) > 1e-6 {
		t.Errorf("Embed(car) = %v, want (0, 1)", vs[1])
	}
	for i, v := range vs {
		if n := dot(v, v); math.Abs(n-1) > 1e-5 {
			t.Errorf("vector %d has squared norm %v", i, n)
		}
	}
	if err := embed.CheckVectors(vs, 4, 2); err != nil {
		t.Error(err)
	}
	again, _ := e.Embed(context.Background(), []string{"zzz unknown"})
	if !reflect.DeepEqual(again[0], vs[2]) {
		t.Errorf("fallback vector not deterministic: %v vs %v", again[0], vs[2])
	}
	// Common component (1,0) removed: "apple pear" keeps only its y part.
	c := New(tiny([]float32{1, 0}))
	v := c.EmbedOne(make([]float32, 2), "apple pear")
	if math.Abs(float64(v[0])) > 1e-6 || math.Abs(float64(v[1])-1) > 1e-6 {
		t.Errorf("with common component removed: %v, want (0, 1)", v)
	}
}

func TestEmbedCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(tiny(nil)).Embed(ctx, []string{"apple"}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestFormatRoundTrip(t *testing.T) {
	for _, tb := range []*Table{tiny(nil), tiny([]float32{0.6, 0.8})} {
		b, err := Encode(tb)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(b, "t")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tb) {
			t.Errorf("round trip: got %+v, want %+v", got, tb)
		}
		z, err := EncodeZstd(tb)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := DecodeZstd(z, "t"); err != nil || !reflect.DeepEqual(got, tb) {
			t.Errorf("zstd round trip: %+v, %v", got, err)
		}
	}
}

func TestDecodeCorrupt(t *testing.T) {
	good, _ := Encode(tiny(nil))
	fix := reCRC // recompute the CRC so the field check is reached
	for _, c := range []struct {
		name   string
		b      []byte
		offset int64
		reason string
	}{
		{"short", good[:10], 10, "shorter"},
		{"magic", append([]byte("XTRATAST"), good[8:]...), 0, "magic"},
		{"version", fix(patch(good, 8, 2)), 8, "version"},
		{"dim", fix(patch(good, 12, 0)), 12, "dimension"},
		{"crc", patch(good, 30, 'z'), int64(len(good) - 4), "CRC"},
		{"vocab", fix(patch(good, 16, 1000)), 32, "truncated"},
		{"trailing", reCRC(append(bytes.Clone(good[:len(good)-4]), 0, 0, 0, 0, 0)), 0, "rows"},
	} {
		_, err := Decode(c.b, "tbl")
		var ce *base.CorruptError
		if !errors.As(err, &ce) {
			t.Errorf("%s: err = %v, want *base.CorruptError", c.name, err)
			continue
		}
		if (c.offset != 0 || c.name == "magic") && ce.Offset != c.offset {
			t.Errorf("%s: offset %d, want %d (%v)", c.name, ce.Offset, c.offset, err)
		}
		if !strings.Contains(err.Error(), c.reason) || ce.Path != "tbl" {
			t.Errorf("%s: error %q lacks %q or path", c.name, err, c.reason)
		}
	}
}

func patch(b []byte, off int, v uint32) []byte {
	b = bytes.Clone(b)
	b[off], b[off+1], b[off+2], b[off+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	return b
}

func reCRC(b []byte) []byte {
	b = bytes.Clone(b)
	end := len(b) - 4
	c := crc32IEEE(b[:end])
	b[end], b[end+1], b[end+2], b[end+3] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
	return b
}

func FuzzDecode(f *testing.F) {
	good, _ := Encode(tiny([]float32{0.6, 0.8}))
	f.Add(good)
	f.Add(good[:40])
	f.Add(reCRC(patch(good, 16, 1<<21)))
	f.Add(reCRC(patch(good, 24, 900)))
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		tb, err := Decode(b, "fuzz")
		if err != nil {
			var ce *base.CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *base.CorruptError", err)
			}
			if ce.Offset < 0 || ce.Offset > int64(len(b)) {
				t.Fatalf("offset %d outside the %d-byte input", ce.Offset, len(b))
			}
			return
		}
		re, err := Encode(tb)
		if err != nil {
			t.Fatalf("decoded table does not encode: %v", err)
		}
		if !bytes.Equal(re, b) {
			t.Fatalf("re-encoding differs from the input")
		}
		e := New(tb)
		v := e.EmbedOne(make([]float32, tb.Dim), strings.Join(tb.Words, " "))
		if err := embed.CheckVectors([][]float32{v}, 1, tb.Dim); err != nil {
			t.Fatal(err)
		}
	})
}

func TestBuiltin(t *testing.T) {
	e, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if e.Dim() != BuiltinDim || e.Model() != BuiltinModel || len(e.Table().Words) < 40000 {
		t.Fatalf("builtin: dim %d, model %q, %d words", e.Dim(), e.Model(), len(e.Table().Words))
	}
	vs, err := e.Embed(context.Background(), []string{
		"calculate the square root of a number",
		"ToUpper returns s with all Unicode letters mapped to their upper case",
		"Sqrt returns the square root of x",
		"open a network connection to an address",
		"Dial connects to the address on the named network",
	})
	if err != nil {
		t.Fatal(err)
	}
	// Each query is closer to its own answer than to the other one.
	if !(dot(vs[0], vs[2]) > dot(vs[0], vs[1]) && dot(vs[0], vs[2]) > dot(vs[0], vs[4])) {
		t.Errorf("square root: Sqrt %.3f, ToUpper %.3f, Dial %.3f", dot(vs[0], vs[2]), dot(vs[0], vs[1]), dot(vs[0], vs[4]))
	}
	if !(dot(vs[3], vs[4]) > dot(vs[3], vs[1]) && dot(vs[3], vs[4]) > dot(vs[3], vs[2])) {
		t.Errorf("connection: Dial %.3f, ToUpper %.3f, Sqrt %.3f", dot(vs[3], vs[4]), dot(vs[3], vs[1]), dot(vs[3], vs[2]))
	}
}

// benchTexts are embedding texts of the shape ingest.EmbedText makes.
var benchTexts = []string{
	"EqualFold (equal fold). EqualFold reports whether s and t, interpreted as UTF-8 strings, are equal under simple Unicode case-folding, which is a more general form of case-insensitivity. func EqualFold(s, t string) bool (in strings/strings.go)",
	"Builder.WriteString (builder write string). WriteString appends the contents of s to b's buffer. It returns the length of s and a nil error. func (b *Builder) WriteString(s string) (int, error) (in strings/builder.go)",
	"ParseInt (parse int). ParseInt interprets a string s in the given base (0, 2 to 36) and bit size (0 to 64) and returns the corresponding value i. func ParseInt(s string, base int, bitSize int) (i int64, err error) (in strconv/atoi.go)",
	"Dial (dial). Dial connects to the address on the named network. Known networks are tcp, tcp4, tcp6, udp, udp4, udp6, ip, ip4, ip6, unix. func Dial(network, address string) (Conn, error) (in net/dial.go)",
}

func BenchmarkEmbed(b *testing.B) {
	e, err := Builtin()
	if err != nil {
		b.Fatal(err)
	}
	texts := make([]string, 0, 1024)
	var nb int64
	for len(texts) < cap(texts) {
		s := benchTexts[len(texts)%len(benchTexts)]
		texts = append(texts, s)
		nb += int64(len(s))
	}
	b.SetBytes(nb)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "texts/s")
	b.ReportMetric(float64(len(builtinTable)), "table-bytes")
}

// BenchmarkDecodeBuiltin: what Builtin costs on first use (zstd +
// Decode + the word index).
func BenchmarkDecodeBuiltin(b *testing.B) {
	for b.Loop() {
		t, err := DecodeZstd(builtinTable, BuiltinName)
		if err != nil {
			b.Fatal(err)
		}
		New(t)
	}
}
