package contract

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// FuzzAppendJSONString: the hand-written string encoder writes exactly
// the bytes marshalNoHTML (encoding/json, HTML escaping off) writes, for
// a string and for a two-element string array, whatever the bytes
// (control characters, quotes, invalid UTF-8, U+2028/2029, HTML).
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", `a "quoted" \ back\slash`, "<a href='x'>&amp;</a>",
		"\x00\x01\x07\b\f\n\r\t\x1f\x7f", "\u2028 line \u2029 para", "\xff\xfe bad \xc3", "é 漢字 🙂",
		"\xed\xa0\x80 surrogate", "\xf4\x90\x80\x80 beyond"} {
		f.Add(s, "x")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		want, err := marshalNoHTML(a)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, a); !bytes.Equal(got, want) {
			t.Fatalf("string %q:\n got %s\nwant %s", a, got, want)
		}
		want, err = marshalNoHTML([]string{a, b})
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONStrings(nil, []string{a, b}); !bytes.Equal(got, want) {
			t.Fatalf("strings %q, %q:\n got %s\nwant %s", a, b, got, want)
		}
	})
}

// marshalNoHTML, the reference, is json.Marshal without HTML escaping
// ('<', '>' and '&' stay one byte each), as Value.MarshalJSON wrote
// strings before appendJSONString.
func marshalNoHTML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// TestPlain8: the word-at-a-time test agrees with the byte-by-byte rule
// for every byte value at every position, and for random words.
func TestPlain8(t *testing.T) {
	plain := func(b byte) bool { return b >= 0x20 && b < 0x80 && b != '"' && b != '\\' }
	ref := func(s string) bool {
		for i := range len(s) {
			if !plain(s[i]) {
				return false
			}
		}
		return true
	}
	for p := range 8 {
		for b := range 256 {
			for _, fill := range []byte{'a', ' ', '~', '!', '#', '[', ']'} {
				w := bytes.Repeat([]byte{fill}, 8)
				w[p] = byte(b)
				if got, want := plain8(binary.LittleEndian.Uint64(w)), ref(string(w)); got != want {
					t.Fatalf("%q: plain8 %v, want %v", w, got, want)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 5))
	w := make([]byte, 8)
	for range 200000 {
		for i := range w {
			w[i] = byte(r.IntN(256))
			if r.IntN(2) == 0 {
				w[i] = byte(0x20 + r.IntN(0x60))
			}
		}
		if got, want := plain8(binary.LittleEndian.Uint64(w)), ref(string(w)); got != want {
			t.Fatalf("%q: plain8 %v, want %v", w, got, want)
		}
	}
}
