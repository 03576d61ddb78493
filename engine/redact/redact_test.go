package redact

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stratasearch/strata/engine/redact/redacttest"
)

func TestRedactSecretsTable(t *testing.T) {
	for _, p := range redacttest.PlantedSecrets() {
		r := Secrets(p.Text)
		if strings.Contains(r.Text, p.Secret) {
			t.Errorf("%s: secret survives: %q", p.Name, r.Text)
			continue
		}
		if r.Count != 1 {
			t.Errorf("%s: Count = %d, want 1 (%q, rules %v)", p.Name, r.Count, r.Text, r.Rules)
		}
		if p.Rule != "" && !slices.Equal(r.Rules, []string{p.Rule}) {
			t.Errorf("%s: rules %v, want [%s] (%q)", p.Name, r.Rules, p.Rule, r.Text)
		}
		if len(r.Rules) == 1 && !strings.Contains(r.Text, "[REDACTED:"+r.Rules[0]+"]") {
			t.Errorf("%s: no marker in %q", p.Name, r.Text)
		}
	}
	for _, s := range redacttest.CleanTexts {
		if r := Secrets(s); r.Count != 0 || r.Text != s {
			t.Errorf("clean text changed: %q → %q (%v)", s, r.Text, r.Rules)
		}
	}
	// Several secrets in one text, including overlapping detections.
	ps := redacttest.PlantedSecrets()
	all := ""
	for _, p := range ps {
		all += p.Text + "\n"
	}
	r := Secrets(all)
	for _, p := range ps {
		if strings.Contains(r.Text, p.Secret) {
			t.Errorf("combined: %s survives", p.Name)
		}
	}
	if r.Count != len(ps) {
		t.Errorf("combined: Count = %d, want %d\n%s", r.Count, len(ps), r.Text)
	}
}

func FuzzSecrets(f *testing.F) {
	for _, p := range redacttest.PlantedSecrets() {
		f.Add(p.Text)
	}
	for _, s := range redacttest.CleanTexts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := Secrets(s)
		if r.Count == 0 {
			if r.Text != s {
				t.Fatalf("no redaction but text changed")
			}
			return
		}
		if got := strings.Count(r.Text, "[REDACTED:"); got < r.Count {
			t.Fatalf("%d markers for %d redactions", got, r.Count)
		}
		if !slices.IsSorted(r.Rules) {
			t.Fatalf("rules not sorted: %v", r.Rules)
		}
	})
}

func BenchmarkSecrets(b *testing.B) {
	clean := strings.Repeat(redacttest.CleanTexts[0]+redacttest.CleanTexts[1], 8)
	ps := redacttest.PlantedSecrets()
	dirty := clean + ps[0].Text + ps[10].Text + ps[16].Text
	cases := []struct{ name, s string }{{"kind=clean", clean}, {"kind=secrets", dirty}}
	// Real code: net/http/transport.go of the toolchain, when present.
	if src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "net", "http", "transport.go")); err == nil {
		cases = append(cases, struct{ name, s string }{"kind=go-source", string(src)})
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.s)))
			b.ReportAllocs()
			for b.Loop() {
				Secrets(bc.s)
			}
		})
	}
}

// TestRedactURIKeepsPasswords (review F2): passwords and tokens are removed
// also from URIs url.Parse rejects and from userinfo where url.Parse does
// not look for it (nested schemes, scheme-relative references), from a
// token used as the user name and from the fragment.
func TestRedactURIKeepsPasswords(t *testing.T) {
	pat := redacttest.PlantedSecrets()[5].Secret // github-pat
	cases := []struct{ name, uri, secret string }{
		// '#' in the password: url.Parse cuts the fragment first, the
		// authority "alice:pa" has a non-numeric port and Parse fails.
		{"hash-in-password", "https://alice:pa#ssw0rd-9x@git.example.com/repo.git", "pa#ssw0rd-9x"},
		// A '%' not followed by two hex redacttest.Digits: invalid escape, Parse fails.
		{"bad-escape", "postgres://app:s3cr%t-pw-77@db.example.com/prod", "s3cr%t-pw-77"},
		// JDBC and other nested schemes parse as opaque: User is nil.
		{"jdbc", "jdbc:postgresql://app:Hunter2-jdbc-pw@db.example.com:5432/prod", "Hunter2-jdbc-pw"},
		// Scheme-relative reference (no "://").
		{"scheme-relative", "//alice:Tr0ub4dor-rel-9x@git.example.com/repo.git", "Tr0ub4dor-rel-9x"},
		// A token as the user name (git clone https://<PAT>@github.com/...):
		// only a password is dropped, the user name is kept verbatim.
		{"token-as-username", "https://" + pat + "@github.com/team/repo.git", pat},
		// OAuth implicit flow: the token is in the fragment, never looked at.
		{"fragment-token", "https://app.example.com/callback#access_token=" + pat + "&state=x", pat},
	}
	for _, tc := range cases {
		got, n, _ := URI(tc.uri)
		if strings.Contains(got, tc.secret) {
			t.Errorf("%s: URI(%q) = %q (%d redactions): secret kept", tc.name, tc.uri, got, n)
		}
	}
}

