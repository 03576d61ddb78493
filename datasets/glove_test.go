package datasets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type synthWord struct {
	word string
	vec  []float64
}

func synthWords(r *rand.Rand, n, dim int) []synthWord {
	ws := make([]synthWord, n)
	for i := range ws {
		v := make([]float64, dim)
		for j := range v {
			v[j] = math.Round(r.NormFloat64()*1e6) / 1e6
		}
		v[r.IntN(dim)] += 0.5 // never the zero vector
		ws[i] = synthWord{fmt.Sprintf("w%d", i), v}
	}
	// Words that need JSON escaping, as in the real file (`"`, `\`, unicode).
	if n > 3 {
		ws[1].word, ws[2].word, ws[3].word = `"`, `a\b`, "naïve\n"
	}
	return ws
}

func vecJSON(w synthWord, i int) string {
	var sb strings.Builder
	sb.WriteByte('[')
	var ss float64
	for _, x := range w.vec {
		fmt.Fprintf(&sb, "%g,", x)
		ss += x * x
	}
	fmt.Fprintf(&sb, "%.8f,%d]", math.Sqrt(ss), i)
	return sb.String()
}

// synthGloVe renders words in the npm file's wrapped layout or the flat one.
func synthGloVe(ws []synthWord, wrapped bool) []byte {
	var sb strings.Builder
	key := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	dim := len(ws[0].vec)
	if wrapped {
		fmt.Fprintf(&sb, `{"precision":8,"l2NormIndex":%d,"wordIndex":%d,"size":%d,"dimensions":%d,"words":[`, dim, dim+1, len(ws), dim)
		for i, w := range ws {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(key(w.word))
		}
		sb.WriteString(`],"vectors":{`)
	} else {
		sb.WriteString("{\n")
	}
	for i, w := range ws {
		if i > 0 {
			sb.WriteString(",\n")
		}
		sb.WriteString(key(w.word) + ":" + vecJSON(w, i))
	}
	if wrapped {
		fmt.Fprintf(&sb, `},"unkVector":[%s0,-1]}`, strings.Repeat("0,", dim))
	} else {
		sb.WriteString("\n}\n")
	}
	return []byte(sb.String())
}

func TestSelectHoldout(t *testing.T) {
	got, err := SelectHoldout(1000, 100, 42)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 100 || slices.IsSorted(got) || slices.Min(got) < 0 || slices.Max(got) >= 1000 {
		t.Fatalf("bad selection %v", got)
	}
	// Reference: sort all ordinals by SplitMix64 key.
	idx := make([]int, 1000)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		ka, kb := SplitMix64(42, uint64(a)), SplitMix64(42, uint64(b))
		if ka < kb {
			return -1
		} else if ka > kb {
			return 1
		}
		return a - b
	})
	// In key order (a random permutation), so any prefix is a uniform sample.
	if want := idx[:100]; !slices.Equal(got, want) {
		t.Fatal("selection differs from reference")
	}
	again, _ := SelectHoldout(1000, 100, 42)
	if !slices.Equal(got, again) {
		t.Fatal("not deterministic")
	}
	other, _ := SelectHoldout(1000, 100, 43)
	if slices.Equal(got, other) {
		t.Fatal("seed ignored")
	}
	// SplitMix64 reference values (seed 0): the published first outputs.
	if v := SplitMix64(0, 0); v != 0xe220a8397b1dcdaf {
		t.Fatalf("SplitMix64(0,0) = %#x", v)
	}
	if v := SplitMix64(0, 1); v != 0x6e789e6aa1b965f4 {
		t.Fatalf("SplitMix64(0,1) = %#x", v)
	}
	for _, bad := range [][2]int{{10, 0}, {10, 10}, {10, 11}} {
		if _, err := SelectHoldout(bad[0], bad[1], 1); err == nil {
			t.Errorf("SelectHoldout(%d, %d) accepted", bad[0], bad[1])
		}
	}
}

func convertBytes(t testing.TB, data []byte, opt Options) (GloVeStats, [4]*bytes.Buffer, error) {
	var out [4]*bytes.Buffer
	for i := range out {
		out[i] = new(bytes.Buffer)
	}
	st, err := ConvertGloVe(bytes.NewReader(data), "synthetic.json", GloVeOutput{out[0], out[1], out[2], out[3]}, opt)
	return st, out, err
}

