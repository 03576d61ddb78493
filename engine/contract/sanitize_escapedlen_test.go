package contract

import "testing"

func FuzzEscapedLen(f *testing.F) {
	for _, s := range []string{"", "a<b>&c", "\uff1cx\uff1e", "\xff\xfe", "é\u2039", "plain text\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := EscapedLen(s), len(EscapeText(s)); got != want {
			t.Fatalf("EscapedLen(%q) = %d, len(EscapeText) = %d", s, got, want)
		}
	})
}