// TestRedactURIRewritesPath (review F5): removing a password changes
// nothing else: no re-escaping of the path, no lower-casing of the scheme.
func TestRedactURIRewritesPath(t *testing.T) {
	for _, tc := range []struct{ uri, want string }{
		{"https://alice:pw-Tr0ub4dor@host.example.com/My Docs/a b.md", "https://alice@host.example.com/My Docs/a b.md"},
		{"HTTPS://alice:pw-Tr0ub4dor@host.example.com/x.md", "HTTPS://alice@host.example.com/x.md"},
	} {
		if got, _, _ := URI(tc.uri); got != tc.want {
			t.Errorf("URI(%q) = %q, want %q (only the password removed)", tc.uri, got, tc.want)
		}
	}
}

// TestRedactURIQueryOverreach (review F4): the password-assignment rule's
// value class [^\s"'`,;]{4,200} does not stop at '&'; query parameters are
// redacted one by one, so ?api_key=x&page=3 keeps page=3.
func TestRedactURIQueryOverreach(t *testing.T) {
	got, _, _ := URI("https://files.example.com/report?api_key=hunter2-key&page=3&lang=en")
	if !strings.Contains(got, "page=3") || !strings.Contains(got, "lang=en") {
		t.Errorf("redactURI dropped the parameters after api_key: %q", got)
	}
}

// TestRedactURISecretInPath (review F6): secrets that live in the path (a
// Slack webhook URL, which the content rules redact as slack-webhook-url)
// are removed from the stored SourceURI too.
func TestRedactURISecretInPath(t *testing.T) {
	const hook = "https://hooks.slack.com/services/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"
	if r := Secrets("notify " + hook + " on failure"); r.Count == 0 {
		t.Fatal("content rules do not flag the sample webhook; test input needs adjusting")
	}
	if got, _, _ := URI(hook); strings.Contains(got, "Zx81Kq02LmNp93RsTu47VwXy") {
		t.Errorf("redactURI kept the webhook secret that content redaction removes: %q", got)
	}
}

