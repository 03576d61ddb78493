package datasets

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

const cranLike = `.I 1
.T
first title
.A
author one
.B
source one
.W
first abstract
line two
.I 2
.T
.A
.B
.W
.I 3
.T
third
.W
abstract three
.A
stray marker line
.B
another
.W
repeated w
.I 4
.T inline title
.A
a1
.A
a2
.W
text
.X
1	5	1
`

func TestReadIRecords(t *testing.T) {
	recs, err := ReadIRecords(strings.NewReader(cranLike), "c")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("%d records", len(recs))
	}
	want := []map[string]string{
		{"T": "first title", "A": "author one", "B": "source one", "W": "first abstract\nline two"},
		{"T": "", "A": "", "B": "", "W": ""},
		{"T": "third", "W": "abstract three\n.A\nstray marker line\n.B\nanother\n.W\nrepeated w"},
		{"T": "inline title", "A": "a1\na2", "W": "text", "X": "1\t5\t1"},
	}
	for i, r := range recs {
		if r.Ordinal != i+1 || r.ID != []string{"1", "2", "3", "4"}[i] {
			t.Errorf("record %d: id %q ordinal %d", i, r.ID, r.Ordinal)
		}
		if len(r.Fields) != len(want[i]) {
			t.Errorf("record %d: fields %q", i, r.Fields)
		}
		for k, v := range want[i] {
			if r.Fields[k] != v {
				t.Errorf("record %d field %s = %q, want %q", i, k, r.Fields[k], v)
			}
		}
	}
	if recs[1].Line != 11 || recs[1].Offset != int64(strings.Index(cranLike, ".I 2")) {
		t.Errorf("record 2 at line %d offset %d", recs[1].Line, recs[1].Offset)
	}
	// CRLF line endings parse the same.
	crlf, err := ReadIRecords(strings.NewReader(strings.ReplaceAll(cranLike, "\n", "\r\n")), "c")
	if err != nil || crlf[2].Fields["W"] != want[2]["W"] {
		t.Fatalf("CRLF: %v %q", err, crlf[2].Fields["W"])
	}
}

// TestReadIRecordsLinear: a field's lines must be joined in linear time
// and memory. Re-concatenating the field for every line allocated
// Σ(field length) = O(lines²) bytes: about 2.4 GB for this 220 kB record
// (and hours for a few MB), far beyond the bound asserted here.
func TestReadIRecordsLinear(t *testing.T) {
	const lines = 20000
	in := ".I 1\n.W\n" + strings.Repeat("abcdefghij\n", lines)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	recs, err := ReadIRecords(strings.NewReader(in), "big.all")
	runtime.ReadMemStats(&after)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	if w := recs[0].Field("W"); len(w) != lines*11-1 || w != strings.TrimSuffix(strings.Repeat("abcdefghij\n", lines), "\n") {
		t.Fatalf("abstract of %d bytes is wrong", len(w))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 40*uint64(len(in)) {
		t.Errorf("ReadIRecords allocated %d bytes for %d bytes of input", alloc, len(in))
	}
}

func TestReadIRecordsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		line     int64
	}{
		{"text before .I", "hello\n.I 1\n", 1},
		{"empty id", ".I 1\n.W\nx\n.I\n", 4},
		{"duplicate id", ".I 1\n.W\n.I 2\n.I 1\n", 4},
		{"text before marker", ".I 1\nloose text\n", 2},
	} {
		_, err := ReadIRecords(strings.NewReader(tc.in), "bad.all")
		var ce *CorruptError
		if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if ce.Line != tc.line || !strings.Contains(err.Error(), "bad.all") {
			t.Errorf("%s: line %d: %v", tc.name, ce.Line, err)
		}
	}
}

const trecDocs = "<DOC>\n<DOCNO>1</DOCNO>\nfirst  doc\ntext\n</DOC>\n<DOC>\n<DOCNO> 2 </DOCNO>\ncaf\xe9 <B>bold</B>\n</DOC>\n\n<doc><docno>3</docno></doc>\n"

