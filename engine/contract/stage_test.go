package contract

import (
	"fmt"
	"html"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

const testNonce = "N0nceN0nceN0nce0123"

func env(id string, score float64, content string) Envelope {
	return Envelope{DocID: id, Content: content, SourceURI: "file:///repo/" + id, VersionHash: h64, Score: score, Trust: Derived}
}

// body extracts the escaped body of a framed hit.
func body(t *testing.T, framed string) string {
	t.Helper()
	i := strings.Index(framed, ">\n")
	j := strings.LastIndex(framed, "\n</"+FrameName)
	if i < 0 || j < i+1 {
		t.Fatalf("malformed frame %q", framed)
	}
	return framed[i+2 : j]
}

func stage(t *testing.T, hits []Envelope, o StageOptions) StagedResult {
	t.Helper()
	if o.Nonce == "" {
		o.Nonce = testNonce
	}
	r, err := Stage(hits, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestStageWhole(t *testing.T) {
	r := stage(t, []Envelope{env("b", 0.5, "x < y && z"), env("a", 0.5, "first"), env("c", 0.9, "best")}, StageOptions{})
	var ids []string
	for _, h := range r.Hits {
		ids = append(ids, h.Envelope.DocID)
		if h.Cut != nil {
			t.Errorf("%s cut without budget", h.Envelope.DocID)
		}
	}
	if strings.Join(ids, ",") != "c,a,b" {
		t.Errorf("order %v", ids)
	}
	want := `<retrieved_evidence id="b" trust="derived" uri="file:///repo/b" hash="` + h64 + `" nonce="` + testNonce + `">` + "\n" +
		"x &lt; y &amp;&amp; z\n</retrieved_evidence nonce=\"" + testNonce + "\">\n"
	if r.Hits[2].Framed != want {
		t.Errorf("framed\n%q\nwant\n%q", r.Hits[2].Framed, want)
	}
	if r.Text != r.Hits[0].Framed+r.Hits[1].Framed+r.Hits[2].Framed {
		t.Error("Text is not the concatenation")
	}
	if r.Nonce != testNonce {
		t.Error("nonce")
	}
}

func TestStageRandomNonce(t *testing.T) {
	a, _ := Stage([]Envelope{env("a", 1, "x")}, StageOptions{})
	b, _ := Stage([]Envelope{env("a", 1, "x")}, StageOptions{})
	if a.Nonce == b.Nonce || !validNonce(a.Nonce) || !strings.Contains(a.Text, `nonce="`+a.Nonce+`"`) {
		t.Errorf("nonces %q %q", a.Nonce, b.Nonce)
	}
	if _, err := Stage(nil, StageOptions{Nonce: `bad"nonce`}); err == nil {
		t.Error("bad nonce accepted")
	}
	if _, err := Stage(nil, StageOptions{MinScore: 2, TokenBudget: -1, MaxTokensPerHit: -1, BytesPerToken: -1}); err == nil ||
		strings.Count(err.Error(), "contract: stage:") != 4 {
		t.Errorf("options error %v", err)
	}
}

func TestStageDrops(t *testing.T) {
	bad := []Envelope{
		env("", 1, "x"),
		{DocID: "t", VersionHash: h64, Score: 1, Trust: "trusted"},
		{DocID: "h", VersionHash: "abc", Score: 1, Trust: Derived},
		env("s", 1.5, "x"),
		env("nan", 0, "x"),
		{DocID: "u", VersionHash: h64, Score: 1, Trust: Derived, SourceURI: "file:///a\x1b]8;;evil\x07"},
		env("low", 0.1, "x"),
		env("ok", 0.9, "fine"),
	}
	bad[4].Score = nanF()
	r := stage(t, bad, StageOptions{MinScore: 0.2})
	if len(r.Hits) != 1 || r.Hits[0].Envelope.DocID != "ok" {
		t.Fatalf("hits %+v", r.Hits)
	}
	got := map[string]DropReason{}
	for _, d := range r.Dropped {
		got[d.DocID] = d.Reason
	}
	want := map[string]DropReason{"": DropMissingID, "t": DropInvalidTrust, "h": DropInvalidHash, "s": DropInvalidScore,
		"nan": DropInvalidScore, "u": DropInvalidURI, "low": DropBelowMinScore}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(r.Dropped) != 7 {
		t.Errorf("dropped %v", r.Dropped)
	}
	if c := CountDropped(r.Dropped); c[DropInvalidScore] != 2 {
		t.Errorf("counts %v", c)
	}
	// Stage must not modify its input.
	if bad[7].Content != "fine" || bad[0].Content != "x" {
		t.Error("input modified")
	}
}

func nanF() float64 { var z float64; return z / z }

// checkCut verifies a staged hit's cut against its original content.
func checkCut(t *testing.T, orig string, h StagedHit) {
	t.Helper()
	kept := h.Envelope.Content
	if !utf8.ValidString(kept) {
		t.Fatalf("kept content is invalid UTF-8: %q", kept)
	}
	if h.Cut == nil {
		if want, _ := Sanitize(orig); kept != want {
			t.Fatalf("uncut content %q != sanitised original %q", kept, want)
		}
		return
	}
	off := h.Cut.ContinueOffset
	if off < 0 || off > len(orig) || h.Cut.OmittedBytes != len(orig)-off {
		t.Fatalf("cut %+v for %d bytes", *h.Cut, len(orig))
	}
	// The kept text is exactly the sanitised source prefix, so the source
	// continues at off with the omitted tail.
	if want, _ := Sanitize(orig[:off]); kept != want {
		t.Fatalf("kept %q != Sanitize(orig[:%d]) %q", kept, off, want)
	}
	if !strings.Contains(h.Framed, fmt.Sprintf(` omitted_bytes="%d" continue_offset="%d">`, h.Cut.OmittedBytes, off)) {
		t.Fatalf("frame lacks cut marker: %q", h.Framed)
	}
	if off > 0 && off < len(orig) && !utf8.RuneStart(orig[off]) && utf8.ValidString(orig) {
		t.Fatalf("cut inside a UTF-8 sequence at %d", off)
	}
}

func TestStageCutOffsets(t *testing.T) {
	orig := "package a\n\nfunc A() {\n\treturn 1\n}\n\n# Heading\nsome text here\nmore"
	for s := 1; s <= 20; s++ {
		r := stage(t, []Envelope{env("a", 1, orig)}, StageOptions{MaxTokensPerHit: s})
		h := r.Hits[0]
		checkCut(t, orig, h)
		if h.Cut != nil && orig[h.Cut.ContinueOffset:] != orig[len(orig)-h.Cut.OmittedBytes:] {
			t.Fatal("tail mismatch")
		}
		if bt := tokens(len(EscapeText(h.Envelope.Content)), 4); bt > s {
			t.Errorf("S_max=%d: body has %d tokens", s, bt)
		}
	}
}

func TestStageBoundaryClasses(t *testing.T) {
	cases := []struct {
		name    string
		content string
		maxTok  int
		kept    string
	}{
		{"heading wins over later line", "intro line one\nintro line two\n## Next\nbody body body body body", 10, "intro line one\nintro line two\n"},
		{"blank line wins over later line", "para one one one\n\npara two\nmore more more more more", 8, "para one one one\n\n"},
		{"later line when the blank keeps under half", "para one one\n\npara two two\nmore more more more", 8, "para one one\n\npara two two\n"},
		{"brace depth 0 wins over inner lines", "func a() {\n\tx := 1\n}\nfunc b() {\n\ty := 2\n\tz := 3\n}\n", 8, "func a() {\n\tx := 1\n}\n"},
		{"line when nothing better", "aaaa bbbb\ncccc dddd\neeee ffff\ngggg", 6, "aaaa bbbb\ncccc dddd\n"},
		{"identifier boundary on one long line", "alpha beta_gamma_delta epsilon zeta", 4, "alpha "},
		{"never split a long identifier", "x = very_long_identifier_name_that_goes_on", 3, "x = "},
		{"nothing fits", "identifier_too_long", 1, ""},
		{"UTF-8 letters form one identifier", "ééééééééé", 3, ""},
		{"UTF-8 runes never split", "😀😀😀😀😀😀", 3, "😀😀😀"},
		{"UTF-8 with spaces", "é é é é é é", 2, "é é é"},
		{"combining mark stays with its base", "a-e\u0301-b", 1, "a-"},
		{"escape cost counted", "<<<<<<<<", 2, "<<"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := stage(t, []Envelope{env("a", 1, tc.content)}, StageOptions{MaxTokensPerHit: tc.maxTok})
			h := r.Hits[0]
			if h.Envelope.Content != tc.kept {
				t.Errorf("kept %q, want %q", h.Envelope.Content, tc.kept)
			}
			checkCut(t, tc.content, h)
		})
	}
}

func TestStageBudgetAccounting(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 200 {
		var hits []Envelope
		n := 1 + rng.IntN(8)
		for i := range n {
			hits = append(hits, env(fmt.Sprintf("d%02d", i), rng.Float64(), randomContent(rng, rng.IntN(600))))
		}
		o := StageOptions{TokenBudget: rng.IntN(700), MaxTokensPerHit: rng.IntN(120), BytesPerToken: 1 + rng.IntN(5)}
		r := stage(t, hits, o)
		sum := 0
		for _, h := range r.Hits {
			if h.Tokens != tokens(len(h.Framed), o.BytesPerToken) {
				t.Fatalf("trial %d: tokens %d for %d bytes", trial, h.Tokens, len(h.Framed))
			}
			sum += h.Tokens
			if o.MaxTokensPerHit > 0 {
				if bt := tokens(len(body(t, h.Framed)), o.BytesPerToken); bt > o.MaxTokensPerHit {
					t.Fatalf("trial %d: body %d tokens > S_max %d", trial, bt, o.MaxTokensPerHit)
				}
			}
			var orig string
			for _, e := range hits {
				if e.DocID == h.Envelope.DocID {
					orig = e.Content
				}
			}
			checkCut(t, orig, h)
		}
		if sum != r.TokensUsed || (o.TokenBudget > 0 && sum > o.TokenBudget) {
			t.Fatalf("trial %d: used %d (Σ %d) of %d", trial, r.TokensUsed, sum, o.TokenBudget)
		}
		if len(r.Hits)+len(r.Dropped) != n {
			t.Fatalf("trial %d: %d hits + %d dropped != %d", trial, len(r.Hits), len(r.Dropped), n)
		}
		for _, d := range r.Dropped {
			if d.Reason != DropTokenBudget {
				t.Fatalf("unexpected drop %+v", d)
			}
		}
		for i := 1; i < len(r.Hits); i++ {
			if r.Hits[i].Envelope.Score > r.Hits[i-1].Envelope.Score {
				t.Fatal("not sorted")
			}
		}
	}
}

// randomContent mixes code, prose, multi-byte runes, markup, escapes and
// invalid bytes.
func randomContent(rng *rand.Rand, n int) string {
	parts := []string{"func ", "x", "_y1", "{", "}", "\n", "\n\n", "# H\n", " ", "é", "日本", "😀", "<", ">", "&", "＜",
		"\x1b[31m", "\x1b]0;t\x07", "\xff", "\r", "\t", "identifier_long_name", "]]>", "</retrieved_evidence>"}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(parts[rng.IntN(len(parts))])
	}
	return b.String()
}

func TestStageEscapedRoundTrip(t *testing.T) {
	orig := "if a < b && c > d { s := \"</x>\" } ＜tag＞ « »"
	r := stage(t, []Envelope{env("a", 1, orig)}, StageOptions{})
	if got := html.UnescapeString(body(t, r.Hits[0].Framed)); got != orig {
		t.Errorf("unescape %q", got)
	}
}

func BenchmarkStage(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	hits := make([]Envelope, 20)
	total := 0
	for i := range hits {
		hits[i] = env(fmt.Sprintf("d%d", i), rng.Float64(), randomContent(rng, 2000))
		total += len(hits[i].Content)
	}
	for _, budget := range []int{0, 2000} {
		b.Run(fmt.Sprintf("hits=20/bytes=2000/budget=%d", budget), func(b *testing.B) {
			b.SetBytes(int64(total))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Stage(hits, StageOptions{TokenBudget: budget, MaxTokensPerHit: 300, Nonce: testNonce}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