func TestConvertGloVe(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const n, dim, q = 500, 10, 37
	ws := synthWords(r, n, dim)
	hold, _ := SelectHoldout(n, q, 99)
	for _, wrapped := range []bool{true, false} {
		st, out, err := convertBytes(t, synthGloVe(ws, wrapped), Options{GloVeQueries: q, GloVeSeed: 99})
		if err != nil {
			t.Fatalf("wrapped=%v: %v", wrapped, err)
		}
		wantFmt := map[bool]string{true: "wrapped", false: "flat"}[wrapped]
		if st.Words != n || st.Dim != dim || st.Base != n-q || st.Queries != q || st.Format != wantFmt {
			t.Fatalf("stats %+v", st)
		}
		base, err := NewFvecsReader(out[0], "base").ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		qs, err := NewFvecsReader(out[1], "query").ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		bw, qw := jsonLines(t, out[2].String()), jsonLines(t, out[3].String())
		if base.N != n-q || qs.N != q || len(bw) != n-q || len(qw) != q {
			t.Fatalf("shapes base %d words %d, queries %d words %d", base.N, len(bw), qs.N, len(qw))
		}
		// Reference: base in file order, queries in hold-out (key) order;
		// normalise in float64.
		qpos := map[int]int{}
		for r, h := range hold {
			qpos[h] = r
		}
		bi := 0
		for i, w := range ws {
			var row []float32
			if qi, ok := qpos[i]; ok {
				if qw[qi] != w.word {
					t.Fatalf("query %d word %q want %q", qi, qw[qi], w.word)
				}
				row = qs.Row(qi)
			} else {
				if bw[bi] != w.word {
					t.Fatalf("base %d word %q want %q", bi, bw[bi], w.word)
				}
				row = base.Row(bi)
				bi++
			}
			var ss float64
			for _, x := range w.vec {
				ss += x * x
			}
			for j, x := range w.vec {
				if want := float32(x / math.Sqrt(ss)); row[j] != want {
					t.Fatalf("word %d comp %d = %v want %v", i, j, row[j], want)
				}
			}
		}
	}
}

func jsonLines(t *testing.T, s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if l == "" {
			continue
		}
		var w string
		if err := json.Unmarshal([]byte(l), &w); err != nil {
			t.Fatalf("bad word line %q: %v", l, err)
		}
		out = append(out, w)
	}
	return out
}