func TestReadTRECDocs(t *testing.T) {
	docs, err := ReadTRECDocs(strings.NewReader(trecDocs), "d")
	if err != nil {
		t.Fatal(err)
	}
	want := []TRECDoc{{"1", "first doc text", 0}, {"2", "café <B>bold</B>", 46}, {"3", "", 96}}
	if len(docs) != len(want) {
		t.Fatalf("%d docs", len(docs))
	}
	for i, d := range docs {
		if d != want[i] {
			t.Errorf("doc %d = %+v, want %+v", i, d, want[i])
		}
	}
	for _, tc := range []struct {
		name, in string
		off      int64
	}{
		{"junk between", "<DOC><DOCNO>1</DOCNO></DOC>\njunk", 28},
		{"truncated", "<DOC><DOCNO>1</DOCNO> text", 0},
		{"no docno", "<DOC>text</DOC>", 0},
		{"empty docno", "<DOC><DOCNO> </DOCNO></DOC>", 0},
		{"duplicate", "<DOC><DOCNO>1</DOCNO></DOC><DOC><DOCNO>1</DOCNO></DOC>", 27},
		{"nested", "<DOC><DOCNO>1</DOCNO><DOC></DOC>", 21},
	} {
		_, err := ReadTRECDocs(strings.NewReader(tc.in), "bad.trec")
		var ce *CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if ce.Offset != tc.off || !strings.Contains(err.Error(), "bad.trec") {
			t.Errorf("%s: offset %d: %v", tc.name, ce.Offset, err)
		}
	}
}

func TestReadTRECTopics(t *testing.T) {
	in := "<top>\n<num>1</num><title>\nMEASUREMENT OF  X\n</title>\n</top>\n" +
		"<top>\n<num> Number: 301\n<title> Topic: International Organized Crime\n\n<desc> Description:\nIdentify organizations\n\n<narr> Narrative:\nA relevant document\n</top>\n"
	tops, err := ReadTRECTopics(strings.NewReader(in), "t")
	if err != nil {
		t.Fatal(err)
	}
	want := []TRECTopic{
		{Num: "1", Title: "MEASUREMENT OF X", Offset: 0},
		{Num: "301", Title: "International Organized Crime", Desc: "Identify organizations", Narr: "A relevant document", Offset: 60},
	}
	for i := range want {
		if tops[i] != want[i] {
			t.Errorf("topic %d = %+v, want %+v", i, tops[i], want[i])
		}
	}
	for _, in := range []string{"<top><title>x</title></top>", "<top><num>1</num></top>", "<top><num>1</num><title>x", "<top><num>1</num><title>a</top><top><num>1</num><title>b</top>", "x"} {
		if _, err := ReadTRECTopics(strings.NewReader(in), "bad"); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q: %v", in, err)
		}
	}
}

func TestReadQrels(t *testing.T) {
	q, err := ReadQrels(strings.NewReader("1 0 10 1\n1 0 11 0\n\n2 0 10 2\n"), "q", TRECQrels)
	if err != nil {
		t.Fatal(err)
	}
	if q.Lines != 3 || q.Blank != 1 || q.Relevant != 2 || q.NonRel != 1 || q.Judgments["2"]["10"] != 2 || q.RelevantCount("1") != 1 {
		t.Fatalf("%+v", q)
	}
	c, err := ReadQrels(strings.NewReader("1 184 2 \n1 29 -1\n  \n"), "c", CranQrels)
	if err != nil || c.Lines != 2 || c.Blank != 1 || c.Judgments["1"]["29"] != -1 || c.Relevant != 1 {
		t.Fatalf("%+v %v", c, err)
	}
	for _, tc := range []struct {
		in   string
		f    QrelsFormat
		line int64
		off  int64
	}{
		{"1 0 10 1\n1 0 10\n", TRECQrels, 2, 9},
		{"1 10 x\n", CranQrels, 1, 0},
		{"1 10 1\n\n1 10 2\n", CranQrels, 3, 8},
		{"1 0 10 1\n", CranQrels, 1, 0},
	} {
		_, err := ReadQrels(strings.NewReader(tc.in), "bad.qrels", tc.f)
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Line != tc.line || ce.Offset != tc.off {
			t.Errorf("%q: %v", tc.in, err)
		}
	}
}