// TestRedactURIForms: redactURI's exact output, count and rules on each
// URI form it handles, and URIs it must leave byte-identical.
func TestRedactURIForms(t *testing.T) {
	pat := redacttest.PlantedSecrets()[5].Secret // github-pat
	const hook = "https://hooks.slack.com/services/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"
	for _, tc := range []struct {
		uri, want string
		rules     []string // one per removal
	}{
		{"https://alice:pa#ssw0rd-9x@git.example.com/repo.git", "https://alice@git.example.com/repo.git", []string{RuleURIPassword}},
		{"postgres://app:s3cr%t-pw-77@db.example.com/prod", "postgres://app@db.example.com/prod", []string{RuleURIPassword}},
		{"jdbc:postgresql://app:Hunter2-jdbc-pw@db.example.com:5432/prod?ssl=true", "jdbc:postgresql://app@db.example.com:5432/prod?ssl=true", []string{RuleURIPassword}},
		{"//alice:Tr0ub4dor-rel-9x@git.example.com/repo.git", "//alice@git.example.com/repo.git", []string{RuleURIPassword}},
		{"HTTPS://alice:p@ss?w0rd@Host.Example.com/My%20Docs/a b.md#L3", "HTTPS://alice@Host.Example.com/My%20Docs/a b.md#L3", []string{RuleURIPassword}},
		{"https://" + pat + "@github.com/team/repo.git", "https://[REDACTED:github-pat]@github.com/team/repo.git", []string{"github-pat"}},
		{"https://x-access-token:" + pat + "@github.com/team/repo.git", "https://x-access-token@github.com/team/repo.git", []string{RuleURIPassword}},
		{"https://" + pat + ":x-oauth-basic@github.com/r.git", "https://[REDACTED:github-pat]@github.com/r.git", []string{"github-pat", RuleURIPassword}},
		{"https://app.example.com/cb#access_token=" + pat + "&state=x", "https://app.example.com/cb#access_token=[REDACTED:github-pat]&state=x", []string{"github-pat"}},
		{"https://files.example.com/report?api_key=hunter2-key&page=3&lang=en", "https://files.example.com/report?api_key=[REDACTED:password-assignment]&page=3&lang=en", []string{"password-assignment"}},
		{"https://h.example.com/x?password=Tr0ub4dor-9x;v=2&token=" + pat + "#frag", "https://h.example.com/x?password=[REDACTED:password-assignment];v=2&token=[REDACTED:github-pat]#frag", []string{"password-assignment", "github-pat"}},
		{hook, "https://[REDACTED:slack-webhook-url]", []string{"slack-webhook-url"}},
		{hook + "?x=1", "https://[REDACTED:slack-webhook-url]?x=1", []string{"slack-webhook-url"}},
		{"file:///srv/tokens/" + pat + ".txt", "file:///srv/tokens/[REDACTED:github-pat].txt", []string{"github-pat"}},
		{"jdbc:sqlserver://db:1433;user=sa;password=Hunter2!x", "jdbc:sqlserver://db:1433;user=sa;password=[REDACTED:password-assignment]", []string{"password-assignment"}},
		// Clean: byte-identical.
		{"file:///srv/notes/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.md", "", nil},
		{"file:///repo/a.go#L10-L42", "", nil},
		{"https://medium.com/@alice/post-1", "", nil},
		{"https://example.com?time=10:30&mail=a@b.com", "", nil},
		{"mailto:alice@example.com", "", nil},
		{"https://alice@git.example.com/team/repo.git", "", nil},
		{"https://alice:@host.example.com/x", "", nil}, // empty password
		{"https://wiki.example.com/Secret:Recipes/2024", "", nil},
		{"https://docs.example.com/api/auth,token-endpoint/v2", "", nil},
		{"HTTPS://Host.Example.com/My%20Docs/a b.md?page=3&lang=en#Intro", "", nil},
		{"/srv/notes/a.md", "", nil},
		{"", "", nil},
	} {
		want := tc.want
		if tc.rules == nil {
			want = tc.uri
		}
		got, n, rules := URI(tc.uri)
		if got != want || n != len(tc.rules) || !slices.Equal(rules, tc.rules) {
			t.Errorf("URI(%q) = %q, %d, %v; want %q, %d, %v", tc.uri, got, n, rules, want, len(tc.rules), tc.rules)
		}
		forms := URIMatchForms(tc.uri)
		wantForms := []string{tc.uri}
		if tc.rules != nil {
			wantForms = append(wantForms, want)
		}
		if !slices.Equal(forms, wantForms) {
			t.Errorf("URIMatchForms(%q) = %q, want %q", tc.uri, forms, wantForms)
		}
	}
}

