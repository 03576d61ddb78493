package ingest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/internal/base"
)

// bridgeTree writes n declarations whose doc comments say "capital
// letters" and whose names hold Upper, n saying "whitespace" with Trim
// names, and filler declarations, so that capital↔upper and
// whitespace↔trim are the associations.
func bridgeTree(t *testing.T, n int) string {
	root := t.TempDir()
	src := "package p\n"
	for i := range n {
		x := string(rune('A' + i))
		src += fmt.Sprintf("\n// ToUpper%s maps letters to capital form.\nfunc ToUpper%s() {}\n", x, x)
		src += fmt.Sprintf("\n// Trim%s drops whitespace around text.\nfunc Trim%s() {}\n", x, x)
		src += fmt.Sprintf("\n// Filler%s counts apples and pears.\nfunc Filler%s() {}\n", x, x)
		src += fmt.Sprintf("\n// Other%s counts pears only.\nfunc Other%s() {}\n", x, x)
	}
	write(t, root, "p/p.go", src)
	write(t, root, "p/use.go", "package p\n\n// Shout says things.\nfunc Shout() { ToUpperA() }\n")
	return root
}

// TestBridgeBuildExpand: the association table learned from the
// collection links capital → upper and whitespace → trim with npmi
// weights equal to the formula's (reference: the counts of the tree,
// computed by hand), Expand adds them down-weighted to prose queries only,
// and a search with the bridge finds the declaration the words alone miss.
func TestBridgeBuildExpand(t *testing.T) {
	root := bridgeTree(t, 6)
	col, mf := openTestCollection(t)
	ctx := context.Background()
	if _, err := Index(ctx, col, mf, root, Options{}, Progress{}); err != nil {
		t.Fatal(err)
	}
	b, st, err := BuildBridge(ctx, col)
	if err != nil {
		t.Fatal(err)
	}
	if st.Decls != 25 { // 4·6 + Shout
		t.Fatalf("stats %+v, want 25 declarations", st)
	}
	// capital: c(w) = 6, c(upper) = 6, c(w,upper) = 6, N = 25:
	// npmi = log(25·6/36) / −log(6/25).
	want := math.Log(25.0*6/36) / -math.Log(6.0/25)
	got := b.Lookup("capital")
	i := slices.IndexFunc(got, func(a Assoc) bool { return a.Term == "upper" })
	if i < 0 || math.Abs(got[i].Weight-want) > 1.0/65535 {
		t.Fatalf("capital → %v, want upper with npmi %.4f", got, want)
	}
	if got[0].Weight != 1 && got[0].Weight < got[len(got)-1].Weight {
		t.Errorf("associations not best first: %v", got)
	}
	if a := b.Lookup("whitespace"); !slices.ContainsFunc(a, func(a Assoc) bool { return a.Term == "trim" }) {
		t.Errorf("whitespace → %v, want trim", a)
	}
	if b.Lookup("apples") != nil && slices.ContainsFunc(b.Lookup("apples"), func(a Assoc) bool { return a.Term == "upper" }) {
		t.Errorf("apples → %v: unrelated association", b.Lookup("apples"))
	}
	ex := b.Expand("make it capital")
	j := slices.IndexFunc(ex, func(e contract.WeightedTerm) bool { return e.Term == "upper" })
	if j < 0 || math.Abs(ex[j].Weight-ExpandWeight*got[i].Weight) > 1e-12 {
		t.Fatalf("Expand = %v, want upper at %.4f", ex, ExpandWeight*got[i].Weight)
	}
	if ex := b.Expand("ToUpperA"); ex != nil {
		t.Errorf("identifier query expanded: %v", ex)
	}
	if ex := b.Expand("upper capital"); slices.ContainsFunc(ex, func(e contract.WeightedTerm) bool { return e.Term == "upper" }) {
		t.Errorf("a query term was added again: %v", ex)
	}
	// Search: "shout capital" matches Shout by its own word; with the
	// bridge the ToUpper declarations come in too, with the expansion
	// shown on every hit.
	res, err := SearchWith(ctx, col, contract.Query{Text: "capital shout", TopK: 10}, SearchOptions{Bridge: b})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := SearchWith(ctx, col, contract.Query{Text: "capital shout", TopK: 10}, SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].Explain.Expansion == "" || plain.Hits[0].Explain.Expansion != "" {
		t.Fatalf("expansion not shown: %+v / %+v", res.Hits, plain.Hits)
	}
	// Round trip through the file format.
	path := filepath.Join(t.TempDir(), "code.bridge")
	if err := SaveBridge(path, b); err != nil {
		t.Fatal(err)
	}
	back, err := LoadBridge(path)
	if err != nil || !reflect.DeepEqual(back.words, b.words) {
		t.Fatalf("round trip: %v", err)
	}
	if missing, err := LoadBridge(path + ".none"); missing != nil || err != nil {
		t.Errorf("missing file: %v, %v", missing, err)
	}
}