func FuzzIRecords(f *testing.F) {
	f.Add(cranLike)
	f.Add(".I 1\n.W\n")
	f.Add(".I\n")
	f.Add("x\n.I 1")
	f.Fuzz(func(t *testing.T, in string) {
		recs, err := ReadIRecords(strings.NewReader(in), "fuzz")
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("non-corrupt error %v", err)
			}
			return
		}
		for i, r := range recs {
			if r.Ordinal != i+1 || r.ID == "" || r.Offset < 0 || r.Offset >= int64(len(in)) {
				t.Fatalf("bad record %+v", r)
			}
		}
	})
}

func FuzzTRECDocs(f *testing.F) {
	f.Add(trecDocs)
	f.Add("<DOC><DOCNO>1</DOCNO>")
	f.Add("<DOC></DOC>")
	f.Fuzz(func(t *testing.T, in string) {
		docs, err := ReadTRECDocs(strings.NewReader(in), "fuzz")
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("non-corrupt error %v", err)
			}
			return
		}
		for _, d := range docs {
			if d.DocNo == "" || d.Text != collapseSpace(d.Text) {
				t.Fatalf("bad doc %+v", d)
			}
		}
	})
}

func FuzzTRECTopics(f *testing.F) {
	f.Add("<top>\n<num>1</num><title>\nX\n</title>\n</top>\n")
	f.Add("<top><num> Number: 3\n<title> a\n<desc> b\n<narr> c\n</top>")
	f.Add("<top><num>")
	f.Fuzz(func(t *testing.T, in string) {
		tops, err := ReadTRECTopics(strings.NewReader(in), "fuzz")
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("non-corrupt error %v", err)
			}
			return
		}
		for _, tp := range tops {
			if tp.Num == "" {
				t.Fatalf("bad topic %+v", tp)
			}
		}
	})
}

func FuzzQrels(f *testing.F) {
	f.Add("1 0 10 1\n\n2 0 3 0\n", false)
	f.Add("1 184 2 \n1 29 -1\n", true)
	f.Add("1 2\n", true)
	f.Add("1 0 10 0.000000\n1 0 11 2.5\n", false)
	f.Fuzz(func(t *testing.T, in string, cran bool) {
		format := TRECQrels
		if cran {
			format = CranQrels
		}
		q, err := ReadQrels(strings.NewReader(in), "fuzz", format)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("non-corrupt error %v", err)
			}
			return
		}
		n := 0
		for _, m := range q.Judgments {
			n += len(m)
		}
		if n != q.Lines || q.Relevant+q.NonRel != q.Lines {
			t.Fatalf("counts %+v vs %d pairs", q, n)
		}
	})
}

// TestReadQrelsFloatGrades: grades written as floats ("0.000000", "2.0",
// as tools exporting float relevance print them) parse as their integral
// values; a fractional grade is a corrupt line with its offset.
func TestReadQrelsFloatGrades(t *testing.T) {
	q, err := ReadQrels(strings.NewReader("1 0 10 0.000000\n1 0 11 2.0\n1 0 12 -1.000\n"), "f.qrels", TRECQrels)
	if err != nil {
		t.Fatal(err)
	}
	if q.Judgments["1"]["10"] != 0 || q.Judgments["1"]["11"] != 2 || q.Judgments["1"]["12"] != -1 || q.Relevant != 1 || q.NonRel != 2 {
		t.Fatalf("%+v", q)
	}
	for _, in := range []string{"1 0 10 1\n1 0 11 0.5\n", "1 0 10 1\n1 0 11 NaN\n", "1 0 10 1\n1 0 11 1e300\n"} {
		_, err := ReadQrels(strings.NewReader(in), "bad.qrels", TRECQrels)
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Line != 2 || ce.Offset != 9 {
			t.Errorf("%q: %v, want a corrupt line 2 at offset 9", in, err)
		}
	}
}
