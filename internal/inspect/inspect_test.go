package inspect

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func sample() *Info {
	in := &Info{Path: "f", Format: "X", Version: 2, Size: 100}
	in.Add("magic", "X", 0)
	in.Add("derived", 7, -1)
	crc := uint32(0xdeadbeef)
	in.AddSection("a", 16, 20, &crc)
	in.AddSection("b", 40, 10, nil)
	in.Check("file", 92, 0, 92, 1, 1)
	in.Records = []Record{{Offset: 0, Length: 18, Seq: 1, Type: "t", Summary: "s"}}
	child := &Info{Path: "child", Format: "Y", Version: 1, Size: 20}
	child.Add("n", 3, 4)
	child.Check("file", 12, 0, 12, 5, 5)
	child.Shift(16)
	in.Children = append(in.Children, child)
	return in
}

func TestCheckAndOK(t *testing.T) {
	in := sample()
	if !in.OK() || !in.ChecksumsOK() {
		t.Fatalf("fresh sample not OK: %+v", in.Problems)
	}
	// A mismatch over a section is reported at the section's start; a
	// whole-file one (from byte 0) at the stored checksum.
	if in.Check("section a", 80, 16, 36, 1, 2) || len(in.Problems) != 1 || in.Problems[0].Offset != 16 {
		t.Fatalf("%+v", in.Problems)
	}
	in.Check("file2", 96, 0, 96, 1, 2)
	if in.Problems[1].Offset != 96 || in.OK() || in.ChecksumsOK() {
		t.Fatalf("%+v", in.Problems)
	}
	// A child's failure fails the parent.
	p := sample()
	p.Children[0].Check("x", 1, 2, 3, 4, 5)
	if p.OK() || p.ChecksumsOK() {
		t.Fatal("child mismatch not propagated")
	}
	// Warnings alone do not fail.
	w := sample()
	w.Warnf(3, "torn tail")
	if !w.OK() {
		t.Fatal("warning failed the file")
	}
}

func TestShift(t *testing.T) {
	in := sample()
	c := in.Children[0]
	if c.Offset != 16 || c.Header[0].Offset != 20 || c.Checksums[0].Offset != 28 || c.Checksums[0].Start != 16 || c.Checksums[0].End != 28 {
		t.Fatalf("shifted child %+v", c)
	}
	in.Problemf(-1, "whole file")
	in.Problemf(5, "at five")
	in.Header = append(in.Header, Field{Name: "d", Offset: -1})
	in.Shift(100)
	if in.Problems[0].Offset != -1 || in.Problems[1].Offset != 105 || in.Header[len(in.Header)-1].Offset != -1 ||
		in.Sections[0].Offset != 116 || in.Records[0].Offset != 100 || in.Children[0].Offset != 116 {
		t.Fatalf("shift: %+v", in)
	}
}

func TestText(t *testing.T) {
	in := sample()
	in.Check("section b", 84, 40, 50, 0xaa, 0xbb)
	in.Warnf(60, "torn tail here")
	var b bytes.Buffer
	if err := WriteText(&b, in); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"f: X version 2, 100 bytes  [PROBLEMS]", "magic", "@0", "deadbeef",
		"MISMATCH", "[40, 50)", "at byte 40: section b CRC32C mismatch", "at byte 60: torn tail here",
		"    child: Y version 1, 20 bytes at offset 16  [OK]", "SUMMARY"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	for i, l := range strings.Split(out, "\n") {
		if strings.HasSuffix(l, " ") {
			t.Errorf("line %d has trailing spaces: %q", i, l)
		}
	}
	// Section table columns are aligned: the offsets of rows a and b
	// start in the same column.
	var rowA, rowB string
	for _, l := range strings.Split(out, "\n") {
		switch f := strings.Fields(l); {
		case len(f) == 4 && f[0] == "a":
			rowA = l
		case len(f) == 4 && f[0] == "b":
			rowB = l
		}
	}
	if rowA == "" || rowB == "" || strings.Index(rowA, "16") != strings.Index(rowB, "40") {
		t.Errorf("section rows not aligned:\n%s\n%s", rowA, rowB)
	}
}

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, []*Info{sample()}); err != nil {
		t.Fatal(err)
	}
	var back []*Info
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != 1 || back[0].Format != "X" || *back[0].Sections[0].CRC != 0xdeadbeef || len(back[0].Children) != 1 ||
		back[0].Children[0].Offset != 16 || !back[0].OK() {
		t.Fatalf("round trip %+v", back)
	}
	b.Reset()
	WriteJSON(&b, nil)
	if strings.TrimSpace(b.String()) != "[]" {
		t.Fatalf("nil list: %q", b.String())
	}
}

func TestU32U64Within(t *testing.T) {
	b := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}
	if v, ok := U32(b, 0); !ok || v != 0x04030201 {
		t.Fatal(v)
	}
	if _, ok := U32(b, 6); ok {
		t.Fatal("U32 past the end")
	}
	if _, ok := U32(b, -1); ok {
		t.Fatal("negative offset")
	}
	if v, ok := U64(b, 1); !ok || v != 0x0908070605040302 {
		t.Fatalf("%x", v)
	}
	if _, ok := U64(b, 2); ok {
		t.Fatal("U64 past the end")
	}
	for _, c := range []struct {
		off, n uint64
		lo, hi int64
		want   bool
	}{{0, 0, 0, 0, true}, {2, 3, 0, 5, true}, {2, 4, 0, 5, false}, {1, 1, 2, 5, false},
		{1 << 63, 1 << 63, 0, 10, false}, {5, ^uint64(0), 0, 10, false}, {0, 1, 3, 2, false}} {
		if got := Within(c.off, c.n, c.lo, c.hi); got != c.want {
			t.Errorf("Within(%d, %d, %d, %d) = %v", c.off, c.n, c.lo, c.hi, got)
		}
	}
}