func TestConvertGloVeFile(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	ws := synthWords(r, 200, 6)
	dir := t.TempDir()
	src := filepath.Join(dir, "in.json")
	if err := os.WriteFile(src, synthGloVe(ws, true), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	st, err := ConvertGloVeFile(src, out, Options{GloVeQueries: 20})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadFvecs(filepath.Join(out, BaseFvecsName))
	if err != nil || b.N != 180 || b.D != 6 || st.Base != 180 {
		t.Fatalf("base %d×%d err %v", b.N, b.D, err)
	}
	words, err := ReadWordList(filepath.Join(out, QueryWordsName))
	if err != nil || len(words) != 20 {
		t.Fatalf("query words %d err %v", len(words), err)
	}
	ents, _ := os.ReadDir(out)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	// A failing conversion leaves no output and no temporaries.
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"a":[1,2,3],"b":[1,2]}`), 0o644)
	out2 := filepath.Join(dir, "out2")
	if _, err := ConvertGloVeFile(bad, out2, Options{GloVeQueries: 1}); err == nil {
		t.Fatal("bad input accepted")
	}
	if ents, _ := os.ReadDir(out2); len(ents) != 0 {
		t.Fatalf("failed conversion left %d files", len(ents))
	}
}

func TestConvertGloVeErrors(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"empty", ``},
		{"not object", `[1,2,3]`},
		{"truncated", `{"a":[1,2,3],"b":[1,2`},
		{"inconsistent dim", `{"a":[1,2,3,4],"b":[1,2,3]}`},
		{"too short", `{"a":[1,2],"b":[1,2]}`},
		{"string element", `{"a":[1,"x",3],"b":[1,2,3]}`},
		{"duplicate word", `{"a":[1,2,3],"a":[1,2,3],"c":[1,2,3]}`},
		{"zero vector", `{"a":[0,0,3],"b":[1,2,3],"c":[1,1,3]}`},
		{"flat scalar", `{"a":[1,2,3],"b":5}`},
		{"overflow", `{"a":[1e39,2,3],"b":[1,2,3]}`},
		{"float64 overflow", `{"a":[1e999,2,3],"b":[1,2,3]}`},
		{"float64 overflow in metadata", `{"size":1e999,"vectors":{"a":[1,2,3],"b":[1,2,3]}}`},
		{"trailing", `{"a":[1,2,3],"b":[1,2,3]} x`},
		{"size mismatch", `{"size":3,"vectors":{"a":[1,2,3],"b":[1,2,3]}}`},
		{"dims mismatch", `{"dimensions":2,"vectors":{"a":[1,2,3],"b":[1,2,3]}}`},
		{"vectors value", `{"vectors":{"a":[1,2,3],"b":{}}}`},
		{"syntax", `{"a":[1,2,3],,"b":[1,2,3]}`},
		{"too few words", `{"a":[1,2,3]}`},
	} {
		_, _, err := convertBytes(t, []byte(tc.in), Options{GloVeQueries: 1})
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if tc.name != "too few words" && !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: error %v does not match ErrCorrupt", tc.name, err)
		}
		if !strings.Contains(err.Error(), "synthetic.json") {
			t.Errorf("%s: error %q does not name the file", tc.name, err)
		}
	}
}

// TestConvertGloVeErrorLocation: errors inside a value (a bad number or
// string, a truncated array) name the record being read and the byte offset
// of the offending value, in both layouts. encoding/json's SyntaxError.Offset
// is not usable here: for values read by Decoder.Token it counts only the
// bytes of earlier string and number tokens.
func TestConvertGloVeErrorLocation(t *testing.T) {
	for _, tc := range []struct {
		in, at string // at: the text at the expected offset
		rec    int64  // 0-based; CorruptError.Record is rec+1
	}{
		{`{"a":[1,2,3],"b":[1,2,3],"c":[1,2,-x]}`, "-x", 2},
		{`{"a":[1,2,3],  "b":[1,2,3],"c\q":[1,2,3]}`, `"c\q"`, 2},
		{`{"a":[1,2,3],"b":[1,2,1.e5]}`, "1.e5", 1},
		{`{"vectors":{"a":[1,2,3],"b":[1,2,3],"c":[1,2,-x]}}`, "-x", 2},
		{`{"words":["a"],"vectors":{"a":[1,2,3],"b":[1,2,1.e5]}}`, "1.e5", 1},
	} {
		_, _, err := convertBytes(t, []byte(tc.in), Options{GloVeQueries: 1})
		var ce *CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if want := int64(strings.Index(tc.in, tc.at)); ce.Offset != want || ce.Record != tc.rec+1 {
			t.Errorf("%s: record %d offset %d, want record %d offset %d: %v", tc.in, ce.Record, ce.Offset, tc.rec, want, err)
		}
	}
}

// TestConvertGloVeMaxDim: a vector of MaxDim components (+ norm + index) is
// the largest accepted; one more component is corrupt input, reported as
// such, not a later writer error without file or offset.
func TestConvertGloVeMaxDim(t *testing.T) {
	word := func(d int) string { return "[1," + strings.Repeat("0,", d) + "0]" } // d components, norm, index
	big := word(MaxDim + 1)
	_, _, err := convertBytes(t, []byte(`{"a":`+big+`,"b":`+big+`}`), Options{GloVeQueries: 1})
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Record != 1 || !strings.Contains(err.Error(), "synthetic.json") {
		t.Fatalf("dimension MaxDim+1: %v", err)
	}
}

func FuzzConvertGloVe(f *testing.F) {
	r := rand.New(rand.NewPCG(11, 12))
	f.Add(synthGloVe(synthWords(r, 5, 3), true))
	f.Add(synthGloVe(synthWords(r, 5, 3), false))
	f.Add([]byte(`{"a":[1,2,3],"b":[1,2,3]}`))
	f.Add([]byte(`{"vectors":{"a":[1,2,3],"b":[4,5,6]},"words":["a","b"]}`))
	f.Add([]byte(`{"a":[1,2,3],"b":[1,2`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, out, err := convertBytes(t, data, Options{GloVeQueries: 1})
		if err != nil {
			return
		}
		b, err1 := NewFvecsReader(out[0], "b").ReadAll()
		q, err2 := NewFvecsReader(out[1], "q").ReadAll()
		if err1 != nil || err2 != nil || b.N != st.Base || q.N != 1 || st.Base+st.Queries != st.Words {
			t.Fatalf("inconsistent output: %+v %v %v", st, err1, err2)
		}
	})
}

// switchReader serves a on the first read pass, b after the first Seek.
type switchReader struct {
	a, b  []byte
	cur   *bytes.Reader
	seeks int
	after int // switch to b after this many seeks
}

func (s *switchReader) Read(p []byte) (int, error) { return s.cur.Read(p) }
func (s *switchReader) Seek(off int64, wh int) (int64, error) {
	s.seeks++
	if s.seeks >= s.after {
		s.cur = bytes.NewReader(s.b)
	}
	return s.cur.Seek(off, wh)
}

// TestConvertGloVeInputChanges: a file whose vectors change dimension
// between the passes (same word count) is reported as corrupt, never a
// panic or rows padded with stale values.
func TestConvertGloVeInputChanges(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name    string
		d1, d2  int
		wrapped bool
		after   int
	}{
		{"wrapped dim grows", 5, 8, true, 1},
		{"wrapped dim shrinks", 8, 5, true, 1},
		{"flat dim grows (after count pass)", 5, 8, false, 2},
		{"flat dim shrinks (after count pass)", 8, 5, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws1 := synthWords(r, 50, tc.d1)
			ws2 := synthWords(r, 50, tc.d2)
			sr := &switchReader{a: synthGloVe(ws1, tc.wrapped), b: synthGloVe(ws2, tc.wrapped), after: tc.after}
			sr.cur = bytes.NewReader(sr.a)
			var out [4]bytes.Buffer
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("PANIC: %v", p)
				}
			}()
			st, err := ConvertGloVe(io.ReadSeeker(sr), "x", GloVeOutput{&out[0], &out[1], &out[2], &out[3]}, Options{GloVeQueries: 5})
			if err == nil || !errors.Is(err, ErrCorrupt) {
				t.Errorf("error %v (want corrupt); stats %+v; base %d bytes", err, st, out[0].Len())
			}
		})
	}
}