// FuzzRedactURI: redactURI never panics; a URI it reports nothing in comes
// back unchanged; a password planted as scheme://user:pw@rest (any of the
// forms: https, scheme-relative, nested jdbc:postgresql, a fuzzed scheme) is
// never in the output; URIs over an alphabet no rule can fire on are
// returned byte-identical.
func FuzzRedactURI(f *testing.F) {
	pat := redacttest.PlantedSecrets()[5].Secret
	f.Add("https://alice:pa#ssw0rd-9x@git.example.com/repo.git", uint8(0), "alice", "pa#ss@w0rd?x", "git.example.com/repo.git", "a/b?c=1#d")
	f.Add("postgres://app:s3cr%t-pw-77@db.example.com/prod", uint8(1), "", "s3cr%t", "db:5432/prod?x=1&y=2", "h@g/1")
	f.Add("jdbc:postgresql://app:Hunter2@db.example.com:5432/prod", uint8(2), "app", "Hunter2", "db@x/y", "")
	f.Add("//alice:pw@h/x", uint8(3), "alice", "pw", "h?q=a@b/x", "%2f;a")
	f.Add("https://"+pat+"@github.com/team/repo.git", uint8(4), pat, pat, "github.com/"+pat, "")
	f.Add("https://app.example.com/cb#access_token="+pat+"&state=x", uint8(5), "u", "p", "", "")
	f.Add("https://files.example.com/report?api_key=hunter2-key&page=3&lang=en", uint8(6), "GIT+SSH", "x", "h", "")
	f.Add("https://hooks.slack.com/services/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", uint8(7), "", "", "", "")
	f.Add("jdbc:sqlserver://db:1433;user=sa;password=Hunter2!x", uint8(0), "", "", "", "")
	f.Add("https://example.com?time=10:30&mail=a@b.com", uint8(0), "", "", "", "")
	const cleanAlphabet = "abcdfgh0123456789./?#&%;"
	var markers strings.Builder
	for _, r := range secretRules {
		markers.WriteString("[REDACTED:" + r.id + "]")
	}
	f.Fuzz(func(t *testing.T, raw string, form uint8, user, pw, rest, clean string) {
		got, n, rules := URI(raw)
		if n == 0 && (got != raw || len(rules) != 0) {
			t.Fatalf("URI(%q) = %q, %d, %v: changed without a redaction", raw, got, n, rules)
		}
		if n > 0 && len(rules) < 1 {
			t.Fatalf("URI(%q): %d redactions without a rule", raw, n)
		}
		if utf8.ValidString(raw) && !utf8.ValidString(got) {
			t.Fatalf("URI(%q) = %q: invalid UTF-8", raw, got)
		}
		if fs := URIMatchForms(raw); fs[0] != raw || len(fs) > 2 || len(fs) == 2 && fs[1] != got {
			t.Fatalf("URIMatchForms(%q) = %q", raw, fs)
		}

		// Planted password. The user name holds none of ":@/?#", the
		// password no '/' (RFC 3986 forbids it unescaped; it ends the
		// authority). The password is framed by 'Q', a byte no marker
		// holds, so an occurrence in the output cannot straddle a marker;
		// inputs where it occurs in the rest of the URI are skipped.
		var prefix string
		switch form % 4 {
		case 0:
			prefix = "https://"
		case 1:
			prefix = "//"
		case 2:
			prefix = "jdbc:postgresql://"
		default:
			sch := strings.Map(func(r rune) rune {
				if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '.' || r == '-') {
					return r
				}
				return -1
			}, user)
			if sch == "" || schemeLen(sch+":") == 0 {
				sch = "git+ssh"
			}
			prefix = sch + "://"
		}
		u := strings.Map(func(r rune) rune {
			if strings.ContainsRune(":@/?#", r) {
				return -1
			}
			return r
		}, user)
		p := "Q" + strings.ReplaceAll(pw, "/", "") + "Q"
		planted := prefix + u + ":" + p + "@" + rest
		if !strings.Contains(prefix+u+"@"+rest, p) && !strings.Contains(p, "[REDACTED:") && !strings.Contains(markers.String(), p) {
			got, n, rules := URI(planted)
			if strings.Contains(got, p) {
				t.Fatalf("URI(%q) = %q: password %q kept", planted, got, p)
			}
			if n < 1 || !slices.Contains(rules, RuleURIPassword) {
				t.Fatalf("URI(%q) = %q, %d, %v: password not counted", planted, got, n, rules)
			}
		}

		// Clean URIs: no rule fires over cleanAlphabet, and there is no
		// password; they come back byte-identical.
		cl := strings.Map(func(r rune) rune { return rune(cleanAlphabet[int(r)%len(cleanAlphabet)]) }, clean)
		for _, c := range []string{"https://h.org/" + cl, "https://" + cl + "@h.org/" + cl, cl} {
			if got, n, _ := URI(c); got != c || n != 0 {
				t.Fatalf("clean URI(%q) = %q, %d", c, got, n)
			}
		}
	})
}
