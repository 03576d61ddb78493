package contract

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// resultNoEpoch is the server's form of a Result for a caller that may
// not see the epoch: the outer nil pointer shadows Result.Epoch.
type resultNoEpoch struct {
	Result
	Epoch *uint64 `json:"epoch,omitempty"`
}

var jsonTestStrings = []string{"", "plain", `a "quoted" \ back\slash`, "<a href='x'>&amp;</a>",
	"\x00\x01\x07\b\f\n\r\t\x1f\x7f", "\u2028 line \u2029 para", "\xff\xfe bad \xc3", "é 漢字 🙂",
	"func main() {\n\tfmt.Println(\"hi\")\n}\n"}

var jsonTestFloats = []float64{0, 1, -1, 0.5, 1.0 / 3, 1e-6, 9.99e-7, 1e-7, 1.5e-300, 1e20, 1e21, 1.23e21,
	-2.5e-9, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Copysign(0, -1), 123456789.125}

func randomResult(r *rand.Rand) Result {
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	fl := func() float64 {
		if r.IntN(3) == 0 {
			return r.Float64() * math.Pow(10, float64(r.IntN(50)-25))
		}
		return jsonTestFloats[r.IntN(len(jsonTestFloats))]
	}
	var res Result
	if r.IntN(8) != 0 {
		res.Hits = []Envelope{}
	}
	for range r.IntN(6) {
		e := Envelope{DocID: pick(jsonTestStrings), Content: pick(jsonTestStrings), VersionHash: strings.Repeat("ab", 32),
			Score: fl(), Trust: Trust(pick([]string{"authoritative", "derived", "external_unverified", ""}))}
		if r.IntN(2) == 0 {
			e.SourceURI = "file:///src/" + pick(jsonTestStrings) + "#L1-L9"
		}
		if r.IntN(2) == 0 {
			loc := time.FixedZone("x", (r.IntN(48)-24)*1800)
			e.Timestamp = time.Unix(r.Int64N(1<<34), r.Int64N(1e9)*int64(r.IntN(2))).In(loc)
		}
		if r.IntN(2) == 0 {
			e.Namespace = pick(jsonTestStrings)
		}
		if n := r.IntN(4); n > 0 {
			e.Metadata = map[string]Value{}
			for range n {
				var v Value
				switch r.IntN(4) {
				case 0:
					v = String(pick(jsonTestStrings))
				case 1:
					v = Number(fl())
				case 2:
					v = Bool(r.IntN(2) == 0)
				default:
					v = Strings(pick(jsonTestStrings), pick(jsonTestStrings))
				}
				e.Metadata[pick(jsonTestStrings)+pick([]string{"a", "b", "Z", "ü"})] = v
			}
		}
		e.Reread = r.IntN(4) == 0
		if r.IntN(2) == 0 {
			e.Explain = Explain{LexicalRank: r.IntN(3), DenseRank: r.IntN(3), LexicalScore: fl(), DenseScore: fl(),
				FusedScore: fl(), Prior: fl(), Expansion: pick(jsonTestStrings)}
		}
		for range r.IntN(3) {
			a := r.IntN(1000)
			e.Highlights = append(e.Highlights, Span{a, a + r.IntN(20)})
		}
		res.Hits = append(res.Hits, e)
	}
	res.Partial = r.IntN(2) == 0
	if res.Partial {
		res.Reason = pick([]string{"budget", "deadline", "dense: index unavailable"})
	}
	res.Epoch = r.Uint64() >> r.IntN(64)
	for range r.IntN(3) {
		res.Dropped = append(res.Dropped, Dropped{DocID: pick(jsonTestStrings), Reason: DropStale, Detail: pick(jsonTestStrings)})
	}
	if r.IntN(2) == 0 {
		res.NextCursor = "c_" + pick(jsonTestStrings)
	}
	return res
}