// TestDecodeBridgeCorrupt: each malformation is a CorruptError at the
// offset of the damaged field.
func TestDecodeBridgeCorrupt(t *testing.T) {
	b := &Bridge{words: map[string][]Assoc{"capital": {{"upper", 0.5}}, "space": {{"trim", 1}, {"white", 0.25}}}}
	good, _ := b.MarshalBinary()
	if _, err := DecodeBridge(good, "x"); err != nil {
		t.Fatal(err)
	}
	mod := func(f func(d []byte) []byte) []byte { return f(slices.Clone(good)) }
	recrc := func(d []byte) []byte {
		c := crcOf(d[bridgeHeaderSize:])
		d[28], d[29], d[30], d[31] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
		return d
	}
	for _, c := range []struct {
		name string
		data []byte
		off  int64
	}{
		{"short", good[:10], 0},
		{"magic", mod(func(d []byte) []byte { d[0] = 'X'; return d }), 0},
		{"version", mod(func(d []byte) []byte { d[8] = 9; return d }), 8},
		{"truncated body", good[:len(good)-1], 20},
		{"checksum", mod(func(d []byte) []byte { d[len(d)-1] ^= 1; return d }), 28},
		{"zero weight", mod(func(d []byte) []byte { d[len(d)-1], d[len(d)-2] = 0, 0; return recrc(d) }), int64(len(good) - 2)},
		{"word order", mod(func(d []byte) []byte { d[bridgeHeaderSize+1] = 'z'; return recrc(d) }), int64(bridgeHeaderSize + 1 + 7 + 1 + 1 + 5 + 2)},
	} {
		_, err := DecodeBridge(c.data, "t.bridge")
		var ce *base.CorruptError
		if !errors.As(err, &ce) || !errors.Is(err, base.ErrCorrupt) || ce.Offset != c.off || ce.Path != "t.bridge" {
			t.Errorf("%s: %v, want a corrupt error at offset %d", c.name, err, c.off)
		}
	}
}

// FuzzDecodeBridge: DecodeBridge never panics; what it accepts
// re-encodes to the same bytes.
func FuzzDecodeBridge(f *testing.F) {
	b := &Bridge{words: map[string][]Assoc{"capital": {{"upper", 0.5}}, "space": {{"trim", 1}, {"white", 0.25}}}}
	good, _ := b.MarshalBinary()
	empty, _ := (&Bridge{words: map[string][]Assoc{}}).MarshalBinary()
	f.Add(good)
	f.Add(empty)
	f.Add(good[:40])
	f.Add([]byte("STRBRIDG"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := DecodeBridge(data, "fuzz")
		if err != nil {
			if !errors.Is(err, base.ErrCorrupt) {
				t.Fatalf("non-corrupt error %v", err)
			}
			return
		}
		again, err := b.MarshalBinary()
		if err != nil || string(again) != string(data) {
			t.Fatalf("re-encoding differs (%v)", err)
		}
	})
}
