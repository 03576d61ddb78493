package text

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// render prints tokens as "term@pos" with a "+" prefix for parts.
func render(toks []Token) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 {
			b.WriteByte(' ')
		}
		if t.Part {
			b.WriteByte('+')
		}
		fmt.Fprintf(&b, "%s@%d", t.Term, t.Pos)
	}
	return b.String()
}

func TestCodeIdentifiers(t *testing.T) {
	a := MustNew(CodeOptions())
	cases := []struct{ in, want string }{
		{"verify_user_token_v2", "verify_user_token_v2@0 +verify@0 +user@0 +token@0 +v2@0"},
		{"getUserName", "getusername@0 +get@0 +user@0 +name@0"},
		{"HTTPRequest", "httprequest@0 +http@0 +request@0"},
		{"kebab-case", "kebab-case@0 +kebab@0 +case@0"},
		{"ERR_CIPHER_ALLOC_FAIL", "err_cipher_alloc_fail@0 +err@0 +cipher@0 +alloc@0 +fail@0"},
		{"parseHTTP2Request", "parsehttp2request@0 +parse@0 +http2@0 +request@0"},
		{"utf8Decode md5sum", "utf8decode@0 +utf8@0 +decode@0 md5sum@1"},
		{"x86_64", "x86_64@0 +x86@0 +64@0"},
		// A plain word yields only itself (no duplicate part).
		{"hello", "hello@0"},
		{"Hello World", "hello@0 world@1"},
		// Repeated parts are emitted once per identifier.
		{"user_user_id", "user_user_id@0 +user@0 +id@0"},
		// Positions count original tokens; parts do not advance them.
		{"a.getUserName(x) + y_z", "a@0 getusername@1 +get@1 +user@1 +name@1 x@2 y_z@3 +y@3 +z@3"},
		// Leading/trailing separators and dunder names.
		{"__init__ _private", "__init__@0 +init@0 _private@1 +private@1"},
		// Hyphen joins only between letters/digits.
		{"--flag a - b x-", "flag@0 a@1 b@2 x@3"},
		// Underscore-only runs are not tokens.
		{"___ foo", "foo@0"},
		// Lower-casing must not lose the case split (pitfall: lower first).
		{"XMLHttpRequest", "xmlhttprequest@0 +xml@0 +http@0 +request@0"},
		{"IOError", "ioerror@0 +io@0 +error@0"},
		// Unicode letters, Unicode lower-casing.
		{"ÉcoleNormale straße", "écolenormale@0 +école@0 +normale@0 straße@1"},
		{"ПолучитьИмя", "получитьимя@0 +получить@0 +имя@0"},
	}
	for _, c := range cases {
		if got := render(a.Analyze(c.in)); got != c.want {
			t.Errorf("Analyze(%q)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

func TestOffsets(t *testing.T) {
	a := MustNew(CodeOptions())
	in := "call getUserName now"
	for _, tok := range a.Analyze(in) {
		if got := strings.ToLower(in[tok.Start:tok.End]); got != tok.Term {
			t.Errorf("token %+v: text[%d:%d]=%q", tok, tok.Start, tok.End, got)
		}
	}
}

func TestProse(t *testing.T) {
	a := MustNew(ProseOptions())
	cases := []struct{ in, want string }{
		// Stop-words consume a position (gap) but are not emitted.
		{"The running of the bulls", "run@1 bull@4"},
		{"verify_user_token", "verifi@0 user@1 token@2"},
		{"Connections CONNECTED", "connect@0 connect@1"},
	}
	for _, c := range cases {
		if got := render(a.Analyze(c.in)); got != c.want {
			t.Errorf("Analyze(%q)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	ru := MustNew(Options{StopWords: "russian", Stemmer: "russian"})
	if got := render(ru.Analyze("и книгами")); got != "книг@1" {
		t.Errorf("russian: got %s", got)
	}
}

func TestMaxTokenRunes(t *testing.T) {
	a := MustNew(Options{SplitIdentifiers: true, MaxTokenRunes: 5})
	// An overlong plain token consumes no position; an overlong identifier
	// is dropped but its short parts survive at its position.
	got := render(a.Analyze("abcdefgh getUser zz"))
	if want := "+get@0 +user@0 zz@1"; got != want {
		t.Errorf("got %s want %s", got, want)
	}
	b := MustNew(Options{MaxTokenRunes: 3})
	if got := render(b.Analyze("ééé éééé")); got != "ééé@0" {
		t.Errorf("rune counting: got %s", got)
	}
}

var oracleRe = regexp.MustCompile(`[a-z0-9]+`)

func TestOracleMatchesRegexp(t *testing.T) {
	a := MustNew(OracleOptions())
	inputs := []string{
		"Experimental investigation of the aerodynamics of a wing in a slipstream .",
		"getUserName_v2 HTTP/1.1 x=3.5e-10, Straße ÉCOLE naïve K\u212a",
		"", "   ", "a", "héllo wörld 123abc",
	}
	for _, in := range inputs {
		want := oracleRe.FindAllString(strings.ToLower(in), -1)
		got := a.Terms(in)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%q: got %q want %q", in, got, want)
		}
		for i, tok := range a.Analyze(in) {
			if tok.Pos != i || tok.Part {
				t.Errorf("%q: token %d has pos %d part %v", in, i, tok.Pos, tok.Part)
			}
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	err := Options{Mode: "x", StopWords: "klingon", Stemmer: "latin", MaxTokenRunes: -1}.Validate()
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("want ErrInvalidOptions, got %v", err)
	}
	for _, want := range []string{"Mode", "StopWords", "Stemmer", "MaxTokenRunes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not report %s", err, want)
		}
	}
	if _, err := New(Options{Mode: ModeOracle, SplitIdentifiers: true}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("oracle+split: got %v", err)
	}
	for _, o := range []Options{{}, CodeOptions(), ProseOptions(), OracleOptions()} {
		if _, err := New(o); err != nil {
			t.Errorf("New(%+v): %v", o, err)
		}
	}
}

// FuzzAnalyze checks invariants on arbitrary input: no panic, positions
// non-decreasing and dense from 0, offsets in range, every whole token
// (after lower-casing) is the text at its offsets, and parts follow their
// whole at the same position.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{"verify_user_token_v2", "getUserName HTTPRequest", "kebab-case ERR_X", "\xff\xfe_a-", "ПолучитьИмя x", "İstanbul ǅemal"} {
		f.Add(s)
	}
	code := MustNew(CodeOptions())
	plain := MustNew(Options{})
	f.Fuzz(func(t *testing.T, s string) {
		for _, a := range []*Analyzer{code, plain} {
			toks := a.Analyze(s)
			last := -1
			for _, tok := range toks {
				if tok.Pos < last || tok.Pos > last+1 {
					t.Fatalf("%q: positions not dense: %s", s, render(toks))
				}
				last = tok.Pos
				if tok.Start < 0 || tok.End > len(s) || tok.Start >= tok.End {
					t.Fatalf("%q: bad offsets %+v", s, tok)
				}
				if tok.Term == "" || !utf8.ValidString(tok.Term) && utf8.ValidString(s) {
					t.Fatalf("%q: bad term %+v", s, tok)
				}
				if !tok.Part && strings.ToLower(s[tok.Start:tok.End]) != tok.Term {
					t.Fatalf("%q: whole %+v is not its text", s, tok)
				}
			}
		}
	})
}