// TestResultAppendJSON: the hand-written encoder writes exactly what
// encoding/json (HTML escaping off) writes for a Result, with and without
// the epoch, over 5,000 random results (fixed seed) covering every field,
// omitempty case, float range and string escape.
func TestResultAppendJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for i := range 5000 {
		res := randomResult(r)
		want, err := marshalNoHTML(res)
		if err != nil {
			t.Fatal(err)
		}
		got, err := res.AppendJSON([]byte("prefix"), true)
		if err != nil {
			t.Fatalf("result %d: %v", i, err)
		}
		if !bytes.Equal(got[len("prefix"):], want) {
			t.Fatalf("result %d:\n got %s\nwant %s", i, got[len("prefix"):], want)
		}
		want, err = marshalNoHTML(resultNoEpoch{Result: res})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ = res.AppendJSON(nil, false); !bytes.Equal(got, want) {
			t.Fatalf("result %d without epoch:\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestResultAppendJSONErrors: where encoding/json refuses a Result
// (non-finite scores, a year past 9999, a zero Value), AppendJSON refuses
// it too and leaves dst as it was.
func TestResultAppendJSONErrors(t *testing.T) {
	bad := []Result{
		{Hits: []Envelope{{Score: math.NaN()}}},
		{Hits: []Envelope{{Score: 1, Explain: Explain{DenseScore: math.Inf(1)}}}},
		{Hits: []Envelope{{Score: 1, Timestamp: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}},
		{Hits: []Envelope{{Score: 1, Metadata: map[string]Value{"k": {}}}}},
		{Hits: []Envelope{{Score: 1}, {Score: math.Inf(-1)}}},
	}
	for i, res := range bad {
		if _, err := json.Marshal(res); err == nil {
			t.Fatalf("case %d: encoding/json accepted it; the case is wrong", i)
		}
		got, err := res.AppendJSON([]byte("keep"), true)
		if err == nil {
			t.Fatalf("case %d: no error", i)
		}
		if string(got) != "keep" {
			t.Fatalf("case %d: dst = %q, want it unchanged", i, got)
		}
	}
}

// FuzzResultAppendJSON: for a Result built from arbitrary strings and
// floats, AppendJSON writes encoding/json's bytes, or fails where it fails.
func FuzzResultAppendJSON(f *testing.F) {
	f.Add("doc", "content <&>", "key", "v\u2028", 0.5, 1e-7, int64(1700000000), uint64(3))
	f.Add("\xff", "\x00", "", "", math.Inf(1), 0.0, int64(-1), uint64(0))
	f.Fuzz(func(t *testing.T, id, content, key, val string, score, dense float64, ts int64, epoch uint64) {
		res := Result{Hits: []Envelope{{DocID: id, Content: content, VersionHash: val, Score: score,
			Timestamp: time.Unix(ts, 0).UTC(), Metadata: map[string]Value{key: String(val), key + "n": Number(dense)},
			Explain: Explain{DenseScore: dense, Expansion: key}}}, Epoch: epoch, Reason: content,
			Dropped: []Dropped{{DocID: key, Reason: DropReason(val)}}}
		want, werr := marshalNoHTML(res)
		got, gerr := res.AppendJSON(nil, true)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("encoding/json err %v, AppendJSON err %v", werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}

func BenchmarkResultJSON(b *testing.B) {
	content := strings.Repeat("func (s *Server) handle(w http.ResponseWriter, r *http.Request) {\n\tif err := s.do(r); err != nil {\n", 25)
	res := Result{Hits: make([]Envelope, 10), Epoch: 42}
	for i := range res.Hits {
		res.Hits[i] = Envelope{DocID: "src/net/http/server.go#chunk-12", Content: content, SourceURI: "file:///usr/local/go/src/net/http/server.go#L100-L160",
			VersionHash: strings.Repeat("0f", 32), Timestamp: time.Unix(1700000000, 123456789).UTC(), Score: 0.87654321, Trust: Authoritative,
			Metadata: map[string]Value{"lang": String("go"), "path": String("src/net/http/server.go")},
			Explain:  Explain{LexicalRank: i + 1, LexicalScore: 12.3456789}}
	}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := json.Marshal(res)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(out)))
		}
	})
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			var err error
			buf, err = res.AppendJSON(buf[:0], true)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(buf)))
		}
	})
}
